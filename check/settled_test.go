package check

import (
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// split cuts every link between the two groups, both ways.
func split(s chaos.State, a, b []election.NodeID) chaos.State {
	for _, x := range a {
		for _, y := range b {
			s.Cut[[2]election.NodeID{x, y}], s.Cut[[2]election.NodeID{y, x}] = true, true
		}
	}
	return s
}

// view sets the leader each node views; a node viewing itself leads.
func view(s chaos.State, leader election.NodeID, nodes ...election.NodeID) chaos.State {
	for _, n := range nodes {
		s.Views[n] = chaos.ViewOf(n, leader)
	}
	return s
}

// TestTheOneSettledRule walks the rule of docs/checkers.md ("Settled") case
// by case: each component of live nodes that can all talk, if entitled to
// a leader, agrees on a live leader of its own; if not (a quorum minority),
// views none; bridged components are not judged; someone must be live.
func TestTheOneSettledRule(t *testing.T) {
	five := election.FirstIDs(5)
	minority, majority := []election.NodeID{4, 5}, []election.NodeID{1, 2, 3}
	halves := func() chaos.State { return split(chaos.Steady(five, 5), majority, minority) }
	cases := []struct {
		name    string
		state   chaos.State
		q       election.QuorumMode
		settled bool
		leaders []election.NodeID
	}{
		{"all agree on a live leader", chaos.Steady(five, 5), election.NoQuorum, true, []election.NodeID{5}},
		{"all undecided", chaos.Steady(five, election.None), election.NoQuorum, false, nil},
		{"everyone still views the dead leader", func() chaos.State {
			s := chaos.Steady(five, 5)
			s.Up[5] = false
			return s
		}(), election.NoQuorum, false, nil},
		{"everyone still views the frozen leader", func() chaos.State {
			s := chaos.Steady(five, 5)
			s.Paused[5] = true
			return s
		}(), election.Majority, false, nil},
		{"no live node", func() chaos.State {
			s := chaos.Steady(five, election.None)
			for _, n := range five {
				s.Up[n] = false
			}
			return s
		}(), election.NoQuorum, false, nil},
		{"no quorum: the majority still views the leader across the cut", halves(), election.NoQuorum, false, nil},
		{"no quorum: each half on a leader of its own", view(halves(), 3, majority...), election.NoQuorum, true, []election.NodeID{3, 5}},
		{"quorum: the minority still views its leader", view(halves(), 3, majority...), election.Majority, false, nil},
		{"quorum: one minority node still views a leader", view(view(view(halves(), 3, majority...), election.None, 4), 5, 5), election.Majority, false, nil},
		{"quorum: the minority views none", view(view(halves(), 3, majority...), election.None, minority...), election.Majority, true, []election.NodeID{3}},
		{"no quorum: a leaderless half is not settled", view(view(halves(), 3, majority...), election.None, minority...), election.NoQuorum, false, nil},
		{"quorum: no majority anywhere and no leader viewed", func() chaos.State {
			s := view(chaos.Steady(five, election.None), election.None, five...)
			s.Up[1], s.Up[2] = false, false
			return split(s, []election.NodeID{3}, minority)
		}(), election.Majority, true, nil},
		{"a bridged component is not judged", func() chaos.State {
			// {1,2,3} and {3,4,5}: 3 bridges, 1 and 5 cannot talk.
			s := split(chaos.Steady(five, 5), []election.NodeID{1, 2}, minority)
			return view(s, 3, 1, 2)
		}(), election.NoQuorum, true, nil},
	}
	for _, c := range cases {
		leaders, ok := SettledLeaders(c.state, five, c.q)
		if ok != c.settled || !slices.Equal(leaders, c.leaders) {
			t.Errorf("%s (%v): settled %v with leaders %v, want %v with %v", c.name, c.q, ok, leaders, c.settled, c.leaders)
		}
		if Settled(c.state, five, c.q) != ok {
			t.Errorf("%s: Settled and SettledLeaders disagree", c.name)
		}
	}
}
