// Package rules turns the world model's network faults into what every
// node's network namespace should hold, and back. It is the pure part of a
// backend that carries network faults out with netfilter: from a
// chaos.State and the members' addresses it computes each namespace's
// netfilter.Rules (Want), the rounds that bring the namespaces from what
// they hold to that (Diff), and, for a backend adopting a running cluster,
// the faults a set of namespaces' rules carries out (Faults). Nothing here
// touches a namespace; the container backend runs the result.
package rules

import (
	"math"
	"net/netip"
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/election"
)

// Addrs holds each member's address on the cluster network now; a member
// without one (down, or disconnected by hand) is named by no rule.
type Addrs map[election.NodeID]netip.Addr

// Queue is the NFQUEUE number of node id's delay. It only needs to be
// unique inside one namespace; the node ID is.
func Queue(id election.NodeID) uint16 { return uint16(id) }

// Want is what node id's namespace should hold for the world s.
//
// A link cut both ways is held whole by one end's namespace, its owner
// (Owner): a drop-out rule to the other end and a drop-in rule from it.
// The route between them breaks, as a real partition breaks it, and since
// a partition is mostly one node or a few against the rest, most partitions
// land in one or two namespaces at once: isolating a node is one change in
// its namespace, not one in every namespace, so the isolated node and the
// rest lose each other at the same instant, as they do in the simulator.
//
// A link cut one way only is not a netfilter rule at all — a dropped packet
// of a TCP route stalls it both ways within a second — but the receiver's
// drop set (DropFrom), carried out by the node itself, so that the cut
// stays exactly one-way as the simulator keeps it.
//
// Loss and delay of a node apply to its packets to and from every peer.
func Want(s chaos.State, members []election.NodeID, addrs Addrs, id election.NodeID) netfilter.Rules {
	var r netfilter.Rules
	lossParams, _ := s.NetOf(chaos.Loss, id)
	loss := int(math.Round(chaos.LossPercent.Num(lossParams) * 100))
	_, delayed := s.NetOf(chaos.Delay, id)
	for _, m := range members {
		a, ok := addrs[m]
		if m == id || !ok {
			continue
		}
		if cutBothWays(s, id, m) && Owner(s, members, id, m) == id {
			r.DropOut = append(r.DropOut, a)
			r.DropIn = append(r.DropIn, a)
		}
		if loss > 0 {
			r.LossPercent = loss
			r.LossPeers = append(r.LossPeers, a)
		}
		if delayed {
			r.Queue = Queue(id)
			r.QueuePeers = append(r.QueuePeers, a)
		}
	}
	return r
}

func cutBothWays(s chaos.State, a, b election.NodeID) bool {
	return s.Cut[[2]election.NodeID{a, b}] && s.Cut[[2]election.NodeID{b, a}]
}

// Owner is the end of the link a–b (cut both ways) whose namespace holds
// its rules: the end cut off from more members, the higher ID on a tie.
// The isolated node of an isolation, the smaller side of most partitions.
func Owner(s chaos.State, members []election.NodeID, a, b election.NodeID) election.NodeID {
	ca, cb := twoWayCuts(s, members, a), twoWayCuts(s, members, b)
	if ca > cb || (ca == cb && a > b) {
		return a
	}
	return b
}

func twoWayCuts(s chaos.State, members []election.NodeID, id election.NodeID) int {
	n := 0
	for _, m := range members {
		if m != id && cutBothWays(s, id, m) {
			n++
		}
	}
	return n
}

// DropFrom is node id's drop set for the world s: the senders whose link
// to id is cut one way only (id→sender still delivers). The node drops
// their election messages on arrival; its routes stay up.
func DropFrom(s chaos.State, members []election.NodeID, id election.NodeID) []election.NodeID {
	var out []election.NodeID
	for _, m := range members {
		if m != id && s.Cut[[2]election.NodeID{m, id}] && !s.Cut[[2]election.NodeID{id, m}] {
			out = append(out, m)
		}
	}
	return out
}

// Change is one namespace's new rules.
type Change struct {
	Node  election.NodeID
	Rules netfilter.Rules
}

// Plan is what to install, in order, to bring namespaces from what they
// hold to what they should: first Add, then Lift, then Install (each may
// be empty).
//
// Add puts every new cut in place before any cut is lifted: when a
// partition moves a link's rules from one end's namespace to the other's
// (Owner changed), the link is cut twice for a moment, never not at all.
//
// Cuts are then lifted in two rounds. The installs of one round land up to
// a few hundred milliseconds apart, and a node whose cut is gone would
// meanwhile dial a peer still cutting it: the peer's answer is dropped and
// the dial hangs for NATS's whole dial timeout (a second), after which the
// route comes back only at the next attempt. So every namespace that lifts
// a cut first only refuses new connections to those peers and drops
// nothing (RefuseOut), and only when all of them do are the refusals
// removed: a dial then meets either a refusal, which fails at once and is
// retried in routes.Redial, or a peer that answers.
type Plan struct {
	Add, Lift, Install []Change
}

// Empty reports whether nothing needs to change.
func (p Plan) Empty() bool { return len(p.Add) == 0 && len(p.Lift) == 0 && len(p.Install) == 0 }

// Diff plans the changes for the namespaces in order whose wanted rules
// differ from what they hold (held: absent is nothing); namespaces want
// does not name are left alone.
func Diff(order []election.NodeID, held, want map[election.NodeID]netfilter.Rules) Plan {
	var p Plan
	for _, id := range order {
		w, ok := want[id]
		h := held[id]
		if !ok || w.String() == h.String() {
			continue
		}
		lifted := liftedCuts(h, w)
		if len(lifted) == 0 {
			// Only new cuts (or other rules): in place with the first
			// round, and that is all.
			p.Add = append(p.Add, Change{id, w})
			continue
		}
		if gained := w; gainsCuts(h, w) {
			gained.DropOut = union(h.DropOut, w.DropOut)
			gained.DropIn = union(h.DropIn, w.DropIn)
			p.Add = append(p.Add, Change{id, gained})
		}
		interim := w
		interim.RefuseOut = lifted
		p.Lift = append(p.Lift, Change{id, interim})
		p.Install = append(p.Install, Change{id, w})
	}
	return p
}

// liftedCuts are the peers held cut this namespace off from (either way)
// that want no longer does.
func liftedCuts(held, want netfilter.Rules) []netip.Addr {
	var out []netip.Addr
	for _, a := range union(held.DropOut, held.DropIn) {
		if !slices.Contains(want.DropOut, a) && !slices.Contains(want.DropIn, a) {
			out = append(out, a)
		}
	}
	return out
}

// gainsCuts reports whether want cuts a peer, either way, that held does
// not.
func gainsCuts(held, want netfilter.Rules) bool {
	for _, a := range want.DropOut {
		if !slices.Contains(held.DropOut, a) {
			return true
		}
	}
	for _, a := range want.DropIn {
		if !slices.Contains(held.DropIn, a) {
			return true
		}
	}
	return false
}

// union is a and the addresses of b it lacks, in that order.
func union(a, b []netip.Addr) []netip.Addr {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Faults are the faults that the rules read back from namespaces (held)
// carry out: a partition of every cut link — a drop-out rule at a to b's
// address is the cut a→b, and so is a drop-in rule at b from a's address —
// then one loss per lossy node. Applied to a world with no network fault,
// they rebuild its cuts and losses; delays are carried by the helpers that
// release queues, which the backend reads itself. Addresses that are no
// member's are ignored.
func Faults(members []election.NodeID, addrs Addrs, held map[election.NodeID]netfilter.Rules) []chaos.Fault {
	byAddr := map[netip.Addr]election.NodeID{}
	for id, a := range addrs {
		byAddr[a] = id
	}
	var cut [][2]election.NodeID
	addCut := func(l [2]election.NodeID) {
		if !slices.Contains(cut, l) {
			cut = append(cut, l)
		}
	}
	var out []chaos.Fault
	for _, id := range members {
		r, ok := held[id]
		if !ok {
			continue
		}
		for _, a := range r.DropOut {
			if to, ok := byAddr[a]; ok && to != id {
				addCut([2]election.NodeID{id, to})
			}
		}
		for _, a := range r.DropIn {
			if from, ok := byAddr[a]; ok && from != id {
				addCut([2]election.NodeID{from, id})
			}
		}
		if r.LossPercent > 0 && len(r.LossPeers) > 0 {
			out = append(out, chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{id}, Params: chaos.ParamsOf(chaos.LossPercent.Of(float64(r.LossPercent) / 100))})
		}
	}
	if len(cut) > 0 {
		out = append([]chaos.Fault{{Op: chaos.Partition, Links: cut}}, out...)
	}
	return out
}
