package chaos

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// cutByDefinition is CutLinks as the docs define it, the slow way: a pair
// is cut when both nodes are in some group and they share none.
func cutByDefinition(f Fault, members []election.NodeID) [][2]election.NodeID {
	out := slices.Clone(f.Links)
	in := func(id election.NodeID, g []election.NodeID) bool { return slices.Contains(g, id) }
	for _, a := range members {
		for _, b := range members {
			if a == b {
				continue
			}
			inA, inB, share := false, false, false
			for _, g := range f.Groups {
				inA, inB = inA || in(a, g), inB || in(b, g)
				share = share || (in(a, g) && in(b, g))
			}
			if l := [2]election.NodeID{a, b}; inA && inB && !share && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestCutLinksMatchesTheDefinition holds the bit-set CutLinks to the
// definition on random partitions: small and large clusters (the scan and
// the map index), more than 64 groups (several words a member), nodes in
// several groups or in none, and explicit links beside groups.
func TestCutLinksMatchesTheDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 5, 9, 40, 150} {
		members := election.FirstIDs(n)
		r.Shuffle(n, func(i, j int) { members[i], members[j] = members[j], members[i] })
		for range 30 {
			var f Fault
			for range 1 + r.IntN(min(n, 80)) {
				var g []election.NodeID
				for _, id := range members {
					if r.IntN(3) == 0 {
						g = append(g, id)
					}
				}
				f.Groups = append(f.Groups, g)
			}
			for range r.IntN(3) {
				f.Links = append(f.Links, [2]election.NodeID{members[r.IntN(n)], members[r.IntN(n)]})
			}
			got, want := f.CutLinks(members), cutByDefinition(f, members)
			if !slices.Equal(got, want) {
				t.Fatalf("%d members, %d groups: CutLinks gave %d links, the definition %d\n got %v\nwant %v", n, len(f.Groups), len(got), len(want), got, want)
			}
		}
	}
}
