package chaos

import (
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func TestRoundRobinDealsMembersOverEngines(t *testing.T) {
	got := RoundRobin(five, 2)
	if want := (Placement{{1, 3, 5}, {2, 4}}); got.String() != want.String() {
		t.Errorf("RoundRobin(5 nodes, 2) = %v, want %v", got, want)
	}
	if RoundRobin(five, 1) != nil {
		t.Error("one engine has a placement; want none")
	}
	if e, ok := got.Engine(4); !ok || e != 1 {
		t.Errorf("Engine(4) = %d, %v; want 1, true", e, ok)
	}
}

func TestPlacementValidateNamesWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		p       Placement
		engines int
		want    string
	}{
		{Placement{{1, 2, 3}, {4}}, 0, "node 5 is in no group"},
		{Placement{{1, 2, 3}, {3, 4, 5}}, 0, "node 3 is in group 1 and group 2"},
		{Placement{{1, 2, 3, 4, 5}, {}}, 0, "group 2 is empty"},
		{Placement{{1, 2, 3, 4, 9}, {5}}, 0, "node 9 is not a member"},
		{Placement{{1, 2, 3}, {4, 5}}, 3, "2 groups for 3 engines"},
	} {
		if err := tc.p.Validate(five, tc.engines); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v.Validate = %v, want %q", tc.p, err, tc.want)
		}
	}
	if err := (Placement{{1, 3, 5}, {2, 4}}).Validate(five, 2); err != nil {
		t.Errorf("a good placement: %v", err)
	}
}

// TestEnginesShapeCutsAlongThePlacement: every node of one engine from
// every node of the other, and an error on one engine.
func TestEnginesShapeCutsAlongThePlacement(t *testing.T) {
	s := cluster(five, 5)
	spec := Spec{Op: Partition, Partition: &PartitionSpec{Shape: Engines}}
	if _, err := spec.Resolve(s, five, rng()); err == nil || !strings.Contains(err.Error(), "one engine") {
		t.Errorf("engines on one engine: %v, want it refused", err)
	}
	s.Placement = Placement{{1, 3, 5}, {2, 4}}
	f, err := spec.Resolve(s, five, rng())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Groups) != 2 || !slices.Equal(f.Groups[0], []election.NodeID{1, 3, 5}) || !slices.Equal(f.Groups[1], []election.NodeID{2, 4}) {
		t.Fatalf("groups %v, want the placement", f.Groups)
	}
	s.Apply(f, five)
	for _, a := range five {
		for _, b := range five {
			ea, _ := s.Placement.Engine(a)
			eb, _ := s.Placement.Engine(b)
			if cut := s.Cut[[2]election.NodeID{a, b}]; cut != (ea != eb) {
				t.Errorf("link %d->%d cut %v, want %v (engines %d, %d)", a, b, cut, ea != eb, ea, eb)
			}
		}
	}
}
