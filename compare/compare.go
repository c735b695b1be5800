// Package compare runs algorithms side by side on the same faults, in any
// world, and writes the table: Raft against quorum Bully (docs/raft.md) is
// its first use. The same runs make the simulator's table (held equal to
// the docs by a test, since seeded runs repeat) and the containers' (made
// by `ringleader compare --backend docker`, whose runs do not repeat).
package compare

import (
	"cmp"
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
// Within and Cut, when set, replace the expectations' and stable waits'
// deadlines (5s and 10s) and the cuts' length (3s) for a contender whose elections take longer than
// the default timing's: a NATS election timeout is drawn in 4-9 s.
type Contender struct{ Name, Cluster, Within, Cut string }

// RaftAndBully are Raft as etcd runs it, with each of its options off, and
// quorum Bully.
var RaftAndBully = []Contender{
	{"raft", "{algorithm: raft, nodes: 5}", "", ""},
	{"raft, pre-vote off", "{algorithm: raft, nodes: 5, options: {prevote: false}}", "", ""},
	{"raft, check-quorum off", "{algorithm: raft, nodes: 5, options: {check_quorum: false}}", "", ""},
	{"quorum Bully", "{algorithm: bully, nodes: 5, quorum: majority}", "", ""},
}

// WithSystems are raft and quorum Bully beside the real servers
// (docs/systems.md), containers only: etcd on raft's default timing
// (heartbeat 100 ms, election timeout 500 ms, so the two rows differ only
// in what runs), and NATS JetStream's meta group on its own fixed timers,
// with deadlines and cuts long enough for its 4-9 s elections.
var WithSystems = []Contender{
	RaftAndBully[0],
	RaftAndBully[3],
	{"etcd 3.7.3 (heartbeat 100 ms, election 500 ms)", "{system: etcd, nodes: 5, options: {heartbeat_ms: 100, election_ms: 500}}", "", ""},
	{"nats-jetstream 2.15.2 (its own timers; cuts of 12 s)", "{system: nats-jetstream, nodes: 5}", "40s", "12s"},
}

// The faults, each a scenario every contender runs on the default timing.
// leader: any names no winner, so the same steps fit all of them; {within}
// and {cut} are the contender's deadline and cut length.
const (
	killSteps = `
  - {wait: stable, within: {stable}}
  - kill: leader
  - expect: {leader: any, within: {within}}
  - {wait: stable, within: {stable}}`
	pauseSteps = `
  - {wait: stable, within: {stable}}
  - pause: leader
  - expect: {leader: any, within: {within}}
  - resume: paused
  - {wait: stable, within: {stable}}`
	rejoinSteps = `
  - {wait: stable, within: {stable}}
  - partition: {shape: isolate, target: follower}
  - wait: {cut}
  - heal
  - expect: {leader: any, on: all, within: {within}}
  - {wait: stable, within: {stable}}`
	cutLeaderSteps = `
  - {wait: stable, within: {stable}}
  - partition: {shape: isolate, target: leader}
  - wait: {cut}
  - heal
  - expect: {leader: any, on: all, within: {within}}
  - {wait: stable, within: {stable}}`
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
		messages := fmt.Sprintf("%.1f", msgs/n)
		if kill[0].System != nil {
			messages = "— (a server's messages are not observed)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %s | %s |\n", c.Name, failovers(kill), failovers(pause), changes/n, millis.Float(overlap/n), messages)
	}
	return b.String(), nil
}

// runs plays steps on c's cluster for seeds 1..o.Runs; every run must
// pass (a run that does not says the comparison is broken, not a figure).
func runs(ctx context.Context, c Contender, name, steps string, o Options) ([]*harness.Result, error) {
	// A stable wait's own bound is 10s (docs/scenarios.md).
	within, stable, cut := cmp.Or(c.Within, "5s"), cmp.Or(c.Within, "10s"), cmp.Or(c.Cut, "3s")
	steps = strings.NewReplacer("{within}", within, "{stable}", stable, "{cut}", cut).Replace(steps)
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
