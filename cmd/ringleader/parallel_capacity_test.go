package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// An explicit --parallel is held to the engine's capacity for the nodes
// it puts there at once: the largest runs that many at a time can be,
// repetitions counted, never more runs than there are.
func TestNodesAtOnceCountsTheLargestRunsSideBySide(t *testing.T) {
	sized := func(n, repeat int) *scenario.Scenario {
		return &scenario.Scenario{Cluster: scenario.Cluster{IDs: election.FirstIDs(n)}, Repeat: repeat}
	}
	scs := []*scenario.Scenario{sized(5, 1), sized(3, 1), sized(9, 2)}
	for _, c := range []struct {
		parallel, repeat, nodes, runs int
	}{
		{1, 0, 9, 1},
		{2, 0, 18, 2},   // 9's two repetitions
		{3, 0, 23, 3},   // then the 5
		{10, 0, 26, 4},  // every run: 9, 9, 5, 3
		{10, 3, 51, 9},  // --repeat 3 for all: 9×3 + 5×3 + 3×3
		{2, 3, 18, 2},   // still the two largest
		{0, 0, 9, 1},    // 0 is the default's business: one at a time here
		{100, 1, 17, 3}, // --repeat 1 overrides repeat: 2
	} {
		nodes, runs := nodesAtOnce(scs, c.parallel, c.repeat)
		if nodes != c.nodes || runs != c.runs {
			t.Errorf("--parallel %d --repeat %d: %d nodes in %d runs, want %d in %d", c.parallel, c.repeat, nodes, runs, c.nodes, c.runs)
		}
	}
}

// checkCapacity refuses an explicit --parallel whose runs together pass
// what the world holds, though each run alone fits, and leaves the
// default (0) and one at a time alone.
func TestAnExplicitParallelIsHeldToTheWorldsCapacity(t *testing.T) {
	holds := 12
	w := world{capacity: func(_ context.Context, n int) error {
		if n > holds {
			return fmt.Errorf("%d nodes are more than this machine holds", n)
		}
		return nil
	}}
	scs := []*scenario.Scenario{
		{File: "a.yaml", Cluster: scenario.Cluster{IDs: election.FirstIDs(5)}, Repeat: 1},
		{File: "b.yaml", Cluster: scenario.Cluster{IDs: election.FirstIDs(5)}, Repeat: 1},
		{File: "c.yaml", Cluster: scenario.Cluster{IDs: election.FirstIDs(5)}, Repeat: 1},
	}
	for _, c := range []struct{ parallel, repeat, want int }{
		{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 2}, {2, 4, 0}, {9, 1, 2},
	} {
		if got := checkCapacity(scs, w, "", c.parallel, c.repeat); got != c.want {
			t.Errorf("--parallel %d --repeat %d: status %d, want %d", c.parallel, c.repeat, got, c.want)
		}
	}
}
