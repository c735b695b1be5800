package chaos

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

var five = []election.NodeID{1, 2, 3, 4, 5}

// cluster builds a state: every member up and viewing leader (0: none).
func cluster(members []election.NodeID, leader election.NodeID) State { return Steady(members, leader) }

func rng() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func resolve(t *testing.T, kind TargetKind, op Op, s State) []election.NodeID {
	t.Helper()
	ids, err := ResolveTarget(Target{Kind: kind}, op, s, five, rng())
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
	if got := resolve(t, TargetLeader, Kill, s); !slices.Equal(got, []election.NodeID{4}) {
		t.Errorf("leader = %v, want [4]", got)
	}
	// A paused node's view does not count.
	s.Paused[1], s.Paused[2], s.Paused[3] = true, true, true
	if got := s.CommonLeader(five); got != 5 {
		t.Errorf("with 1-3 paused, leader = %d, want 5 (only 4 votes, for 5)", got)
	}
	if _, err := ResolveTarget(Target{Kind: TargetLeader}, Kill, cluster(five, 0), five, rng()); err == nil {
		t.Error("no error for a leader target with no leader")
	}
}

func TestFollowerTargetIsNeverTheLeader(t *testing.T) {
	s := cluster(five, 5)
	for seed := range uint64(50) {
		ids, err := ResolveTarget(Target{Kind: TargetFollower}, Kill, s, five, rand.New(rand.NewPCG(seed, 0)))
		if err != nil || len(ids) != 1 || ids[0] == 5 {
			t.Fatalf("seed %d: follower = %v (%v)", seed, ids, err)
		}
	}
}

func TestMinorityAndMajorityAreSizedByTheMembership(t *testing.T) {
	s := cluster(five, 5)
	if got := resolve(t, TargetMinority, Kill, s); len(got) != 2 {
		t.Errorf("minority of 5 = %v, want 2 nodes", got)
	}
	if got := resolve(t, TargetMajority, Pause, s); len(got) != 3 {
		t.Errorf("majority of 5 = %v, want 3 nodes", got)
	}
	// Only running nodes can be killed: with 3 down, no majority is left.
	s.Up[1], s.Up[2], s.Up[3] = false, false, false
	if _, err := ResolveTarget(Target{Kind: TargetMajority}, Kill, s, five, rng()); err == nil {
		t.Error("killed a majority out of two running nodes")
	}
}

func TestRestartAndResumeTargetOnlyDownAndPausedNodes(t *testing.T) {
	s := cluster(five, 5)
	s.Up[2], s.Up[5] = false, false
	s.Paused[3] = true
	if got := resolve(t, TargetDown, Restart, s); !slices.Equal(got, []election.NodeID{2, 5}) {
		t.Errorf("down = %v, want [2 5]", got)
	}
	if got := resolve(t, TargetOne, Restart, s); len(got) != 1 || (got[0] != 2 && got[0] != 5) {
		t.Errorf("restart one = %v, want 2 or 5", got)
	}
	if got := resolve(t, TargetPaused, Resume, s); !slices.Equal(got, []election.NodeID{3}) {
		t.Errorf("paused = %v, want [3]", got)
	}
	if got := resolve(t, TargetAll, Pause, s); !slices.Equal(got, []election.NodeID{1, 4}) {
		t.Errorf("pause all = %v, want the live nodes [1 4]", got)
	}
}

func TestTargetsAreReproducibleFromTheSeed(t *testing.T) {
	s := cluster(five, 5)
	a, _ := ResolveTarget(Target{Kind: TargetMinority}, Kill, s, five, rand.New(rand.NewPCG(9, 9)))
	b, _ := ResolveTarget(Target{Kind: TargetMinority}, Kill, s, five, rand.New(rand.NewPCG(9, 9)))
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different minorities: %v, %v", a, b)
	}
}

func partitionOf(t *testing.T, p PartitionSpec, s State, members []election.NodeID) Fault {
	t.Helper()
	f, err := Spec{Op: Partition, Partition: &p}.Resolve(s, members, rng())
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
	if f := partitionOf(t, PartitionSpec{Shape: Halves}, s, five); !eq(f.Groups, [][]election.NodeID{{1, 2, 3}, {4, 5}}) {
		t.Errorf("halves = %v, want {1,2,3}|{4,5}", f.Groups)
	}
	if f := partitionOf(t, PartitionSpec{Shape: Bridge}, s, five); !eq(f.Groups, [][]election.NodeID{{1, 2, 3}, {3, 4, 5}}) {
		t.Errorf("bridge = %v, want {1,2,3}|{3,4,5}", f.Groups)
	}
	f := partitionOf(t, PartitionSpec{Shape: Bridge, Target: Target{Kind: TargetLeader}}, s, five)
	if !eq(f.Groups, [][]election.NodeID{{1, 2, 5}, {3, 4, 5}}) {
		t.Errorf("bridge through the leader = %v, want {1,2,5}|{3,4,5}", f.Groups)
	}
	if f := partitionOf(t, PartitionSpec{Shape: Isolate, Target: Target{Kind: TargetLeader}}, s, five); !eq(f.Groups, [][]election.NodeID{{5}, {1, 2, 3, 4}}) {
		t.Errorf("isolate leader = %v", f.Groups)
	}
	if f := partitionOf(t, PartitionSpec{OneWay: []election.NodeID{5, 1}}, s, five); !slices.Equal(f.Links, [][2]election.NodeID{{5, 1}}) {
		t.Errorf("one-way = %v", f.Links)
	}
	if f := partitionOf(t, PartitionSpec{Cut: []election.NodeID{1, 2}}, s, five); len(f.Links) != 2 {
		t.Errorf("cut = %v, want both directions", f.Links)
	}
}

func TestMajoritiesRingLetsEveryNodeSeeADifferentMajority(t *testing.T) {
	ring := []election.NodeID{3, 1, 4, 5, 2} // ring order is the IDs' order in the file
	f := partitionOf(t, PartitionSpec{Shape: MajoritiesRing}, cluster(ring, 0), ring)
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
		seen[IDList(sees)] = true
	}
	if len(seen) != 5 {
		t.Errorf("only %d distinct majorities among 5 nodes", len(seen))
	}
}
