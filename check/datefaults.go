package check

import (
	"slices"

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
//     if that comes before the ok.
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

	type pending struct {
		op      chaos.Op
		invoked int // index of the invoke record
		act     int // kill: last act after the invoke; resume: first act (-1: none yet)
	}
	open := map[election.NodeID]*pending{}
	// inserts[k] are records to emit right after sorted[k]; moved marks
	// the ok records they replace.
	var inserts map[int][]history.Record
	var moved map[int]bool

	for i, r := range sorted {
		if r.Kind == history.KindFault && r.Fault != nil {
			op := chaos.Op(r.Fault.Op)
			if op != chaos.Kill && op != chaos.Stop && op != chaos.Resume {
				continue
			}
			switch r.Fault.Phase {
			case history.FaultInvoke:
				for _, id := range r.Fault.Nodes {
					open[id] = &pending{op: op, invoked: i, act: -1}
				}
			case history.FaultOK:
				// Where each node's ok belongs; nothing is copied
				// unless one of them moves.
				place := func(id election.NodeID) int {
					at := i // no evidence: leave it where the engine put it
					if p := open[id]; p != nil && p.op == op {
						switch {
						case op == chaos.Resume && p.act >= 0:
							at = p.act - 1 // just before its first act
						case op != chaos.Resume && p.act >= 0:
							at = p.act // just after its last act
						case op != chaos.Resume:
							at = p.invoked // no act after the invoke: gone then
						}
					}
					return at
				}
				split := false
				for _, id := range r.Fault.Nodes {
					if at := place(id); at != i && !stays(sorted, i, at) {
						split = true
					}
				}
				if !split {
					for _, id := range r.Fault.Nodes {
						delete(open, id)
					}
					continue
				}
				var perNode []history.Record
				var after []int
				for _, id := range r.Fault.Nodes {
					at := place(id)
					delete(open, id)
					one := r
					f := *r.Fault
					f.Nodes = []election.NodeID{id}
					one.Fault = &f
					one.Time = sorted[max(at, 0)].Time
					if op == chaos.Resume && at >= 0 && at+1 < len(sorted) {
						one.Time = sorted[at+1].Time // dated by the act it precedes
					}
					perNode = append(perNode, one)
					after = append(after, at)
				}
				if moved == nil {
					moved, inserts = map[int]bool{}, map[int][]history.Record{}
				}
				moved[i] = true
				for k, one := range perNode {
					inserts[after[k]] = append(inserts[after[k]], one)
				}
			}
			continue
		}
		p := open[r.Node]
		if r.Node <= 0 || p == nil || (r.Kind != history.KindSend && r.Kind != history.KindView) {
			continue
		}
		if p.op == chaos.Resume {
			if p.act < 0 {
				p.act = i
			}
		} else {
			p.act = i
		}
	}
	if len(moved) == 0 {
		return sorted
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

// stays reports whether placing the ok record sorted[i] right after
// sorted[at] leaves the history as it is: the record is of one node, at is
// the record just before it, and that has its time. A kill the simulator
// applies is such a case (nothing between its invoke and ok, one instant),
// and copying the whole history for it was 6 % of the explorer's
// allocation.
func stays(sorted []history.Record, i, at int) bool {
	return len(sorted[i].Fault.Nodes) == 1 && at == i-1 && sorted[at].Time.Equal(sorted[i].Time)
}
