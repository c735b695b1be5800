//go:build !nodeimage

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/system"
)

func init() {
	commands["run"] = command{summary: "run scenarios on the docker or sim backend and judge them", run: runCmd}
}

// runFlags are the run command's options.
type runFlags struct {
	backend string
	repeat  int
	seed    int64
	seedSet bool // --seed given: it overrides a scenario's seed:
	// parallel is how many runs go at once (0: the world's default).
	parallel int
	store    string
	json     bool
	junit    string
	image    string
	build    bool
	attach   string
	// system, when set, runs each scenario, written for the system's
	// model algorithm, against the real server (scenario.OnSystem).
	system string
	// engines, when it names more than one, spreads each cluster over
	// those Docker engines (--engines, RINGLEADER_ENGINES).
	engines string
	// programTimeout bounds each answer of a scenario's program.
	programTimeout *time.Duration
}

func runCmd(args []string) int {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.backend, "backend", liveWorld, "where the cluster runs: "+worldNames())
	fs.IntVar(&f.repeat, "repeat", 0, "run each scenario N times, a fresh cluster each time (default: the scenario's repeat:)")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the first repetition (repetition i uses seed+i-1; default: the scenario's seed:, else from the clock)")
	fs.IntVar(&f.parallel, "parallel", 0, "how many runs go at once, each with its own cluster; results, JUnit and the table keep the serial order (0, the default: from the machine, "+parallelRules()+"; 1 with --attach)")
	fs.StringVar(&f.store, "store", "store", "directory of run directories <store>/<scenario>/<time>/")
	fs.BoolVar(&f.json, "json", false, "print every run's results as a JSON array on stdout")
	fs.StringVar(&f.junit, "junit", "", "also write the runs as JUnit XML to `FILE` for CI: a testsuite per run, a testcase per expectation and checker")
	fs.StringVar(&f.image, "image", defaultImage, "node image tag (docker backend)")
	fs.BoolVar(&f.build, "build", true, "build the node image from this source tree first (docker backend)")
	f.programTimeout = programTimeoutFlag(fs)
	fs.StringVar(&f.system, "system", "", "run scenarios written for a system's model algorithm against the real `SYSTEM` (etcd, or a system file): a raft scenario on etcd with the same timeouts (docker backend)")
	fs.StringVar(&f.engines, "engines", os.Getenv(engine.EnginesEnv), "spread each cluster over these Docker engines (with --attach: find the running cluster's nodes on each), `A,B,...` (hosts or contexts; the first is the one this process uses), which must share one swarm (docs/engines.md); default $"+engine.EnginesEnv)
	fs.StringVar(&f.attach, "attach", "", "play the scenarios on the running `CLUSTER` (compose, or a harness run's label) instead of starting one; its shape must match each scenario's")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader run [scenario.yaml|dir ...] [flags]\n\nRuns scenarios (default: every file in scenarios/) and judges them.\nExit status: 0 all passed, 1 an expectation or checker verdict failed, 2 invalid scenario or flags,\n130 interrupted (SIGINT, SIGTERM, SIGHUP), 141 the output was closed (| head); either way the cluster is removed first.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	paths, status, done := parseInterleaved(fs, args)
	if done {
		return status
	}
	w, ok := worlds[f.backend]
	if !ok {
		return usageError("run", "--backend %q: want %s", f.backend, worldNames())
	}
	if f.engines != "" {
		if _, err := engine.ParseList(f.engines); err != nil {
			return usageError("run", "--engines: %v", err)
		}
		if !w.real {
			return usageError("run", "--engines spreads containers over Docker engines; with --backend %s, cluster.placement groups the nodes", f.backend)
		}
	}
	if f.attach != "" {
		if w.attach == nil {
			return usageError("run", "--attach runs on a %s cluster; drop --backend %s", liveWorld, f.backend)
		}
		if f.parallel > 1 {
			return usageError("run", "--attach plays every run on the one running cluster, one at a time; drop --parallel %d", f.parallel)
		}
		// The cluster is not ours: nothing to build, and the run must
		// not start one of its own.
		f.build = false
		f.parallel = 1
	}
	if f.system != "" && !w.real {
		return usageError("run", "--system runs the real server, in containers: drop --backend %s (in the simulator, run the scenario as it is: its algorithm is the server's model)", f.backend)
	}
	if err := checkProgramTimeout(*f.programTimeout); err != nil {
		return usageError("run", "%v", err)
	}
	if f.repeat < 0 {
		return usageError("run", "--repeat %d: want a positive count", f.repeat)
	}
	if f.parallel < 0 {
		return usageError("run", "--parallel %d: want a count of runs at once, or 0 for the machine's default", f.parallel)
	}
	f.seedSet = flagGiven(fs, "seed")
	if !f.seedSet {
		f.seed = time.Now().UnixNano() % 1_000_000_000
	}
	if len(paths) == 0 {
		paths = []string{"scenarios"}
	}
	// Every file is validated before anything starts.
	scs, err := scenario.LoadAll(paths...)
	if err != nil {
		return usageError("run", "invalid scenarios:\n%v", err)
	}

	if f.system != "" {
		if scs, err = onSystem(scs, f.system, os.Stderr); err != nil {
			return usageError("run", "--system %s:\n%v", f.system, err)
		}
	}

	if !checkRunOutputs(os.Stderr, f, scs) {
		return 2
	}

	if f.attach != "" {
		if code := attachPrograms(context.Background(), scs, w, f.attach, f.engines, os.Stderr); code != 0 {
			return code
		}
	} else if code := registerPrograms(scs, w, f.backend, *f.programTimeout, flagGiven(fs, "program-timeout"), os.Stderr); code != 0 {
		return code
	}
	defer program.CloseAll()

	if scs = fitWorld(scs, w); scs == nil {
		return 2
	}
	if runs := (harness.Batch{Scenarios: scs, Repeat: f.repeat}).Runs(); runs > harness.MaxRuns {
		return usageError("run", "%d runs (%d scenario(s), --repeat or each one's repeat:): a batch holds at most %d, each keeping its result until the batch ends; for many fault schedules, use 'ringleader sim explore', which keeps counts", runs, len(scs), harness.MaxRuns)
	}
	if f.attach == "" && w.capacity != nil {
		if code := checkCapacity(scs, w, f.engines, f.parallel, f.repeat); code != 0 {
			return code
		}
	}
	if f.parallel == 0 {
		f.parallel = defaultParallel(scs, w)
	}

	ctx, stop, stdout, stderr, outputClosed := interruptible(context.Background())
	defer stop()
	code := runScenarios(ctx, scs, f, w, stdout, stderr)
	if outputClosed() {
		return exitOutputClosed
	}
	return code
}

// fitWorld leaves out, or refuses, before anything starts, what cannot run
// in w: a real server runs only as itself, in a real world, so its
// scenarios are left out elsewhere (and a run of nothing else refused); a
// simulator-only algorithm would fail only once its containers were
// starting. nil: refused, said on stderr.
func fitWorld(scs []*scenario.Scenario, w world) []*scenario.Scenario {
	var kept []*scenario.Scenario
	bad := false
	for _, sc := range scs {
		if sc.Cluster.System != nil && !w.real {
			sys := sc.Cluster.System
			fmt.Fprintf(os.Stderr, "ringleader run: %s: skipped: system %s runs only as its own servers, in containers (--backend %s); %s\n", sc.File, sys.Name, liveWorld, sys.ModelCluster(len(sc.Cluster.IDs), sc.Cluster.Options))
			continue
		}
		if a, err := election.Lookup(sc.Cluster.Algorithm); err == nil && a.SimOnly && w.real {
			fmt.Fprintf(os.Stderr, "ringleader run: %s: algorithm %s runs in the simulator only (it needs synchrony a real network cannot give); use --backend %s\n", sc.File, a.Name, simWorld)
			bad = true
		}
		kept = append(kept, sc)
	}
	if bad || len(kept) == 0 {
		return nil
	}
	return kept
}

// defaultParallel is --parallel's default: the world's rule for these
// scenarios' cluster sizes, and one run at a time when the rule cannot be
// read (the run then reports why the world does not answer).
func defaultParallel(scs []*scenario.Scenario, w world) int {
	sizes := make([]int, len(scs))
	for i, sc := range scs {
		sizes[i] = len(sc.Members())
	}
	n, err := w.parallel(context.Background(), sizes)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// parallelRules is the rule of every world, for the help.
func parallelRules() string {
	var rules []string
	for _, name := range slices.Sorted(maps.Keys(worlds)) {
		rules = append(rules, name+", "+worlds[name].parallelRule)
	}
	return strings.Join(rules, "; ")
}

// runScenarios runs the batch and prints its verdict: the results as JSON
// or JUnit when asked, the table, the summaries, and what an interrupt
// left. It returns the exit status.
func runScenarios(ctx context.Context, scs []*scenario.Scenario, f runFlags, w world, stdout, stderr io.Writer) int {
	if f.parallel > 1 {
		// The runs' progress and the backends' warnings share stderr.
		stderr = harness.SharedWriter(stderr)
	}
	opts := worldOptions{image: f.image, progress: io.Discard, warnings: stderr}
	newBackend := func() chaos.Backend { return w.start(opts) }
	if f.attach != "" {
		newBackend = func() chaos.Backend { return chaos.Attached{Attacher: w.attach(opts), Run: f.attach} }
	}
	if w.real && f.engines != "" {
		// The first engine is the process's: the image is built there
		// and copied to the others.
		es, err := connectEngines(ctx, f.engines)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader run: --engines: %v\n", err)
			return 1
		}
		if len(es) > 1 {
			opts.engines = es
		}
	}
	if f.build {
		if code := buildWorld(ctx, w, opts, "run", stderr); code != 0 {
			return code
		}
	}

	t0 := time.Now()
	out := harness.Batch{
		Scenarios: scs, Backend: newBackend, Repeat: f.repeat, Seed: f.seed, SeedSet: f.seedSet,
		Store: f.store, Parallel: f.parallel, Progress: stderr,
	}.Run(ctx)
	results := out.Results

	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintf(stderr, "ringleader run: %v\n", err)
		}
	}
	table := stdout
	if f.json {
		table = stderr
	}
	if f.junit != "" {
		// Written whatever happened, an interrupted run included: CI
		// shows what there is.
		if err := harness.WriteJUnit(f.junit, results); err != nil {
			fmt.Fprintf(stderr, "ringleader run: %v\n", err)
			out.Failed = true
		}
	}
	fmt.Fprintln(table)
	harness.Table(table, results)
	fmt.Fprintln(table)
	harness.WriteSummaries(table, harness.Summarise(results))
	fmt.Fprintf(table, "%d run(s) on %s in %s; store: %s\n", len(results), f.backend, millis.Of(time.Since(t0)), absOr(f.store))
	if out.Interrupted {
		if notClosed := out.NotClosed(); len(notClosed) > 0 {
			fmt.Fprintf(table, "interrupted: the history recorded so far is in the store, but the cluster was NOT all removed:\n  %s\n", strings.Join(notClosed, "\n  "))
		} else {
			fmt.Fprintln(table, "interrupted: the cluster was closed, nothing of it is left; the history recorded so far is in the store")
		}
	}
	return out.ExitCode()
}

// buildWorld makes what starting w's clusters needs (the node image), if
// anything, saying so on stderr. Status 0 when done, 130 interrupted, 1
// failed.
func buildWorld(ctx context.Context, w world, o worldOptions, cmd string, stderr io.Writer) int {
	if w.build == nil {
		return 0
	}
	fmt.Fprintf(stderr, "building node image %s ...\n", o.image)
	t0 := time.Now()
	if err := w.build(ctx, o); err != nil {
		fmt.Fprintf(stderr, "ringleader %s: building the node image: %v\n", cmd, err)
		if ctx.Err() != nil {
			return harness.ExitInterrupted // the build removed what it made
		}
		return 1
	}
	fmt.Fprintf(stderr, "built %s in %s\n", o.image, millis.Of(time.Since(t0)))
	return 0
}

// onSystem maps every scenario to the system named (scenario.OnSystem),
// saying on w how each was mapped; every error of every file at once.
func onSystem(scs []*scenario.Scenario, name string, w io.Writer) ([]*scenario.Scenario, error) {
	sys, err := system.Lookup(name, ".")
	if err != nil {
		return nil, err
	}
	var out []*scenario.Scenario
	var errs []error
	for _, sc := range scs {
		on, err := scenario.OnSystem(sc, sys)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "ringleader run: %s: %s\n", sc.File, scenario.Mapping(sc, on))
		out = append(out, on)
	}
	return out, errors.Join(errs...)
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// checkCapacity refuses, before anything starts, a scenario whose cluster
// the world's machine cannot hold (w.capacity), or, spread over the
// engines listed (--engines), a machine holding several of them cannot
// (w.spreadCapacity).
func checkCapacity(scs []*scenario.Scenario, w world, engines string, parallel, repeat int) int {
	largest := scs[0]
	for _, sc := range scs {
		if len(sc.Members()) > len(largest.Members()) {
			largest = sc
		}
	}
	ctx := context.Background()
	if err := w.capacity(ctx, len(largest.Members())); err != nil {
		return usageError("run", "%s: %v", largest.File, err)
	}
	// An explicit --parallel puts that many clusters on the engine at
	// once, which must fit as one cluster would (the default is chosen
	// to fit).
	if together, runs := nodesAtOnce(scs, parallel, repeat); runs > 1 && together > len(largest.Members()) {
		if err := w.capacity(ctx, together); err != nil {
			return usageError("run", "--parallel %d: %d runs at once hold %d nodes together; lower it, or leave it out to have it chosen to fit. %v", parallel, runs, together, err)
		}
	}
	if engines != "" && w.spreadCapacity != nil {
		es, err := connectEngines(ctx, engines)
		if err != nil {
			return usageError("run", "--engines: %v", err)
		}
		for _, sc := range scs {
			if err := w.spreadCapacity(ctx, es, sc.Members(), sc.Cluster.Placement); err != nil {
				return usageError("run", "%s: %v", sc.File, err)
			}
		}
	}
	for _, sc := range scs {
		if note := hastyTiming(sc); note != "" {
			fmt.Fprintf(os.Stderr, "ringleader run: %s: note: %s\n", sc.File, note)
		}
	}
	return 0
}

// nodesAtOnce is how many nodes the largest runs that --parallel puts
// side by side hold together, and how many runs that is (each scenario
// counted once per repetition, as the batch runs it).
func nodesAtOnce(scs []*scenario.Scenario, parallel, repeat int) (nodes, runs int) {
	b := harness.Batch{Repeat: repeat}
	var sizes []int
	for _, sc := range scs {
		for range min(b.Repeats(sc), max(parallel, 1)) { // no more than run at once
			sizes = append(sizes, len(sc.Members()))
		}
	}
	slices.Sort(sizes)
	slices.Reverse(sizes)
	runs = min(max(parallel, 1), len(sizes))
	for _, n := range sizes[:runs] {
		nodes += n
	}
	return nodes, runs
}

// hastyTiming is a note for a scenario that gives a large cluster a
// suspicion shorter than the default for its size (election.DefaultTimingFor):
// admitted, since the timing is the scenario's to choose, but measured on
// 2 cores to turn a leader's death into elections that never settle
// (48 and 64 nodes with 500 ms, docs/performance.md).
func hastyTiming(sc *scenario.Scenario) string {
	n := len(sc.Members())
	want := election.DefaultTimingFor(n)
	if want == election.DefaultTiming || sc.Cluster.Timing.Suspicion >= want.Suspicion {
		return ""
	}
	return fmt.Sprintf("%d nodes with a %v suspicion, shorter than the %v the defaults give that many; "+
		"on a small machine a leader's death can then set every node electing at once without settling (docs/performance.md, \"How many containers\"). "+
		"Leave the timing out to get the defaults", n, sc.Cluster.Timing.Suspicion, want.Suspicion)
}
