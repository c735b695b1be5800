package check

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// pauses answers by binary search over each node's paused spans what a
// scan of all of them answered (the quadratic way it replaced): the same
// pieces, with the same paused nodes, for any window, on lanes of
// contiguous spans as buildLanes cuts them, zero-length ones included.
func TestPausesAnswerWhatAScanOfEverySpanAnswers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for round := 0; round < 200; round++ {
		ps := pauses{}
		all := map[election.NodeID][]StateSpan{} // every state span, for the scan
		for _, n := range []election.NodeID{1, 2} {
			ms := 0
			for k := 0; k < 1+r.IntN(30); k++ {
				d := r.IntN(4) * 5 // 0: a span of no length
				s := StateSpan{Node: n, Start: at(ms), End: at(ms + d), State: []Status{Up, Paused, Down}[r.IntN(3)]}
				all[n] = append(all[n], s)
				if s.State == Paused {
					ps[n] = append(ps[n], s)
				}
				ms += d
			}
		}
		scanPausedAt := func(n election.NodeID, x time.Time) bool {
			for _, s := range all[n] {
				if s.State == Paused && !x.Before(s.Start) && x.Before(s.End) {
					return true
				}
			}
			return false
		}
		for q := 0; q < 50; q++ {
			x := at(r.IntN(160))
			for _, n := range []election.NodeID{1, 2} {
				if got, want := ps.pausedAt(n, x), scanPausedAt(n, x); got != want {
					t.Fatalf("round %d: pausedAt(%d, %v) = %v, a scan says %v", round, n, x.Sub(t0), got, want)
				}
			}
			a, b := r.IntN(160), r.IntN(160)
			if a > b {
				a, b = b, a
			}
			start, end := at(a), at(b+1)
			for _, n := range []election.NodeID{1, 2} {
				var want []StateSpan
				for _, s := range ps[n] {
					if s.End.After(start) && s.Start.Before(end) {
						want = append(want, s)
					}
				}
				if got := ps.meeting(n, start, end); !slices.Equal(got, want) {
					t.Fatalf("round %d: meeting(%d, %v, %v) = %v, a scan finds %v", round, n, start.Sub(t0), end.Sub(t0), got, want)
				}
			}
			for _, p := range ps.pieces([2]election.NodeID{1, 2}, start, end) {
				for _, n := range []election.NodeID{1, 2} {
					if slices.Contains(p.paused, n) != scanPausedAt(n, p.start) {
						t.Fatalf("round %d: piece %v–%v names paused %v; a scan says node %d paused: %v", round, p.start.Sub(t0), p.end.Sub(t0), p.paused, n, scanPausedAt(n, p.start))
					}
				}
			}
		}
	}
}
