package harness

import (
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Stable reports whether the cluster has settled at s: the one rule of
// check.Settled, which liveness, failover, the elections table and the
// agreement checker judge by too.
func Stable(s chaos.State, members []election.NodeID, q election.QuorumMode) bool {
	return check.Settled(s, members, q)
}

// expectNodes is the set an expectation looks at, and why the expectation
// cannot hold when a named node is not live.
func expectNodes(e *scenario.Expectation, s chaos.State, members []election.NodeID) (nodes []election.NodeID, problem string) {
	switch e.On {
	case scenario.OnAllLive:
		for _, m := range members {
			if s.Live(m) {
				nodes = append(nodes, m)
			}
		}
		return nodes, ""
	case scenario.OnAll:
		nodes = members
	default:
		nodes = e.OnIDs
	}
	for _, n := range nodes {
		if !s.Live(n) {
			return nodes, fmt.Sprintf("node %d is %s", n, s.Status(n))
		}
	}
	return nodes, ""
}

// Holds evaluates an expectation at s.
func Holds(e *scenario.Expectation, s chaos.State, members []election.NodeID) bool {
	nodes, problem := expectNodes(e, s, members)
	if problem != "" || len(nodes) == 0 {
		return false
	}
	switch e.Kind {
	case scenario.ExpectLeader, scenario.ExpectHighest:
		want := e.Leader
		if e.Kind == scenario.ExpectHighest {
			want = highestLive(s, members)
		}
		for _, n := range nodes {
			if s.Views[n].Leader != want {
				return false
			}
		}
		return want != election.None
	case scenario.ExpectAny:
		want := s.Views[nodes[0]].Leader
		for _, n := range nodes {
			if s.Views[n].Leader != want {
				return false
			}
		}
		return want != election.None && s.Live(want) && s.Views[want].Role == election.Leader
	case scenario.ExpectNone:
		for _, n := range nodes {
			if s.Views[n].Leader != election.None {
				return false
			}
		}
		return true
	case scenario.ExpectLeaders:
		var got []election.NodeID
		for _, n := range nodes {
			if s.Views[n].Role == election.Leader {
				got = append(got, n)
			}
		}
		want := slices.Sorted(slices.Values(e.Leaders))
		return slices.Equal(got, want)
	}
	return false
}

func highestLive(s chaos.State, members []election.NodeID) election.NodeID {
	best := election.None
	for _, m := range members {
		if s.Live(m) && m > best {
			best = m
		}
	}
	return best
}

// explain says why an expectation does not hold at s, for the failure line.
func explain(e *scenario.Expectation, s chaos.State, members []election.NodeID) string {
	if _, problem := expectNodes(e, s, members); problem != "" {
		return problem
	}
	return "saw " + s.Describe(members)
}
