package chaos

import (
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
)

// Placement says which engine (host) holds each node of a cluster that
// spans several: group i is the nodes of the i-th engine, in the order
// the engines are named (--engines). It is what a partition along
// engines cuts (the shape Engines), in containers and in the simulator
// alike. A cluster on one engine has none (nil).
type Placement [][]election.NodeID

// RoundRobin places members over n engines in turn: the i-th member on
// engine i mod n. Nil for fewer than two engines.
func RoundRobin(members []election.NodeID, n int) Placement {
	if n < 2 {
		return nil
	}
	p := make(Placement, n)
	for i, m := range members {
		p[i%n] = append(p[i%n], m)
	}
	return p
}

// Engine is the index of the engine that holds id, and false when no
// group holds it.
func (p Placement) Engine(id election.NodeID) (int, bool) {
	for i, g := range p {
		if slices.Contains(g, id) {
			return i, true
		}
	}
	return 0, false
}

// Validate checks that every member is in exactly one group, that no
// group is empty and nothing else is placed, and, when engines is not
// zero, that there is one group per engine.
func (p Placement) Validate(members []election.NodeID, engines int) error {
	if p == nil {
		return nil
	}
	if engines > 0 && len(p) != engines {
		return fmt.Errorf("placement has %d groups for %d engines (one group per engine, in the order they are named)", len(p), engines)
	}
	seen := map[election.NodeID]int{}
	for i, g := range p {
		if len(g) == 0 {
			return fmt.Errorf("placement group %d is empty (every engine named holds at least one node)", i+1)
		}
		for _, id := range g {
			if !slices.Contains(members, id) {
				return fmt.Errorf("placement group %d: node %d is not a member (members: %s)", i+1, id, IDList(members))
			}
			if j, dup := seen[id]; dup {
				return fmt.Errorf("placement: node %d is in group %d and group %d", id, j+1, i+1)
			}
			seen[id] = i
		}
	}
	for _, m := range members {
		if _, ok := seen[m]; !ok {
			return fmt.Errorf("placement: node %d is in no group (every member is placed)", m)
		}
	}
	return nil
}

// Placed is a backend whose cluster spans several engines (hosts): it
// says which engine holds each node, by the engine's address, and the
// placement it ran (nil engines on one engine).
type Placed interface {
	Placement() (engines []string, p Placement)
}

func (p Placement) String() string {
	s := ""
	for i, g := range p {
		if i > 0 {
			s += " | "
		}
		s += IDList(g)
	}
	return s
}
