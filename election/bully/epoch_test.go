package bully

import (
	"math"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

func TestEpochArithmeticNeverWraps(t *testing.T) {
	for _, c := range []struct{ e, want uint64 }{
		{0, 1}, {41, 42}, {election.MaxEpoch - 1, election.MaxEpoch}, {election.MaxEpoch, election.MaxEpoch}, {math.MaxUint64, math.MaxUint64},
	} {
		if got := election.NextEpoch(c.e); got != c.want {
			t.Errorf("election.NextEpoch(%d) = %d, want %d", c.e, got, c.want)
		}
	}
	// A forged HEARTBEAT with the largest epoch there is, from a lower
	// node. A plain leader bullies it "in the next epoch", which must not
	// be 0; a majority node would campaign for the next epoch, and must
	// neither propose 0 nor ask for votes in an epoch it cannot take.
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		w := newNet(t, 3, q)
		w.start()
		w.run(time.Second)
		w.resetCounts()
		w.step(3, claim(TypeHeartbeat, 1, math.MaxUint64, 1))
		w.run(2 * time.Second)
		proposals := 0
		for _, m := range w.sent {
			if m.From != 3 {
				continue
			}
			switch {
			case q == election.NoQuorum && m.Epoch != math.MaxUint64:
				t.Fatalf("plain: after an epoch of 2^64−1, node 3 sent %s in epoch %d: the epoch wrapped", m.Type, m.Epoch)
			case m.Type == TypePrevote:
				proposals++
				if m.Epoch != math.MaxUint64 {
					t.Fatalf("majority: after an epoch of 2^64−1, node 3 proposed epoch %d", m.Epoch)
				}
			case m.Type == TypeElection && m.To < 3:
				t.Fatalf("majority: node 3 asked for votes in epoch %d with the epochs used up", m.Epoch)
			}
		}
		if q == election.Majority && proposals == 0 {
			t.Fatalf("majority: node 3 never campaigned after the forged heartbeat; sent %v", w.sent)
		}
	}
}
