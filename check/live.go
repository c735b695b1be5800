package check

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// firstSettled is the first instant in [from, to] at which the cluster is
// settled (Settled), with the leaders of its entitled components.
func firstSettled(t *Timeline, from, to time.Time, q election.QuorumMode) (time.Time, []election.NodeID, bool) {
	var s chaos.State // refilled at each instant: SettledLeaders keeps none of it
	for _, at := range t.Changes(from, to) {
		t.fill(t.snapAt(at), &s)
		if l, ok := SettledLeaders(s, t.Members, q); ok {
			return at, l, true
		}
	}
	return time.Time{}, nil, false
}

// LivenessEvidence is the evidence of liveness.
type LivenessEvidence struct {
	LastFault   string            `json:"last_fault,omitempty"` // its label; empty when the run had none
	From        time.Time         `json:"from"`                 // the last fault's effect, or the history's start
	FromOffset  string            `json:"from_offset"`
	Bound       time.Duration     `json:"bound"`
	Reached     bool              `json:"reached"`
	At          time.Time         `json:"at,omitempty"`
	Took        time.Duration     `json:"took,omitempty"`
	TookMillis  float64           `json:"took_ms,omitempty"`
	Leaders     []election.NodeID `json:"leaders,omitempty"`
	HistoryLeft time.Duration     `json:"history_left"` // from From to the history's end
}

// checkLiveness: after the last fault (a heal included), every live node
// views one live leader within the bound. With a partition still in force,
// each component entitled to a leader must agree on its own.
func checkLiveness(t *Timeline, _ []history.Record, opts Options) Verdict {
	bound := opts.LivenessBound
	if bound <= 0 {
		bound = DefaultLivenessBound(opts.Timing)
	}
	ev := LivenessEvidence{From: t.Start, Bound: bound}
	for _, f := range t.Faults {
		if at := f.At(); !at.Before(ev.From) {
			ev.From, ev.LastFault = at, f.Label
		}
	}
	ev.FromOffset = rel(t, ev.From)
	ev.HistoryLeft = t.End.Sub(ev.From)
	at, leaders, ok := firstSettled(t, ev.From, t.End, opts.Quorum)
	since := "the start"
	if ev.LastFault != "" {
		since = fmt.Sprintf("the last fault (%s at %s)", ev.LastFault, ev.FromOffset)
	}
	v := Verdict{Checker: Liveness, Evidence: Evidence{Liveness: &ev}}
	if !ok {
		v.Summary = fmt.Sprintf("no leader agreed by every live node in the %s between %s and the end of the history (bound %s)", millis.Of(ev.HistoryLeft), since, millis.Of(bound))
		return v
	}
	ev.Reached, ev.At, ev.Leaders = true, at, leaders
	ev.Took = at.Sub(ev.From)
	ev.TookMillis = ms(ev.Took)
	v.Pass = ev.Took <= bound
	rel := "within"
	if !v.Pass {
		rel = "beyond"
	}
	v.Summary = fmt.Sprintf("leader %s agreed %s after %s, %s the bound %s", idList(leaders), millis.Of(ev.Took), since, rel, millis.Of(bound))
	return v
}

// Failover is one fault that took the leader away from a majority — a
// kill, stop or pause of the leader, or a partition that left the leader's
// component without a majority of the membership — and how long the
// cluster took to settle again.
type Failover struct {
	Op        string            `json:"op"`
	Label     string            `json:"label"`
	Leader    election.NodeID   `json:"leader"`  // the leader the fault took away
	Invoked   time.Time         `json:"invoked"` // the fault's invoke record
	From      time.Time         `json:"from"`    // its ok record (the invoke when there is none)
	Recovered bool              `json:"recovered"`
	At        time.Time         `json:"at,omitempty"`
	NewLeader []election.NodeID `json:"new_leader,omitempty"`
	Duration  time.Duration     `json:"duration,omitempty"`
	Millis    float64           `json:"ms,omitempty"`
	// Note explains a failover that did not recover: the next fault came
	// first, or the history ended.
	Note string `json:"note,omitempty"`
}

// MarshalJSON writes an unrecovered failover's at, ms and duration as
// null, next to "recovered": false, rather than a zero time and no length
// that read like an instant recovery. Reading the JSON back needs nothing
// special: null leaves the zero values.
func (f Failover) MarshalJSON() ([]byte, error) {
	type plain Failover // without this method
	out := struct {
		plain
		At       *time.Time     `json:"at"`
		Duration *time.Duration `json:"duration"`
		Millis   *float64       `json:"ms"`
	}{plain: plain(f)}
	if f.Recovered {
		out.At, out.Duration, out.Millis = &f.At, &f.Duration, &f.Millis
	}
	return json.Marshal(out)
}

// Failovers measures, for every fault that took the leader away from a
// majority, the time from the fault taking effect to the first instant the
// cluster is settled again (Settled: every component entitled to a leader
// agrees on a live leader of its own, and with a quorum a minority views
// none). A settled component's leader is one of its live nodes, so the old
// leader, dead, frozen or cut off from the majority, cannot be it. The
// search stops at the next fault's invoke: what happens after that is no
// longer this fault's failover.
func Failovers(recs []history.Record, opts Options) []Failover {
	t := NewTimeline(recs, opts.Members)
	return FailoversOf(t, opts.Quorum)
}

// FailoversOf is Failovers over an existing timeline.
func FailoversOf(t *Timeline, q election.QuorumMode) []Failover {
	var out []Failover
	for i, f := range t.Faults {
		if f.Failed || f.Applied.IsZero() || chaos.Unmeasured(f.Note) {
			continue // a fault that changed nothing, or was in force before the history began, takes no leader away
		}
		leader := tookLeader(t, f)
		if leader == election.None {
			continue
		}
		fo := Failover{Op: f.Op, Label: f.Label, Leader: leader, Invoked: f.Invoked, From: f.At()}
		settleAfter(t, i, &fo, func(s chaos.State) ([]election.NodeID, bool) {
			return SettledLeaders(s, t.Members, q)
		})
		out = append(out, fo)
	}
	return out
}

// settleAfter finds the first instant from fo.From at which settled holds,
// searching up to the next fault's invoke (what happens after that is no
// longer fault i's doing; a no-op fault changes nothing and does not
// count), and fills fo's outcome.
func settleAfter(t *Timeline, i int, fo *Failover, settled func(chaos.State) ([]election.NodeID, bool)) {
	limit, why := t.End, "the history ended first"
	for _, g := range t.Faults[i+1:] {
		if g.Invoked.After(fo.From) && !chaos.Unmeasured(g.Note) {
			limit, why = g.Invoked, fmt.Sprintf("the next fault (%s) came first", g.Label)
			break
		}
	}
	for _, at := range t.Changes(fo.From, limit) {
		if leaders, ok := settled(t.StateAt(at)); ok && (at.Before(limit) || limit.Equal(t.End)) {
			fo.Recovered, fo.At, fo.NewLeader = true, at, leaders
			fo.Duration = at.Sub(fo.From)
			fo.Millis = ms(fo.Duration)
			return
		}
	}
	fo.Note = "no new leader agreed before " + why
}

// tookLeader returns the leader fault f took away from a majority, or None.
// Before the fault: the target that led (kill, stop, pause), or the leader
// most live nodes viewed (partition). After it: that leader is no longer
// live, or its component no longer holds a majority of the membership.
func tookLeader(t *Timeline, f FaultSpan) election.NodeID {
	before := t.StateAt(f.Invoked)
	var leader election.NodeID
	switch chaos.Op(f.Op) {
	case chaos.Kill, chaos.Stop, chaos.Pause:
		leader = leaderAmong(before, t.Members, changed(f, t.CheckpointState(f.Invoked), t.Members))
	case chaos.Partition:
		leader = before.CommonLeader(t.Members)
	}
	if leader == election.None {
		return election.None
	}
	after := t.StateAt(f.At())
	if !after.Live(leader) {
		return leader
	}
	for _, c := range Components(after, t.Members) {
		if slices.Contains(c.Nodes, leader) && len(c.Nodes) < majority(t.Members) {
			return leader
		}
	}
	return election.None
}

// changed are the targets of a kill, stop or pause that it changed: the
// ones chaos.Decide did not leave alone as already so (a leader killed
// again while down, whom live nodes may still view as leader, is not taken
// away twice). before is the state just before the fault: in the
// simulator its invoke and ok records share an instant, which StateAt
// would show applied. The targets as recorded when the state cannot say.
func changed(f FaultSpan, before chaos.State, members []election.NodeID) []election.NodeID {
	out, err := chaos.Decide(chaos.Fault{Op: chaos.Op(f.Op), Nodes: f.Nodes}, before, members)
	if err != nil {
		return f.Nodes
	}
	return out.Fault.Nodes
}

// leaderAmong returns the target that led at s: one that viewed itself as
// leader, else the one most live nodes viewed as leader; 0 when no target
// led.
func leaderAmong(s chaos.State, members, targets []election.NodeID) election.NodeID {
	for _, n := range targets {
		if s.Up[n] && s.Views[n].Role == election.Leader {
			return n
		}
	}
	best := s.CommonLeader(members)
	if slices.Contains(targets, best) {
		return best
	}
	return 0
}

// FailoverStats summarises the recovered failovers: how many, and the
// nearest-rank 50th and 95th percentiles and the maximum of their durations.
type FailoverStats struct {
	N           int           `json:"n"`
	Unrecovered int           `json:"unrecovered"`
	P50         time.Duration `json:"p50"`
	P95         time.Duration `json:"p95"`
	Max         time.Duration `json:"max"`
}

// Stats computes FailoverStats.
func Stats(fs []Failover) FailoverStats {
	var ds []time.Duration
	var st FailoverStats
	for _, f := range fs {
		if f.Recovered {
			ds = append(ds, f.Duration)
		} else {
			st.Unrecovered++
		}
	}
	st.N = len(ds)
	if len(ds) == 0 {
		return st
	}
	slices.Sort(ds)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p/100*float64(len(ds)))) - 1
		return ds[max(i, 0)]
	}
	st.P50, st.P95, st.Max = rank(50), rank(95), ds[len(ds)-1]
	return st
}

// Election is one stretch of election traffic: from the moment the cluster
// stopped being settled (or the history's start) to the moment it next
// stopped being settled, with the sends in between. Sends made while
// settled (stragglers) count for the election that just settled.
type Election struct {
	Start      time.Time         `json:"start"`
	Offset     string            `json:"offset"`
	Agreed     time.Time         `json:"agreed,omitempty"` // zero: never settled
	Leaders    []election.NodeID `json:"leaders,omitempty"`
	Election   int               `json:"election"`
	Announce   int               `json:"announce"`
	ByType     map[string]int    `json:"by_type"`
	Unfinished bool              `json:"unfinished,omitempty"`
}

// Counts are message totals by type and class. Sends are weighted (see
// sendWeight); receives are counted as recorded, one per delivery, so the
// difference is what cuts, loss and dead recipients swallowed.
type Counts struct {
	ByType      map[string]int `json:"by_type"`
	Election    int            `json:"election"`
	Announce    int            `json:"announce"`
	Maintenance int            `json:"maintenance"`
	Total       int            `json:"total"`
	// ReceivedByType and Received count recv records.
	ReceivedByType map[string]int `json:"received_by_type,omitempty"`
	Received       int            `json:"received,omitempty"`
}

// sendWeight is how many messages a send record stands for: a broadcast
// logged once with no recipient is n−1 messages.
func sendWeight(r history.Record, n int) int {
	if r.Msg.To == 0 {
		return max(n-1, 0)
	}
	return 1
}

// CountMessages counts every send record by type and class, and every
// recv record by type.
func CountMessages(recs []history.Record, a election.Algorithm, members []election.NodeID) Counts {
	c := Counts{ByType: map[string]int{}, ReceivedByType: map[string]int{}}
	for _, r := range recs {
		if r.Msg == nil {
			continue
		}
		if r.Kind == history.KindRecv {
			c.ReceivedByType[r.Msg.Type]++
			c.Received++
		}
		if r.Kind != history.KindSend {
			continue
		}
		w := sendWeight(r, len(members))
		c.ByType[r.Msg.Type] += w
		c.Total += w
		switch {
		case a.IsElection(r.Msg.Type):
			c.Election += w
		case a.IsAnnounce(r.Msg.Type):
			c.Announce += w
		default:
			c.Maintenance += w
		}
	}
	return c
}

// settledStretch is a stretch of the timeline during which the cluster
// stayed settled on the same leaders.
type settledStretch struct {
	start, end time.Time
	leaders    []election.NodeID
}

// settledStretches lists the settled stretches of t, in time order, from
// its snapshots; only the last state of an instant lasts.
func settledStretches(t *Timeline, q election.QuorumMode) []settledStretch {
	var out []settledStretch
	for i, sn := range t.snaps {
		end := t.End
		if i+1 < len(t.snaps) {
			end = t.snaps[i+1].at
			if end.Equal(sn.at) {
				continue
			}
		}
		l, ok := SettledLeaders(t.state(i), t.Members, q)
		switch {
		case ok && len(out) > 0 && out[len(out)-1].end.Equal(sn.at) && slices.Equal(out[len(out)-1].leaders, l):
			out[len(out)-1].end = end
		case ok:
			out = append(out, settledStretch{sn.at, end, l})
		}
	}
	return out
}

// Elections segments the history into elections (see Election): every
// stretch from the cluster leaving a settled state to settling again, with
// the election and announce messages sent in it.
func Elections(t *Timeline, recs []history.Record, a election.Algorithm, q election.QuorumMode) []Election {
	stable := settledStretches(t, q)
	var out []Election
	segStart := t.Start
	var segs []Election
	for _, s := range stable {
		segs = append(segs, Election{Start: segStart, Agreed: s.start, Leaders: s.leaders})
		segStart = s.end
	}
	if len(stable) == 0 || stable[len(stable)-1].end.Before(t.End) {
		segs = append(segs, Election{Start: segStart, Unfinished: true})
	}
	// Segment i spans [segs[i].Start, segs[i+1].Start); the last one runs
	// to the end inclusive.
	i := 0
	for k := range segs {
		segs[k].ByType = map[string]int{}
		segs[k].Offset = rel(t, segs[k].Start)
	}
	for _, r := range recs {
		if r.Kind != history.KindSend || r.Msg == nil {
			continue
		}
		el, an := a.IsElection(r.Msg.Type), a.IsAnnounce(r.Msg.Type)
		if !el && !an {
			continue
		}
		for i+1 < len(segs) && !r.Time.Before(segs[i+1].Start) {
			i++
		}
		w := sendWeight(r, len(t.Members))
		segs[i].ByType[r.Msg.Type] += w
		if el {
			segs[i].Election += w
		} else {
			segs[i].Announce += w
		}
	}
	// Every stretch that ended in agreement is an election, sent
	// messages or not: after a heal the minority may simply adopt the
	// leader whose heartbeats it hears again. An unfinished stretch
	// counts when it sent something.
	for _, s := range segs {
		if s.Election+s.Announce > 0 || !s.Agreed.IsZero() {
			out = append(out, s)
		}
	}
	return out
}

// ComplexityEvidence is the evidence of message-complexity.
type ComplexityEvidence struct {
	Counts    Counts     `json:"counts"`
	Elections []Election `json:"elections"`
	// The first election, compared with the formula when it was fault-free.
	Formula  *election.Formula `json:"formula,omitempty"`
	First    int               `json:"first_election_messages"`
	Compared bool              `json:"compared"`
	Note     string            `json:"note,omitempty"`
}

// checkMessageComplexity counts election and announce messages, segments
// them into elections and, when the first election ran without a fault,
// compares its election messages with the algorithm's formula: equal when
// the formula is exact, at most when it is a bound. The first election's
// messages are those sent before the first fault and before the cluster
// first stopped being settled, so that stragglers sent after every node
// agreed still count.
func checkMessageComplexity(t *Timeline, recs []history.Record, opts Options) Verdict {
	a := opts.Algorithm
	ev := &ComplexityEvidence{
		Counts:    CountMessages(recs, a, t.Members),
		Elections: Elections(t, recs, a, opts.Quorum),
	}
	v := Verdict{Checker: MessageComplexity, Evidence: Evidence{Complexity: ev}, Pass: true}
	if ev.Counts.Total == 0 {
		v.Pass = false
		v.Summary = "the history has no send records: nothing to count (was message logging off?)"
		return v
	}
	counts := fmt.Sprintf("%d election, %d announce, %d maintenance message(s)", ev.Counts.Election, ev.Counts.Announce, ev.Counts.Maintenance)
	if a.Formula == nil {
		v.Summary = counts + "; the algorithm publishes no formula"
		return v
	}
	f := a.Formula(t.Members)
	ev.Formula = &f
	firstFault := t.End.Add(time.Nanosecond)
	for _, fs := range t.Faults {
		if fs.Invoked.Before(firstFault) {
			firstFault = fs.Invoked
		}
	}
	agreedAt, _, ok := firstSettled(t, t.Start, t.End, opts.Quorum)
	if !ok || !agreedAt.Before(firstFault) {
		ev.Note = "the first election did not settle before the first fault; formula not compared"
		v.Summary = counts + "; " + ev.Note
		return v
	}
	cutoff := firstFault
	for _, at := range t.Changes(agreedAt, t.End)[1:] {
		if !Settled(t.StateAt(at), t.Members, opts.Quorum) {
			cutoff = earlierOf(cutoff, at)
			break
		}
	}
	for _, r := range recs {
		if r.Kind == history.KindSend && r.Msg != nil && r.Time.Before(cutoff) && a.IsElection(r.Msg.Type) {
			ev.First += sendWeight(r, len(t.Members))
		}
	}
	ev.Compared = true
	rel := "="
	if f.Exact {
		v.Pass = math.Abs(float64(ev.First)-f.Value) < 1e-9
		if !v.Pass {
			rel = "≠"
		}
	} else {
		v.Pass = float64(ev.First) <= f.Value+1e-9
		rel = "≤"
		if !v.Pass {
			rel = ">"
		}
	}
	kind := "exact"
	if !f.Exact {
		kind = "bound"
	}
	v.Summary = fmt.Sprintf("first election: %d election message(s) %s %s (%s: %s); %s in all",
		ev.First, rel, trimFloat(f.Value), kind, strings.TrimSpace(f.Name), counts)
	return v
}

func trimFloat(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.2f", x)
}
