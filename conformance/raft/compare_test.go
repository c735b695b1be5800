package raft_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/internal/docblock"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

var update = flag.Bool("update", false, "rewrite docs/raft.md's comparison table from simulator runs")

// compareSeeds is how many simulated runs each cell summarizes.
const compareSeeds = 20

// contender is one side of the comparison, as a scenario's cluster says it.
type contender struct{ name, cluster string }

var contenders = []contender{
	{"raft", "{algorithm: raft, nodes: 5}"},
	{"raft, pre-vote off", "{algorithm: raft, nodes: 5, options: {prevote: false}}"},
	{"raft, check-quorum off", "{algorithm: raft, nodes: 5, options: {check_quorum: false}}"},
	{"quorum Bully", "{algorithm: bully, nodes: 5, quorum: majority}"},
}

// The faults, each a scenario both contenders run on the default timing.
// leader: any names no winner, so the same steps fit both.
const (
	killSteps = `
  - wait: stable
  - kill: leader
  - expect: {leader: any, within: 5s}
  - wait: stable`
	pauseSteps = `
  - wait: stable
  - pause: leader
  - expect: {leader: any, within: 5s}
  - resume: paused
  - wait: stable`
	rejoinSteps = `
  - wait: stable
  - partition: {shape: isolate, target: follower}
  - wait: 3s
  - heal
  - expect: {leader: any, on: all, within: 5s}
  - wait: stable`
	cutLeaderSteps = `
  - wait: stable
  - partition: {shape: isolate, target: leader}
  - wait: 3s
  - heal
  - expect: {leader: any, on: all, within: 5s}
  - wait: stable`
)

// runs plays steps on c's cluster for seeds 1..compareSeeds in the
// simulator; every run must pass.
func runs(t *testing.T, c contender, name, steps string) []*harness.Result {
	t.Helper()
	sc, err := scenario.Parse(name+".yaml", []byte("name: "+name+"\ncluster: "+c.cluster+"\nsteps:"+steps+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*harness.Result
	for seed := int64(1); seed <= compareSeeds; seed++ {
		res, err := harness.Run(context.Background(), sc, &sim.Backend{}, harness.Options{Store: t.TempDir(), Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Pass {
			t.Fatalf("%s, %s, seed %d failed: %v", c.name, name, seed, res.Failures)
		}
		out = append(out, res)
	}
	return out
}

// percentile is the nearest-rank p-th percentile of xs.
func percentile(xs []float64, p int) float64 {
	s := slices.Sorted(slices.Values(xs))
	i := (p*len(s) + 99) / 100
	return s[max(i-1, 0)]
}

func failovers(rs []*harness.Result) string {
	var ms []float64
	for _, r := range rs {
		for _, f := range r.Failovers {
			if f.Recovered {
				ms = append(ms, f.Millis)
			}
		}
	}
	if len(ms) == 0 {
		return "never recovered"
	}
	return fmt.Sprintf("%s / %s", millis.Float(percentile(ms, 50)), millis.Float(percentile(ms, 95)))
}

// comparisonTable runs every fault for every contender and writes the
// table docs/raft.md shows.
func comparisonTable(t *testing.T) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| simulator, 5 nodes, default timing, %d seeds | failover after kill, p50 / p95 | failover after pause, p50 / p95 | leader changes on a follower's return, mean | cut-off leader's overlap, mean | election and announce messages of the failover after kill, mean |\n|---|---|---|---|---|---|\n", compareSeeds)
	for _, c := range contenders {
		kill := runs(t, c, "kill", killSteps)
		pause := runs(t, c, "pause", pauseSteps)
		rejoin := runs(t, c, "rejoin", rejoinSteps)
		cut := runs(t, c, "cut-leader", cutLeaderSteps)
		var changes, overlap, msgs float64
		for i := range compareSeeds {
			// The first leader is the run's first change; what the
			// return caused is the rest.
			changes += float64(rejoin[i].Leadership.LeaderChanges - 1)
			overlap += cut[i].SplitBrain.TotalMillis
			for _, e := range kill[i].Elections[1:] { // after the first election
				msgs += float64(e.Election + e.Announce)
			}
		}
		n := float64(compareSeeds)
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %s | %.1f |\n", c.name, failovers(kill), failovers(pause), changes/n, millis.Float(overlap/n), msgs/n)
	}
	return b.String()
}

// TestComparisonTable holds docs/raft.md's table of raft against quorum
// Bully equal to what the simulator measures now (the runs are seeded, so
// the table is too).
func TestComparisonTable(t *testing.T) {
	begin, end := docblock.Markers("raft-vs-bully", "from simulator runs by TestComparisonTable", "go test ./conformance/raft -run TestComparisonTable -update")
	docblock.Check(t, "../../docs/raft.md", begin, end, comparisonTable(t), *update, "go test ./conformance/raft -run TestComparisonTable -update rewrites it")
}
