//go:build !nodeimage

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/chaos/docker"
	"github.com/ringleader-dev/ringleader/chaos/docker/engine"
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
	store   string
	json    bool
	junit   string
	image   string
	build   bool
	attach  string
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
	fs.StringVar(&f.backend, "backend", "docker", "where the cluster runs: docker or sim")
	fs.IntVar(&f.repeat, "repeat", 0, "run each scenario N times, a fresh cluster each time (default: the scenario's repeat:)")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the first repetition (repetition i uses seed+i-1; default: the scenario's seed:, else from the clock)")
	fs.StringVar(&f.store, "store", "store", "directory of run directories <store>/<scenario>/<time>/")
	fs.BoolVar(&f.json, "json", false, "print every run's results as a JSON array on stdout")
	fs.StringVar(&f.junit, "junit", "", "also write the runs as JUnit XML to `FILE` for CI: a testsuite per run, a testcase per expectation and checker")
	fs.StringVar(&f.image, "image", defaultImage, "node image tag (docker backend)")
	fs.BoolVar(&f.build, "build", true, "build the node image from this source tree first (docker backend)")
	f.programTimeout = programTimeoutFlag(fs)
	fs.StringVar(&f.system, "system", "", "run scenarios written for a system's model algorithm against the real `SYSTEM` (etcd, or a system file): a raft scenario on etcd with the same timeouts (docker backend)")
	fs.StringVar(&f.engines, "engines", os.Getenv(engine.EnginesEnv), "spread each cluster over these Docker engines, `A,B,...` (hosts or contexts; the first is the one this process uses), which must share one swarm (docs/engines.md); default $"+engine.EnginesEnv)
	fs.StringVar(&f.attach, "attach", "", "play the scenarios on the running `CLUSTER` (compose, or a harness run's label) instead of starting one; its shape must match each scenario's")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader run [scenario.yaml|dir ...] [flags]\n\nRuns scenarios (default: every file in scenarios/) and judges them.\nExit status: 0 all passed, 1 an expectation or checker verdict failed, 2 invalid scenario or flags,\n130 interrupted (SIGINT, SIGTERM, SIGHUP), 141 the output was closed (| head); either way the cluster is removed first.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	paths, status, done := parseInterleaved(fs, args)
	if done {
		return status
	}
	if f.backend != "docker" && f.backend != "sim" {
		return usageError("run", "--backend %q: want docker or sim", f.backend)
	}
	if f.engines != "" {
		if _, err := engine.ParseList(f.engines); err != nil {
			return usageError("run", "--engines: %v", err)
		}
		if f.backend != "docker" {
			return usageError("run", "--engines spreads containers over Docker engines; with --backend %s, cluster.placement groups the nodes", f.backend)
		}
		if f.attach != "" {
			return usageError("run", "--engines starts a cluster of its own; --attach plays on a running one")
		}
	}
	if f.attach != "" {
		if f.backend != "docker" {
			return usageError("run", "--attach runs on a docker cluster; drop --backend %s", f.backend)
		}
		// The cluster is not ours: nothing to build, and the run must
		// not start one of its own.
		f.build = false
	}
	if f.system != "" && f.backend != "docker" {
		return usageError("run", "--system runs the real server, in containers: drop --backend %s (in the simulator, run the scenario as it is: its algorithm is the server's model)", f.backend)
	}
	if err := checkProgramTimeout(*f.programTimeout); err != nil {
		return usageError("run", "%v", err)
	}
	if f.repeat < 0 {
		return usageError("run", "--repeat %d: want a positive count", f.repeat)
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
		if code := attachPrograms(context.Background(), scs, worlds[liveWorld], f.attach, os.Stderr); code != 0 {
			return code
		}
	} else if code := registerPrograms(scs, f.backend, *f.programTimeout, flagGiven(fs, "program-timeout"), os.Stderr); code != 0 {
		return code
	}
	defer program.CloseAll()

	if f.backend != "docker" {
		// A real server runs only as itself, in containers: its
		// scenarios are left out here, naming the model that could run
		// instead, and a run of nothing else is refused.
		var kept []*scenario.Scenario
		for _, sc := range scs {
			if sys := sc.Cluster.System; sys != nil {
				fmt.Fprintf(os.Stderr, "ringleader run: %s: skipped: system %s runs only as its own servers, in containers (--backend docker); %s\n", sc.File, sys.Name, sys.ModelCluster(len(sc.Cluster.IDs), sc.Cluster.Options))
				continue
			}
			kept = append(kept, sc)
		}
		if len(kept) == 0 {
			return 2
		}
		scs = kept
	}
	if f.backend == "docker" {
		// Checked up front too: a simulator-only algorithm would fail
		// only once its containers were starting.
		bad := false
		for _, sc := range scs {
			if a, err := election.Lookup(sc.Cluster.Algorithm); err == nil && a.SimOnly {
				fmt.Fprintf(os.Stderr, "ringleader run: %s: algorithm %s runs in the simulator only (it needs synchrony a real network cannot give); use --backend sim\n", sc.File, a.Name)
				bad = true
			}
		}
		if bad {
			return 2
		}
		if f.attach == "" {
			if code := checkCapacity(scs); code != 0 {
				return code
			}
		}
	}

	ctx, stop, stdout, stderr, outputClosed := interruptible(context.Background())
	defer stop()
	code := runScenarios(ctx, scs, f, stdout, stderr)
	if outputClosed() {
		return exitOutputClosed
	}
	return code
}

func runScenarios(ctx context.Context, scs []*scenario.Scenario, f runFlags, stdout, stderr io.Writer) int {
	w := worlds[f.backend]
	opts := worldOptions{image: f.image, progress: io.Discard, warnings: stderr}
	newBackend := func() chaos.Backend { return w.start(opts) }
	if f.attach != "" {
		newBackend = func() chaos.Backend { return chaos.Attached{Attacher: w.attach(opts), Run: f.attach} }
	}
	if f.backend == "docker" && f.engines != "" {
		es, err := engine.ConnectList(ctx, f.engines)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader run: --engines: %v\n", err)
			return 1
		}
		if len(es) > 1 {
			// The first engine is the process's: the image is built
			// there and copied to the others.
			es[0].Pin()
			opts.engines = es
		}
	}
	if f.backend == "docker" {
		// The docker package sets these in its init too; set here as
		// well so that nothing depends on the import order.
		for k, v := range map[string]string{"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1", "TESTCONTAINERS_RYUK_DISABLED": "true"} {
			if _, ok := os.LookupEnv(k); !ok {
				os.Setenv(k, v)
			}
		}
		if f.build && w.build != nil {
			fmt.Fprintf(stderr, "building node image %s ...\n", f.image)
			t0 := time.Now()
			if err := w.build(ctx, opts); err != nil {
				fmt.Fprintf(stderr, "ringleader run: building the node image: %v\n", err)
				if ctx.Err() != nil {
					return 130 // interrupted; the build removed what it made
				}
				return 1
			}
			fmt.Fprintf(stderr, "built %s in %s\n", f.image, millis.Of(time.Since(t0)))
		}
	}

	t0 := time.Now()
	var results []*harness.Result
	failed, interrupted := false, false
runs:
	for _, sc := range scs {
		reps := sc.Repeat
		if f.repeat > 0 {
			reps = f.repeat
		}
		seed := f.seed
		if sc.Seed != nil && !f.seedSet {
			seed = *sc.Seed
		}
		for rep := 1; rep <= reps; rep++ {
			res, err := harness.Run(ctx, sc, newBackend(), harness.Options{
				Store: f.store, Seed: seed + int64(rep-1), Rep: rep, Reps: reps, Progress: stderr,
			})
			if res != nil {
				results = append(results, res)
				if !res.Pass {
					failed = true
				}
			}
			if err != nil {
				failed = true
				fmt.Fprintf(stderr, "[%s %d/%d] %v\n", sc.Name, rep, reps, err)
				if res != nil {
					// What else the run found (members that never
					// elected, with their logs' ends).
					for _, fl := range res.Failures {
						if !strings.Contains(err.Error(), strings.TrimPrefix(fl, "error: ")) {
							fmt.Fprintf(stderr, "    %s\n", fl)
						}
					}
				}
				if ctx.Err() != nil {
					interrupted = true
					break runs
				}
			} else if res != nil {
				verdict := "PASS"
				if !res.Pass {
					verdict = "FAIL"
				}
				fmt.Fprintf(stderr, "[%s %d/%d] %s (%s) %s\n", sc.Name, rep, reps, verdict, millis.Float(res.WallMillis), res.Dir)
				for _, fl := range res.Failures {
					fmt.Fprintf(stderr, "    %s\n", fl)
				}
			}
		}
	}

	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintf(stderr, "ringleader run: %v\n", err)
		}
	}
	out := stdout
	if f.json {
		out = stderr
	}
	if f.junit != "" {
		// Written whatever happened, an interrupted run included: CI
		// shows what there is.
		if err := harness.WriteJUnit(f.junit, results); err != nil {
			fmt.Fprintf(stderr, "ringleader run: %v\n", err)
			failed = true
		}
	}
	fmt.Fprintln(out)
	harness.Table(out, results)
	fmt.Fprintln(out)
	harness.WriteSummaries(out, harness.Summarise(results))
	fmt.Fprintf(out, "%d run(s) on %s in %s; store: %s\n", len(results), f.backend, millis.Of(time.Since(t0)), absOr(f.store))
	var notClosed []string
	for _, r := range results {
		if r.CloseError != "" {
			notClosed = append(notClosed, fmt.Sprintf("%s: %s", r.Cluster, r.CloseError))
		}
	}
	switch {
	case interrupted && len(notClosed) == 0:
		fmt.Fprintln(out, "interrupted: the cluster was closed, nothing of it is left; the history recorded so far is in the store")
		return 130
	case interrupted:
		fmt.Fprintf(out, "interrupted: the history recorded so far is in the store, but the cluster was NOT all removed:\n  %s\n", strings.Join(notClosed, "\n  "))
		return 130
	case failed:
		return 1
	}
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
// the engine's machine cannot hold (docker.CheckCapacity).
func checkCapacity(scs []*scenario.Scenario) int {
	largest := scs[0]
	for _, sc := range scs {
		if len(sc.Members()) > len(largest.Members()) {
			largest = sc
		}
	}
	if err := docker.CheckCapacity(context.Background(), len(largest.Members())); err != nil {
		return usageError("run", "%s: %v", largest.File, err)
	}
	for _, sc := range scs {
		if note := hastyTiming(sc); note != "" {
			fmt.Fprintf(os.Stderr, "ringleader run: %s: note: %s\n", sc.File, note)
		}
	}
	return 0
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
