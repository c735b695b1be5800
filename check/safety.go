package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// LeaderInterval is a stretch during which one node held role=leader. It
// ends when the node's view changes, when the node is killed or stopped, or
// at the end of the history (Open). A pause does not end it: a frozen leader
// still believes it leads. Whether that belief counts as split brain is
// decided per overlap (see Overlaps): a frozen process cannot act on it.
type LeaderInterval struct {
	Node  election.NodeID `json:"node"`
	Start time.Time       `json:"start"`
	End   time.Time       `json:"end"`
	// Epochs the node led in during the interval, in order.
	Epochs []uint64 `json:"epochs"`
	Open   bool     `json:"open,omitempty"`
}

// LeaderIntervals returns every node's leader intervals, sorted by start.
// Consecutive leader views of one node (a new epoch) form one interval.
func LeaderIntervals(t *Timeline) []LeaderInterval {
	var out []LeaderInterval
	for _, lane := range t.Lanes {
		var cur *LeaderInterval
		for _, v := range lane.Views {
			if v.View.Role != election.Leader {
				continue
			}
			if cur != nil && cur.End.Equal(v.Start) {
				cur.End = v.End
				if cur.Epochs[len(cur.Epochs)-1] != v.View.Epoch {
					cur.Epochs = append(cur.Epochs, v.View.Epoch)
				}
				continue
			}
			if cur != nil {
				out = append(out, *cur)
			}
			cur = &LeaderInterval{Node: lane.Node, Start: v.Start, End: v.End, Epochs: []uint64{v.View.Epoch}}
		}
		if cur != nil {
			out = append(out, *cur)
		}
	}
	end := t.StateAt(t.End)
	for i := range out {
		out[i].Open = out[i].End.Equal(t.End) && livenessOf(end, out[i].Node) != Down
	}
	slices.SortStableFunc(out, func(a, b LeaderInterval) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return out
}

// Overlap is an instant range during which two nodes both held role=leader.
// Overlaps returns the stretches where both could act on that belief (split
// brain); StaleOverlaps the stretches where one of them was frozen.
type Overlap struct {
	Nodes    [2]election.NodeID `json:"nodes"`
	Start    time.Time          `json:"start"`
	End      time.Time          `json:"end"`
	Offset   string             `json:"offset"` // Start from the history's start
	Duration time.Duration      `json:"duration"`
	Millis   float64            `json:"ms"`
	// Paused lists the nodes of the pair that were paused throughout the
	// overlap: a stale leader, frozen, that did not know it was replaced.
	// Only stale overlaps have it.
	Paused []election.NodeID `json:"paused,omitempty"`
	// Open: still overlapping when the history ends.
	Open bool `json:"open,omitempty"`
}

// SplitBrainEvidence is the evidence of no-split-brain.
type SplitBrainEvidence struct {
	LeaderIntervals []LeaderInterval `json:"leader_intervals"`
	// Overlaps are split brain: two leaders that could both act.
	Overlaps []Overlap `json:"overlaps"`
	// StaleOverlaps are stretches where a frozen (paused) leader still
	// believed it led while another node led. A frozen process sends
	// nothing, so this is not split brain; what matters is what the stale
	// leader does when it thaws, which Overlaps then shows.
	StaleOverlaps []Overlap `json:"stale_overlaps,omitempty"`
	StaleMillis   float64   `json:"stale_ms,omitempty"`
	// PairTotal sums the pairwise overlaps; Total is the time during which
	// two or more nodes led (three leaders at once count once).
	PairTotal       time.Duration `json:"pair_total"`
	Total           time.Duration `json:"total"`
	TotalMillis     float64       `json:"total_ms"`
	PairTotalMillis float64       `json:"pair_total_ms"`
}

// Overlaps returns every stretch during which two nodes both held
// role=leader while neither was paused (split brain), sorted by start.
// Touching intervals (one ends at the instant the other starts) do not
// overlap.
func Overlaps(t *Timeline, ivs []LeaderInterval) []Overlap {
	acting, _ := splitOverlaps(t, ivs)
	return acting
}

// StaleOverlaps returns the stretches during which two nodes both held
// role=leader while one of them was paused.
func StaleOverlaps(t *Timeline, ivs []LeaderInterval) []Overlap {
	_, stale := splitOverlaps(t, ivs)
	return stale
}

// splitOverlaps finds every pairwise overlap of leader intervals and cuts it
// at the pair's pause boundaries into acting and stale pieces.
func splitOverlaps(t *Timeline, ivs []LeaderInterval) (acting, stale []Overlap) {
	ps := pausesOf(t)
	for i, a := range ivs {
		for _, b := range ivs[i+1:] {
			if !b.Start.Before(a.End) {
				break // sorted by start: no later interval can overlap a
			}
			if a.Node == b.Node {
				continue
			}
			start, end := laterOf(a.Start, b.Start), earlierOf(a.End, b.End)
			if !end.After(start) {
				continue
			}
			pair := [2]election.NodeID{a.Node, b.Node}
			if pair[0] > pair[1] {
				pair[0], pair[1] = pair[1], pair[0]
			}
			open := a.Open && b.Open && end.Equal(t.End)
			for _, piece := range ps.pieces(pair, start, end) {
				o := Overlap{Nodes: pair, Start: piece.start, End: piece.end, Offset: rel(t, piece.start),
					Duration: piece.end.Sub(piece.start), Open: open && piece.end.Equal(end), Paused: piece.paused}
				o.Millis = ms(o.Duration)
				if len(o.Paused) == 0 {
					acting = append(acting, o)
				} else {
					stale = append(stale, o)
				}
			}
		}
	}
	byStart := func(a, b Overlap) int { return a.Start.Compare(b.Start) }
	slices.SortStableFunc(acting, byStart)
	slices.SortStableFunc(stale, byStart)
	return acting, stale
}

type piece struct {
	start, end time.Time
	paused     []election.NodeID
}

// pauses are each node's paused spans in time order (a lane's states are
// contiguous and in order), found once for all the overlaps a judgement
// cuts: a schedule with thousands of faults has thousands of overlaps,
// and finding the spans anew for each, and again for each piece, was
// quadratic (30,000 faults: 1.5 GB allocated).
type pauses map[election.NodeID][]StateSpan

func pausesOf(t *Timeline) pauses {
	ps := pauses{}
	for i := range t.Lanes {
		l := &t.Lanes[i]
		for _, s := range l.States {
			if s.State == Paused {
				ps[l.Node] = append(ps[l.Node], s)
			}
		}
	}
	return ps
}

// meeting are n's paused spans that end after start and begin before
// end: the only ones that can cut [start, end) or hold a piece of it.
func (ps pauses) meeting(n election.NodeID, start, end time.Time) []StateSpan {
	spans := ps[n]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].End.After(start) })
	j := i
	for j < len(spans) && spans[j].Start.Before(end) {
		j++
	}
	return spans[i:j]
}

// pausedAt reports whether n is paused at the instant at.
func (ps pauses) pausedAt(n election.NodeID, at time.Time) bool {
	spans := ps[n]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].End.After(at) })
	return i < len(spans) && !at.Before(spans[i].Start)
}

// pieces cuts [start, end) wherever either node of pair is paused or
// resumed, and names the paused nodes of each piece.
func (ps pauses) pieces(pair [2]election.NodeID, start, end time.Time) []piece {
	cuts := []time.Time{start, end}
	for _, n := range pair {
		for _, s := range ps.meeting(n, start, end) {
			for _, c := range []time.Time{s.Start, s.End} {
				if c.After(start) && c.Before(end) {
					cuts = append(cuts, c)
				}
			}
		}
	}
	slices.SortFunc(cuts, func(a, b time.Time) int { return a.Compare(b) })
	cuts = slices.CompactFunc(cuts, func(a, b time.Time) bool { return a.Equal(b) })
	var out []piece
	for i := 0; i+1 < len(cuts); i++ {
		p := piece{start: cuts[i], end: cuts[i+1]}
		for _, n := range pair {
			if ps.pausedAt(n, p.start) {
				p.paused = append(p.paused, n)
			}
		}
		// Merge with the previous piece when nothing changed.
		if k := len(out) - 1; k >= 0 && out[k].end.Equal(p.start) && slices.Equal(out[k].paused, p.paused) {
			out[k].end = p.end
			continue
		}
		out = append(out, p)
	}
	return out
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// unionLength is the length of the union of the overlaps.
func unionLength(os []Overlap) time.Duration {
	var total time.Duration
	var curStart, curEnd time.Time
	open := false
	for _, o := range os { // sorted by start
		if open && !o.Start.After(curEnd) {
			if o.End.After(curEnd) {
				curEnd = o.End
			}
			continue
		}
		if open {
			total += curEnd.Sub(curStart)
		}
		curStart, curEnd, open = o.Start, o.End, true
	}
	if open {
		total += curEnd.Sub(curStart)
	}
	return total
}

// checkNoSplitBrain: no two nodes hold role=leader at overlapping instants.
// Every overlap is reported with its pair, start, end and length.
func checkNoSplitBrain(t *Timeline, _ []history.Record, _ Options) Verdict {
	ivs := LeaderIntervals(t)
	acting, stale := splitOverlaps(t, ivs)
	ev := SplitBrainEvidence{LeaderIntervals: ivs, Overlaps: acting, StaleOverlaps: stale}
	for _, o := range ev.Overlaps {
		ev.PairTotal += o.Duration
	}
	ev.StaleMillis = ms(unionLength(stale))
	ev.Total = unionLength(ev.Overlaps)
	ev.TotalMillis, ev.PairTotalMillis = ms(ev.Total), ms(ev.PairTotal)
	v := Verdict{Checker: NoSplitBrain, Evidence: Evidence{SplitBrain: &ev}, Pass: len(ev.Overlaps) == 0}
	staleNote := ""
	if len(stale) > 0 {
		staleNote = fmt.Sprintf("; a paused (frozen) stale leader believed it led beside another for %s, not counted: it could not act", millis.Of(unionLength(stale)))
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("%d leader interval(s), never two acting leaders at once%s", len(ivs), staleNote)
		return v
	}
	o := ev.Overlaps[0]
	v.Summary = fmt.Sprintf("%d overlap(s), two or more leaders for %s in total; first: nodes %d and %d both leaders from %s for %s%s",
		len(ev.Overlaps), millis.Of(ev.Total), o.Nodes[0], o.Nodes[1], o.Offset, millis.Of(o.Duration), staleNote)
	return v
}

// EpochLeaders is one epoch and every node that led in it.
type EpochLeaders struct {
	Epoch uint64            `json:"epoch"`
	Nodes []election.NodeID `json:"nodes"`
	// First is when each node first led in the epoch.
	First map[election.NodeID]time.Time `json:"first"`
}

// EpochEvidence is the evidence of epoch-safety.
type EpochEvidence struct {
	Epochs     []EpochLeaders `json:"epochs"`
	Violations []EpochLeaders `json:"violations,omitempty"`
}

// checkEpochSafety: at most one distinct node holds role=leader per epoch.
// Epoch 0 is an epoch like any other: an algorithm that claims epoch safety
// and never numbers its epochs fails as soon as a second node leads.
func checkEpochSafety(t *Timeline, _ []history.Record, _ Options) Verdict {
	byEpoch := map[uint64]*EpochLeaders{}
	for _, lane := range t.Lanes {
		for _, v := range lane.Views {
			if v.View.Role != election.Leader {
				continue
			}
			e := byEpoch[v.View.Epoch]
			if e == nil {
				e = &EpochLeaders{Epoch: v.View.Epoch, First: map[election.NodeID]time.Time{}}
				byEpoch[v.View.Epoch] = e
			}
			if _, seen := e.First[lane.Node]; !seen {
				e.Nodes = append(e.Nodes, lane.Node)
				e.First[lane.Node] = v.Start
			}
		}
	}
	var ev EpochEvidence
	for _, e := range byEpoch {
		slices.Sort(e.Nodes)
		ev.Epochs = append(ev.Epochs, *e)
	}
	sort.Slice(ev.Epochs, func(i, j int) bool { return ev.Epochs[i].Epoch < ev.Epochs[j].Epoch })
	for _, e := range ev.Epochs {
		if len(e.Nodes) > 1 {
			ev.Violations = append(ev.Violations, e)
		}
	}
	v := Verdict{Checker: EpochSafety, Evidence: Evidence{Epochs: &ev}, Pass: len(ev.Violations) == 0}
	if v.Pass {
		v.Summary = fmt.Sprintf("%d epoch(s) with a leader, one leader each", len(ev.Epochs))
		return v
	}
	e := ev.Violations[0]
	v.Summary = fmt.Sprintf("%d epoch(s) with more than one leader; epoch %d was led by nodes %s", len(ev.Violations), e.Epoch, idList(e.Nodes))
	return v
}
