package raft_test

import (
	"context"
	"flag"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/compare"
	"github.com/ringleader-dev/ringleader/internal/docblock"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/sim"
)

var update = flag.Bool("update", false, "rewrite docs/raft.md's comparison table from simulator runs")

// compareSeeds is how many simulated runs each cell summarizes.
const compareSeeds = 20

// comparisonTable is the simulator's table of raft against quorum Bully.
func comparisonTable(t *testing.T) string {
	t.Helper()
	table, err := compare.Table(context.Background(), compare.RaftAndBully, compare.Options{
		World: "simulator", Backend: func() chaos.Backend { return &sim.Backend{} }, Runs: compareSeeds, Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// TestComparisonTable holds docs/raft.md's table of raft against quorum
// Bully equal to what the simulator measures now (the runs are seeded, so
// the table is too).
func TestComparisonTable(t *testing.T) {
	dockertest.CPUBound(t)
	begin, end := docblock.Markers("raft-vs-bully", "from simulator runs by TestComparisonTable", "go test ./conformance/raft -run TestComparisonTable -update")
	docblock.Check(t, "../../docs/raft.md", begin, end, comparisonTable(t), *update, "go test ./conformance/raft -run TestComparisonTable -update rewrites it")
}
