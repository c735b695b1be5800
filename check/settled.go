package check

import (
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// This file is the one definition of a settled cluster. The harness's
// `wait: stable`, liveness, failover, the elections table, agreement and
// bully-max all judge by it (docs/checkers.md, "Settled").
//
// At an instant, the live nodes fall into components of nodes that can all
// reach each other (Components). The cluster is settled when at least one
// node is live and every component is:
//
//   - entitled to a leader (no quorum, or it holds a majority of the
//     membership): every node views the same leader, a live node of that
//     component;
//   - not entitled (quorum mode, fewer than a majority): no node views any
//     leader.
//
// Components joined only through a bridge node (not every pair can talk
// directly) are not judged: the algorithms assume a complete network, and
// nothing says what such a component should agree on.

// Entitled reports whether a component of size nodes may have a leader.
func Entitled(size int, members []election.NodeID, q election.QuorumMode) bool {
	return q != election.Majority || size >= majority(members)
}

// componentSettled reports whether a component of nodes, where view gives
// each node's viewed leader, is settled, given whether it is entitled to a
// leader: componentProblem without the words, for SettledLeaders, which
// the explorer asks at every state change of thousands of histories.
func componentSettled(nodes []election.NodeID, view func(election.NodeID) election.NodeID, entitled bool) bool {
	l := view(nodes[0])
	for _, n := range nodes[1:] {
		if view(n) != l {
			return false
		}
	}
	if !entitled {
		return l == election.None
	}
	return l != election.None && slices.Contains(nodes, l)
}

// componentProblem says why a component of nodes, where view gives each
// node's viewed leader, is not settled ("" when it is), given whether it is
// entitled to a leader. It allocates only to describe a problem.
func componentProblem(nodes []election.NodeID, view func(election.NodeID) election.NodeID, entitled bool) string {
	if componentSettled(nodes, view, entitled) {
		return ""
	}
	views := func() map[election.NodeID]election.NodeID {
		m := make(map[election.NodeID]election.NodeID, len(nodes))
		for _, n := range nodes {
			m[n] = view(n)
		}
		return m
	}
	if !entitled {
		for _, n := range nodes {
			if view(n) != election.None {
				return fmt.Sprintf("a minority must have no leader, but views are %s", describeViews(nodes, views()))
			}
		}
		return ""
	}
	l := view(nodes[0])
	for _, n := range nodes {
		if view(n) != l {
			return "nodes disagree: " + describeViews(nodes, views())
		}
	}
	switch {
	case l == election.None:
		return "no node views a leader"
	case !slices.Contains(nodes, l):
		return fmt.Sprintf("every node views %d, which is not a live node of the component", l)
	}
	return ""
}

// SettledLeaders reports whether the cluster is settled at s and, if so,
// the leader of each entitled component (in the order of their smallest
// IDs; empty when none is entitled).
func SettledLeaders(s chaos.State, members []election.NodeID, q election.QuorumMode) ([]election.NodeID, bool) {
	return settledLeaders(s, members, q, false)
}

// settledLeaders is SettledLeaders; with highest, an entitled component
// counts as settled only on its highest live ID (what Bully promises).
func settledLeaders(s chaos.State, members []election.NodeID, q election.QuorumMode, highest bool) ([]election.NodeID, bool) {
	comps := Components(s, members)
	if len(comps) == 0 {
		return nil, false
	}
	var leaders []election.NodeID
	for _, c := range comps {
		if !c.Clique {
			continue
		}
		entitled := Entitled(len(c.Nodes), members, q)
		if !componentSettled(c.Nodes, func(n election.NodeID) election.NodeID { return s.Views[n].Leader }, entitled) {
			return nil, false
		}
		if !entitled {
			continue
		}
		l := s.Views[c.Nodes[0]].Leader
		if highest && l != slices.Max(c.Nodes) {
			return nil, false
		}
		leaders = append(leaders, l)
	}
	return leaders, true
}

// Settled reports whether the cluster is settled at s.
func Settled(s chaos.State, members []election.NodeID, q election.QuorumMode) bool {
	_, ok := SettledLeaders(s, members, q)
	return ok
}
