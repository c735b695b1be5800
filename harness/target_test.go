package harness

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

var five = []election.NodeID{1, 2, 3, 4, 5}

// cluster builds a state: every member up and viewing leader (0: none).
func cluster(members []election.NodeID, leader election.NodeID) chaos.State {
	s := chaos.State{Views: map[election.NodeID]election.View{}, Up: map[election.NodeID]bool{}, Paused: map[election.NodeID]bool{}, Cut: map[[2]election.NodeID]bool{}}
	for _, m := range members {
		s.Up[m] = true
		role := election.Follower
		if m == leader {
			role = election.Leader
		}
		if leader == 0 {
			role = election.Undecided
		}
		s.Views[m] = election.View{Leader: leader, Role: role}
	}
	return s
}

func rng() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func resolve(t *testing.T, kind scenario.TargetKind, op scenario.Op, s chaos.State) []election.NodeID {
	t.Helper()
	ids, err := ResolveTarget(scenario.Target{Kind: kind}, op, s, five, rng())
	if err != nil {
		t.Fatalf("%s %s: %v", op, kind, err)
	}
	return ids
}

func TestLeaderTargetIsTheLeaderMostLiveNodesView(t *testing.T) {
	s := cluster(five, 5)
	// 5 was killed and 1, 2 already moved on to 4; 3 and 4... still view 5.
	s.Up[5] = false
	s.Views[1] = election.View{Leader: 4, Role: election.Follower}
	s.Views[2] = election.View{Leader: 4, Role: election.Follower}
	s.Views[3] = election.View{Leader: 4, Role: election.Follower}
	if got := resolve(t, scenario.TargetLeader, scenario.OpKill, s); !slices.Equal(got, []election.NodeID{4}) {
		t.Errorf("leader = %v, want [4]", got)
	}
	// A paused node's view does not count.
	s.Paused[1], s.Paused[2], s.Paused[3] = true, true, true
	if got := s.CommonLeader(five); got != 5 {
		t.Errorf("with 1-3 paused, leader = %d, want 5 (only 4 votes, for 5)", got)
	}
	if _, err := ResolveTarget(scenario.Target{Kind: scenario.TargetLeader}, scenario.OpKill, cluster(five, 0), five, rng()); err == nil {
		t.Error("no error for a leader target with no leader")
	}
}

func TestFollowerTargetIsNeverTheLeader(t *testing.T) {
	s := cluster(five, 5)
	for seed := range uint64(50) {
		ids, err := ResolveTarget(scenario.Target{Kind: scenario.TargetFollower}, scenario.OpKill, s, five, rand.New(rand.NewPCG(seed, 0)))
		if err != nil || len(ids) != 1 || ids[0] == 5 {
			t.Fatalf("seed %d: follower = %v (%v)", seed, ids, err)
		}
	}
}

func TestMinorityAndMajorityAreSizedByTheMembership(t *testing.T) {
	s := cluster(five, 5)
	if got := resolve(t, scenario.TargetMinority, scenario.OpKill, s); len(got) != 2 {
		t.Errorf("minority of 5 = %v, want 2 nodes", got)
	}
	if got := resolve(t, scenario.TargetMajority, scenario.OpPause, s); len(got) != 3 {
		t.Errorf("majority of 5 = %v, want 3 nodes", got)
	}
	// Only running nodes can be killed: with 3 down, no majority is left.
	s.Up[1], s.Up[2], s.Up[3] = false, false, false
	if _, err := ResolveTarget(scenario.Target{Kind: scenario.TargetMajority}, scenario.OpKill, s, five, rng()); err == nil {
		t.Error("killed a majority out of two running nodes")
	}
}

func TestRestartAndResumeTargetOnlyDownAndPausedNodes(t *testing.T) {
	s := cluster(five, 5)
	s.Up[2], s.Up[5] = false, false
	s.Paused[3] = true
	if got := resolve(t, scenario.TargetDown, scenario.OpRestart, s); !slices.Equal(got, []election.NodeID{2, 5}) {
		t.Errorf("down = %v, want [2 5]", got)
	}
	if got := resolve(t, scenario.TargetOne, scenario.OpRestart, s); len(got) != 1 || (got[0] != 2 && got[0] != 5) {
		t.Errorf("restart one = %v, want 2 or 5", got)
	}
	if got := resolve(t, scenario.TargetPaused, scenario.OpResume, s); !slices.Equal(got, []election.NodeID{3}) {
		t.Errorf("paused = %v, want [3]", got)
	}
	if got := resolve(t, scenario.TargetAll, scenario.OpPause, s); !slices.Equal(got, []election.NodeID{1, 4}) {
		t.Errorf("pause all = %v, want the live nodes [1 4]", got)
	}
}

func TestTargetsAreReproducibleFromTheSeed(t *testing.T) {
	s := cluster(five, 5)
	a, _ := ResolveTarget(scenario.Target{Kind: scenario.TargetMinority}, scenario.OpKill, s, five, rand.New(rand.NewPCG(9, 9)))
	b, _ := ResolveTarget(scenario.Target{Kind: scenario.TargetMinority}, scenario.OpKill, s, five, rand.New(rand.NewPCG(9, 9)))
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different minorities: %v, %v", a, b)
	}
}

func partitionOf(t *testing.T, p scenario.Partition, s chaos.State, members []election.NodeID) chaos.Fault {
	t.Helper()
	f, _, err := Resolve(scenario.Step{Op: scenario.OpPartition, Partition: &p}, s, members, rng())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPartitionShapes(t *testing.T) {
	s := cluster(five, 5)
	eq := func(a, b [][]election.NodeID) bool {
		return slices.EqualFunc(a, b, func(x, y []election.NodeID) bool { return slices.Equal(x, y) })
	}
	if f := partitionOf(t, scenario.Partition{Shape: scenario.ShapeHalves}, s, five); !eq(f.Groups, [][]election.NodeID{{1, 2, 3}, {4, 5}}) {
		t.Errorf("halves = %v, want {1,2,3}|{4,5}", f.Groups)
	}
	if f := partitionOf(t, scenario.Partition{Shape: scenario.ShapeBridge}, s, five); !eq(f.Groups, [][]election.NodeID{{1, 2, 3}, {3, 4, 5}}) {
		t.Errorf("bridge = %v, want {1,2,3}|{3,4,5}", f.Groups)
	}
	f := partitionOf(t, scenario.Partition{Shape: scenario.ShapeBridge, Target: scenario.Target{Kind: scenario.TargetLeader}}, s, five)
	if !eq(f.Groups, [][]election.NodeID{{1, 2, 5}, {3, 4, 5}}) {
		t.Errorf("bridge through the leader = %v, want {1,2,5}|{3,4,5}", f.Groups)
	}
	if f := partitionOf(t, scenario.Partition{Shape: scenario.ShapeIsolate, Target: scenario.Target{Kind: scenario.TargetLeader}}, s, five); !eq(f.Groups, [][]election.NodeID{{5}, {1, 2, 3, 4}}) {
		t.Errorf("isolate leader = %v", f.Groups)
	}
	if f := partitionOf(t, scenario.Partition{OneWay: []election.NodeID{5, 1}}, s, five); !slices.Equal(f.Links, [][2]election.NodeID{{5, 1}}) {
		t.Errorf("one-way = %v", f.Links)
	}
	if f := partitionOf(t, scenario.Partition{Cut: []election.NodeID{1, 2}}, s, five); len(f.Links) != 2 {
		t.Errorf("cut = %v, want both directions", f.Links)
	}
}

func TestMajoritiesRingLetsEveryNodeSeeADifferentMajority(t *testing.T) {
	ring := []election.NodeID{3, 1, 4, 5, 2} // ring order is the IDs' order in the file
	f := partitionOf(t, scenario.Partition{Shape: scenario.ShapeMajoritiesRing}, cluster(ring, 0), ring)
	cut := map[[2]election.NodeID]bool{}
	for _, l := range f.Links {
		cut[l] = true
	}
	seen := map[string]bool{}
	for i, a := range ring {
		var sees []election.NodeID
		for _, b := range ring {
			if !cut[[2]election.NodeID{a, b}] {
				sees = append(sees, b)
			}
		}
		slices.Sort(sees)
		want := []election.NodeID{ring[(i+4)%5], a, ring[(i+1)%5]}
		slices.Sort(want)
		if !slices.Equal(sees, want) {
			t.Errorf("node %d sees %v, want itself and its ring neighbours %v", a, sees, want)
		}
		seen[idsText(sees)] = true
	}
	if len(seen) != 5 {
		t.Errorf("only %d distinct majorities among 5 nodes", len(seen))
	}
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
	if got := describeViews(s, five); got != "1→none 2→none 3→3* 4→5 5→5*" {
		t.Errorf("describeViews = %q", got)
	}
}
