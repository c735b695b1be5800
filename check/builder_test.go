package check

import (
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// hist builds a history by hand; times are milliseconds from SimOrigin.
type hist struct{ recs []history.Record }

func at(ms int) time.Time { return history.SimOrigin.Add(time.Duration(ms) * time.Millisecond) }

func (h *hist) add(r history.Record) *hist { h.recs = append(h.recs, r); return h }

func (h *hist) view(ms int, node, leader election.NodeID, epoch uint64, role election.Role) *hist {
	return h.add(history.Record{Time: at(ms), Process: "node", Kind: history.KindView, Node: node,
		View: &election.View{Leader: leader, Epoch: epoch, Role: role}})
}

// lead: node views itself as leader.
func (h *hist) lead(ms int, node election.NodeID, epoch uint64) *hist {
	return h.view(ms, node, node, epoch, election.Leader)
}

// follow: each node views leader as its leader.
func (h *hist) follow(ms int, leader election.NodeID, epoch uint64, nodes ...election.NodeID) *hist {
	for _, n := range nodes {
		h.view(ms, n, leader, epoch, election.Follower)
	}
	return h
}

func (h *hist) undecided(ms int, nodes ...election.NodeID) *hist {
	for _, n := range nodes {
		h.view(ms, n, 0, 0, election.Undecided)
	}
	return h
}

func (h *hist) fault(ms int, op string, phase history.FaultPhase, f history.Fault) *hist {
	f.Op, f.Phase = op, phase
	return h.add(history.Record{Time: at(ms), Process: history.NemesisProcess, Kind: history.KindFault, Fault: &f})
}

// nodeFault records invoke at inv and ok at ok.
func (h *hist) nodeFault(inv, ok int, op string, nodes ...election.NodeID) *hist {
	h.fault(inv, op, history.FaultInvoke, history.Fault{Nodes: nodes})
	return h.fault(ok, op, history.FaultOK, history.Fault{Nodes: nodes})
}

func (h *hist) partition(inv, ok int, groups ...[]election.NodeID) *hist {
	h.fault(inv, "partition", history.FaultInvoke, history.Fault{Groups: groups})
	return h.fault(ok, "partition", history.FaultOK, history.Fault{Groups: groups})
}

func (h *hist) heal(inv, ok int) *hist {
	h.fault(inv, "heal", history.FaultInvoke, history.Fault{})
	return h.fault(ok, "heal", history.FaultOK, history.Fault{})
}

func (h *hist) send(ms int, from, to election.NodeID, typ string) *hist {
	return h.add(history.Record{Time: at(ms), Process: "node", Kind: history.KindSend, Node: from,
		Msg: &election.Message{Type: typ, From: from, To: to}})
}

func (h *hist) boot(ms int, node election.NodeID, boot string) *hist {
	return h.add(history.Record{Time: at(ms), Process: "node", Kind: history.KindBoot, Node: node, Boot: boot, Seq: 1})
}

// stableFive: nodes 1..5 settle on 5 at 100 ms.
func stableFive() *hist {
	h := &hist{}
	h.undecided(0, election.FirstIDs(5)...)
	h.lead(100, 5, 1)
	return h.follow(100, 5, 1, 1, 2, 3, 4)
}
