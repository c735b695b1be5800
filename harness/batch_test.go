package harness_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

// batchScenario is a five-node Bully run that kills its leader; it passes
// when the new leader expected is 4 and fails when it is not.
func batchScenario(t *testing.T, name string, want int, seed string) *scenario.Scenario {
	t.Helper()
	src := fmt.Sprintf("name: %s\n%scluster: {algorithm: bully, nodes: 5}\nsteps:\n"+
		"  - wait: stable\n  - kill: leader\n  - expect: {leader: %d, within: 5s}\n  - wait: stable\n", name, seed, want)
	sc, err := scenario.Parse(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func simBackend() chaos.Backend { return &sim.Backend{} }

// TestBatchAggregatesRealRunsInSerialOrder runs a passing and a failing
// scenario twice each in the simulator, three runs at once, and checks what
// `ringleader run` reports from it: every run in the serial order with the
// seeds it would have had, the verdicts, the exit status, and the same
// runs (failover included) as one after another.
func TestBatchAggregatesRealRunsInSerialOrder(t *testing.T) {
	good, bad := batchScenario(t, "good", 4, ""), batchScenario(t, "bad", 3, "")
	var progress strings.Builder
	b := harness.Batch{
		Scenarios: []*scenario.Scenario{good, bad}, Backend: simBackend, Repeat: 2,
		Seed: 7, SeedSet: true, Store: t.TempDir(), Parallel: 3, Progress: &progress,
	}
	out := b.Run(context.Background())

	type run struct {
		scenario  string
		rep, reps int
		seed      int64
		pass      bool
	}
	var got []run
	for _, r := range out.Results {
		got = append(got, run{r.Scenario, r.Rep, r.Reps, r.Seed, r.Pass})
	}
	want := []run{{"good", 1, 2, 7, true}, {"good", 2, 2, 8, true}, {"bad", 1, 2, 7, false}, {"bad", 2, 2, 8, false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
	if !out.Failed || out.Interrupted || out.ExitCode() != harness.ExitFail {
		t.Errorf("failed %v interrupted %v exit %d; want a failed batch, exit %d", out.Failed, out.Interrupted, out.ExitCode(), harness.ExitFail)
	}
	// Progress from runs at once: whole lines, each its run's, and every
	// failure line under a FAIL verdict.
	label := regexp.MustCompile(`^\[(good|bad) [12]/2\] `)
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	for i, l := range lines {
		if !label.MatchString(l) && !(strings.HasPrefix(l, "    ") && i > 0 && (strings.Contains(lines[i-1], "] FAIL (") || strings.HasPrefix(lines[i-1], "    "))) {
			t.Errorf("progress line %d is not a run's whole line: %q", i+1, l)
		}
	}

	serial := b
	serial.Parallel, serial.Progress, serial.Store = 1, nil, t.TempDir()
	one := serial.Run(context.Background())
	if len(one.Results) != len(out.Results) || one.ExitCode() != out.ExitCode() {
		t.Fatalf("serial: %d runs, exit %d; at once: %d runs, exit %d", len(one.Results), one.ExitCode(), len(out.Results), out.ExitCode())
	}
	for i := range one.Results {
		s, p := one.Results[i], out.Results[i]
		if !reflect.DeepEqual(s.Failovers, p.Failovers) || !reflect.DeepEqual(s.Failures, p.Failures) {
			t.Errorf("run %d: serial failovers %v failures %v; at once %v %v", i+1, s.Failovers, s.Failures, p.Failovers, p.Failures)
		}
	}
}

// TestBatchPassesAndTakesAScenariosOwnSeed: a batch of passing runs exits
// 0, and a scenario's seed: is its first run's seed unless one is given.
func TestBatchPassesAndTakesAScenariosOwnSeed(t *testing.T) {
	sc := batchScenario(t, "seeded", 4, "seed: 41\nrepeat: 2\n")
	out := harness.Batch{Scenarios: []*scenario.Scenario{sc}, Backend: simBackend, Seed: 1, Store: t.TempDir(), Parallel: 2}.Run(context.Background())
	if out.ExitCode() != harness.ExitPass || len(out.Results) != 2 {
		t.Fatalf("exit %d with %d runs, want %d with 2: %v", out.ExitCode(), len(out.Results), harness.ExitPass, out.Results)
	}
	if out.Results[0].Seed != 41 || out.Results[1].Seed != 42 {
		t.Errorf("seeds %d, %d; want the scenario's 41, 42", out.Results[0].Seed, out.Results[1].Seed)
	}
}

// TestBatchInterruptedStartsNothingMore: once the context ends, the runs
// under way end, none starts, and the batch exits 130 with what ran.
func TestBatchInterruptedStartsNothingMore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	started := 0
	backend := func() chaos.Backend {
		mu.Lock()
		defer mu.Unlock()
		started++
		if started == 2 {
			cancel() // while the second run is about to start
		}
		return &sim.Backend{}
	}
	sc := batchScenario(t, "cut", 4, "")
	out := harness.Batch{Scenarios: []*scenario.Scenario{sc}, Backend: backend, Repeat: 5, Store: t.TempDir(), Parallel: 1}.Run(ctx)
	if out.ExitCode() != harness.ExitInterrupted || !out.Interrupted {
		t.Errorf("exit %d, interrupted %v; want %d", out.ExitCode(), out.Interrupted, harness.ExitInterrupted)
	}
	if started != 2 {
		t.Errorf("%d backends made, want 2: nothing starts after the interrupt", started)
	}
	if len(out.Results) != 2 || !out.Results[0].Pass || out.Results[1].Pass {
		t.Errorf("results %v; want the first run passed and the interrupted second", out.Results)
	}
}
