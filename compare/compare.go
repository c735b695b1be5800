// Package compare runs algorithms side by side on the same faults, in any
// world, and writes the table: Raft against quorum Bully (docs/raft.md) is
// its first use. The same runs make the simulator's table (held equal to
// the docs by a test, since seeded runs repeat) and the containers' (made
// by `ringleader compare --backend docker`, whose runs do not repeat).
package compare

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Contender is one side of the comparison, as a scenario's cluster says it.
type Contender struct{ Name, Cluster string }

// RaftAndBully are Raft as etcd runs it, with each of its options off, and
// quorum Bully.
var RaftAndBully = []Contender{
	{"raft", "{algorithm: raft, nodes: 5}"},
	{"raft, pre-vote off", "{algorithm: raft, nodes: 5, options: {prevote: false}}"},
	{"raft, check-quorum off", "{algorithm: raft, nodes: 5, options: {check_quorum: false}}"},
	{"quorum Bully", "{algorithm: bully, nodes: 5, quorum: majority}"},
}

// The faults, each a scenario every contender runs on the default timing.
// leader: any names no winner, so the same steps fit all of them.
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

// Options say where and how often.
type Options struct {
	// World names the backend in the table's first column ("simulator").
	World string
	// Backend makes a fresh backend for each run.
	Backend func() chaos.Backend
	// Runs is how many runs each cell summarizes; run i has seed i.
	Runs int
	// Store is where the runs' directories go.
	Store string
	// Progress gets a line per run (nil: none).
	Progress io.Writer
}

// Table runs every fault for every contender and writes the table.
func Table(ctx context.Context, contenders []Contender, o Options) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s, 5 nodes, default timing, %d runs | failover after kill, p50 / p95 | failover after pause, p50 / p95 | leader changes on a follower's return, mean | cut-off leader's overlap, mean | election and announce messages of the failover after kill, mean |\n|---|---|---|---|---|---|\n", o.World, o.Runs)
	for _, c := range contenders {
		var cells [4][]*harness.Result
		for i, f := range []struct{ name, steps string }{{"kill", killSteps}, {"pause", pauseSteps}, {"rejoin", rejoinSteps}, {"cut-leader", cutLeaderSteps}} {
			rs, err := runs(ctx, c, f.name, f.steps, o)
			if err != nil {
				return "", err
			}
			cells[i] = rs
		}
		kill, pause, rejoin, cut := cells[0], cells[1], cells[2], cells[3]
		var changes, overlap, msgs float64
		for i := range o.Runs {
			// The first leader is the run's first change; what the
			// return caused is the rest.
			changes += float64(rejoin[i].Leadership.LeaderChanges - 1)
			overlap += cut[i].SplitBrain.TotalMillis
			if len(kill[i].Elections) > 1 {
				for _, e := range kill[i].Elections[1:] { // after the first election
					msgs += float64(e.Election + e.Announce)
				}
			}
		}
		n := float64(o.Runs)
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %s | %.1f |\n", c.Name, failovers(kill), failovers(pause), changes/n, millis.Float(overlap/n), msgs/n)
	}
	return b.String(), nil
}

// runs plays steps on c's cluster for seeds 1..o.Runs; every run must
// pass (a run that does not says the comparison is broken, not a figure).
func runs(ctx context.Context, c Contender, name, steps string, o Options) ([]*harness.Result, error) {
	sc, err := scenario.Parse(name+".yaml", []byte("name: "+name+"\ncluster: "+c.Cluster+"\nsteps:"+steps+"\n"))
	if err != nil {
		return nil, err
	}
	var out []*harness.Result
	for seed := int64(1); seed <= int64(o.Runs); seed++ {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "compare: %s, %s, run %d of %d\n", c.Name, name, seed, o.Runs)
		}
		res, err := harness.Run(ctx, sc, o.Backend(), harness.Options{Store: o.Store, Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("%s, %s, run %d: %w", c.Name, name, seed, err)
		}
		if !res.Pass {
			return nil, fmt.Errorf("%s, %s, run %d failed: %v", c.Name, name, seed, res.Failures)
		}
		out = append(out, res)
	}
	return out, nil
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
