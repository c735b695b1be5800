package harness

import (
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

var five = []election.NodeID{1, 2, 3, 4, 5}

// cluster builds a state: every member up and viewing leader (0: none).
func cluster(members []election.NodeID, leader election.NodeID) chaos.State {
	return chaos.Steady(members, leader)
}

func TestStableNeedsEveryComponentToAgreeOnALiveMember(t *testing.T) {
	s := cluster(five, 5)
	if !Stable(s, five, election.NoQuorum) {
		t.Error("all viewing 5 is not stable")
	}
	s.Up[5] = false
	if Stable(s, five, election.NoQuorum) {
		t.Error("stable while everyone still views the dead node 5")
	}
	// Split {1,2,3}|{4,5}: without quorum both sides need a leader.
	s = cluster(five, 5)
	for _, a := range []election.NodeID{1, 2, 3} {
		for _, b := range []election.NodeID{4, 5} {
			s.Cut[[2]election.NodeID{a, b}], s.Cut[[2]election.NodeID{b, a}] = true, true
		}
	}
	if Stable(s, five, election.NoQuorum) {
		t.Error("stable while 1-3 view 5 across the partition")
	}
	for _, n := range []election.NodeID{1, 2, 3} {
		s.Views[n] = election.View{Leader: 3, Role: election.Follower}
	}
	s.Views[3] = election.View{Leader: 3, Role: election.Leader}
	if !Stable(s, five, election.NoQuorum) {
		t.Error("3 leading {1,2,3} and 5 leading {4,5} is a stable split brain")
	}
	// With a quorum, the minority {4,5} must have no leader.
	if Stable(s, five, election.Majority) {
		t.Error("quorum: 5 still leads a minority, yet stable")
	}
	s.Views[4] = election.View{Role: election.Candidate}
	s.Views[5] = election.View{Role: election.Undecided}
	if !Stable(s, five, election.Majority) {
		t.Error("quorum: 3 leads the majority and the minority has none, yet not stable")
	}
}

func TestExpectationsReadViews(t *testing.T) {
	s := cluster(five, 4)
	s.Up[5] = false
	e := &scenario.Expectation{Kind: scenario.ExpectHighest, On: scenario.OnAllLive}
	if !Holds(e, s, five) {
		t.Error("highest live is 4 and all view 4")
	}
	e = &scenario.Expectation{Kind: scenario.ExpectAny, On: scenario.OnAllLive}
	if !Holds(e, s, five) {
		t.Error("every live node views 4, which leads, yet leader: any does not hold")
	}
	s.Views[2] = election.View{Leader: 3, Role: election.Follower}
	if Holds(e, s, five) {
		t.Error("2 views 3 while the others view 4, yet leader: any holds")
	}
	s.Views[2] = s.Views[1]
	s.Views[4] = election.View{Leader: 4, Role: election.Candidate}
	if Holds(e, s, five) {
		t.Error("all view 4, but 4 no longer holds role leader, yet leader: any holds")
	}
	s = cluster(five, 5)
	s.Up[5] = false
	if Holds(e, s, five) {
		t.Error("the live nodes agree on 5, which is down, yet leader: any holds")
	}
	s = cluster(five, 4)
	s.Up[5] = false
	e = &scenario.Expectation{Kind: scenario.ExpectLeader, Leader: 4, On: scenario.OnAll}
	if Holds(e, s, five) {
		t.Error("on: all holds although node 5 is down")
	}
	if got := explain(e, s, five); got != "node 5 is down" {
		t.Errorf("explain = %q", got)
	}
	s = cluster(five, 5)
	s.Views[3] = election.View{Leader: 3, Role: election.Leader}
	e = &scenario.Expectation{Kind: scenario.ExpectLeaders, Leaders: []election.NodeID{5, 3}, On: scenario.OnAllLive}
	if !Holds(e, s, five) {
		t.Error("3 and 5 both lead, leaders: [5, 3] does not hold")
	}
	e = &scenario.Expectation{Kind: scenario.ExpectNone, On: scenario.OnIDs, OnIDs: []election.NodeID{1, 2}}
	if Holds(e, s, five) {
		t.Error("1 and 2 still view 5, yet leader: none on [1,2] holds")
	}
	s.Views[1], s.Views[2] = election.View{Role: election.Candidate}, election.View{Role: election.Undecided}
	if !Holds(e, s, five) {
		t.Error("1 and 2 view no leader, leader: none on [1,2] does not hold")
	}
	if got := s.Describe(five); got != "1→none 2→none 3→3* 4→5 5→5*" {
		t.Errorf("Describe = %q", got)
	}
}
