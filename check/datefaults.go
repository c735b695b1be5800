package check

import (
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// DateFaults returns recs in time order with the completion (ok) records of
// kills, stops and resumes dated by what the nodes themselves show, rather
// than by when the engine answered.
//
// A container engine confirms a fault some way after it took effect:
// `docker kill` returns a few hundred milliseconds after the process is
// gone, and the survivors, hinted by NATS, may have elected a new leader in
// between; `docker unpause` returns tens of milliseconds after the process
// runs again. Dating the fault by the engine's answer would count a dead
// leader as leading beside its successor, and hide what a thawed leader did
// before the engine answered. So a node is judged by its acts, its sends
// and view changes (not the input lines the runtime writes before the
// machine sees an event):
//
//   - killed or stopped: gone from the kill's invoke, or from its last act
//     after the invoke if it still acted; never later than the ok;
//   - resumed: running again from its first act after the resume's invoke,
//     if that comes before the ok;
//   - resumed, and the engine answered before the node acted: a thawed
//     process is only runnable, and on a loaded machine it may be
//     scheduled some milliseconds after the engine's answer. A node whose
//     runtime writes a line for every message it sends and receives
//     (ringleader's own nodes and programs; not a real server, whose views
//     are polled) is silent until it runs, so its silence after the ok is
//     still the freeze: it runs again from its first act, unless what it
//     writes first is anything but that act (or the input line of the
//     step that made it, the record numbered just before it), which shows
//     it ran without acting; then from the ok, as when it never acts.
//
// A fault that affects several nodes gets one ok record per node. In the
// simulator a fault completes the instant it is invoked, so nothing moves.
func DateFaults(recs []history.Record) []history.Record {
	return dateFaults(recs, true)
}

// dateFaults is DateFaults; with copied false, a history already in order
// in which nothing moves (every simulated one) comes back as recs itself,
// not a copy, for a caller that only reads it (Run).
func dateFaults(recs []history.Record, copied bool) []history.Record {
	sorted := recs
	if copied || !slices.IsSortedFunc(recs, func(a, b history.Record) int { return a.Time.Compare(b.Time) }) {
		sorted = Sorted(recs)
	}
	oks := placeOks(sorted)
	if len(oks) == 0 {
		return sorted
	}
	// inserts[k] are records to emit right after sorted[k]; moved marks
	// the ok records they replace.
	inserts := map[int][]history.Record{}
	moved := map[int]bool{}
	for _, ok := range oks {
		r := sorted[ok.index]
		moved[ok.index] = true
		for k, id := range r.Fault.Nodes {
			at := ok.after[k]
			one := r
			f := *r.Fault
			f.Nodes = []election.NodeID{id}
			one.Fault = &f
			one.Time = ok.when[k]
			inserts[at] = append(inserts[at], one)
		}
	}
	out := make([]history.Record, 0, len(sorted)+len(inserts))
	out = append(out, inserts[-1]...) // a resume whose first act is the first record
	for i, r := range sorted {
		if !moved[i] {
			out = append(out, r)
		}
		out = append(out, inserts[i]...)
	}
	return out
}

// movedOk is an ok record of sorted[index] that DateFaults splits into one
// record per node of its fault: node k's goes right after sorted[after[k]]
// (-1: first of all; index itself: where the engine put it), dated when[k].
type movedOk struct {
	index int
	after []int
	when  []time.Time
}

// place puts node k's ok right after sorted[after], dated when.
func (ok *movedOk) place(k, after int, when time.Time) {
	ok.after[k], ok.when[k] = after, when
}

// pendingFault is a kill, stop or resume of one node whose ok is not
// placed yet.
type pendingFault struct {
	op      chaos.Op
	invoked int // index of the invoke record
	act     int // kill: last act after the invoke; resume: first act (-1: none yet)
	// A resume whose ok came before the node acted: that ok, the node's
	// slot in its fault, and the input line of the step under way
	// (-1: none), while the node's next records decide.
	waiting     *movedOk
	slot, input int
}

// placeOks finds, in time order, every ok record of a kill, stop or resume
// that a node's own records move, and where each node's ok goes.
func placeOks(sorted []history.Record) []*movedOk {
	var oks []*movedOk
	open := map[election.NodeID]*pendingFault{}
	// settle places a waiting resume's ok: just before the act at
	// sorted[act], or where the engine put it (act < 0).
	settle := func(id election.NodeID, p *pendingFault, act int) {
		if act < 0 {
			p.waiting.place(p.slot, p.waiting.index, sorted[p.waiting.index].Time)
		} else {
			p.waiting.place(p.slot, act-1, sorted[act].Time)
		}
		delete(open, id)
	}
	for i, r := range sorted {
		if r.Kind == history.KindFault && r.Fault != nil {
			op := chaos.Op(r.Fault.Op)
			if op != chaos.Kill && op != chaos.Stop && op != chaos.Resume {
				continue
			}
			switch r.Fault.Phase {
			case history.FaultInvoke:
				for _, id := range r.Fault.Nodes {
					if p := open[id]; p != nil && p.waiting != nil {
						settle(id, p, -1) // a new fault: still silent, so from the ok
					}
					open[id] = &pendingFault{op: op, invoked: i, act: -1, input: -1}
				}
			case history.FaultOK:
				if ok := placeOk(sorted, i, open); ok != nil {
					oks = append(oks, ok)
				}
			}
			continue
		}
		if r.Node <= 0 {
			continue
		}
		p := open[r.Node]
		if p == nil {
			continue
		}
		act := r.Kind == history.KindSend || r.Kind == history.KindView
		switch {
		case p.waiting != nil && act:
			if p.input < 0 || (r.Seq == sorted[p.input].Seq+1 && r.Boot == sorted[p.input].Boot) {
				settle(r.Node, p, i) // from its first act
			} else {
				settle(r.Node, p, -1)
			}
		case p.waiting != nil:
			if p.input < 0 && r.Seq > 0 && (r.Kind == history.KindRecv || r.Kind == history.KindDrop) {
				p.input = i // an act numbered next is this step's
			} else {
				settle(r.Node, p, -1) // it ran without acting
			}
		case !act:
		case p.op == chaos.Resume:
			if p.act < 0 {
				p.act = i
			}
		default:
			p.act = i
		}
	}
	return oks
}

// placeOk places each node's part of the ok record sorted[i]. It returns
// nil, allocating nothing, when nothing moves now and nothing waits (every
// simulated kill: the explorer dates faults once per schedule).
func placeOk(sorted []history.Record, i int, open map[election.NodeID]*pendingFault) *movedOk {
	r := sorted[i]
	op := chaos.Op(r.Fault.Op)
	var ok *movedOk
	need := func() {
		if ok == nil {
			n := len(r.Fault.Nodes)
			ok = &movedOk{index: i, after: make([]int, n), when: make([]time.Time, n)}
			for k := range n {
				ok.place(k, i, r.Time) // where the engine put it, until placed
			}
		}
	}
	for k, id := range r.Fault.Nodes {
		p := open[id]
		if p == nil || p.op != op {
			continue // no evidence: where the engine put it
		}
		delete(open, id)
		at, when := i, r.Time
		switch {
		case op == chaos.Resume && p.act >= 0:
			at, when = p.act-1, sorted[p.act].Time // just before its first act
		case op == chaos.Resume && r.Time.After(sorted[p.invoked].Time) && talks(sorted[:p.invoked], id):
			// Silent since the invoke, and the engine's answer took
			// time: its next records decide (at the ok until then).
			need()
			p.waiting, p.slot = ok, k
			open[id] = p
		case op != chaos.Resume && p.act >= 0:
			at, when = p.act, sorted[p.act].Time // just after its last act
		case op != chaos.Resume:
			at, when = p.invoked, sorted[p.invoked].Time // no act after the invoke: gone then
		}
		if at != i && !stays(sorted, i, at) {
			need()
		}
		if ok != nil {
			ok.place(k, at, when)
		}
	}
	return ok
}

// talks reports whether node id sent or received a message in recs: its
// runtime writes a line for every message. Asked only of a resume the
// engine took time to confirm, never in the simulator's hot path.
func talks(recs []history.Record, id election.NodeID) bool {
	for i := len(recs) - 1; i >= 0; i-- {
		if r := &recs[i]; r.Node == id && (r.Kind == history.KindSend || r.Kind == history.KindRecv) {
			return true
		}
	}
	return false
}

// stays reports whether placing the ok record sorted[i] right after
// sorted[at] leaves the history as it is: the record is of one node, at is
// the record just before it, and that has its time. A kill the simulator
// applies is such a case (nothing between its invoke and ok, one instant),
// and copying the whole history for it was 6 % of the explorer's
// allocation.
func stays(sorted []history.Record, i, at int) bool {
	return len(sorted[i].Fault.Nodes) == 1 && at == i-1 && sorted[at].Time.Equal(sorted[i].Time)
}
