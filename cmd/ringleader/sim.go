//go:build !nodeimage

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/progress"
	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/sim"
)

func init() {
	commands["sim"] = command{
		summary:     "run elections in the deterministic simulator (complexity, explore)",
		run:         runSim,
		subcommands: simSubcommands,
	}
}

const simUsage = `Usage: ringleader sim complexity --algorithm A --n N [flags]
       ringleader sim explore --algorithm A --n N --schedules K --seed S [flags]
       ringleader sim explore --program "COMMAND ARGS" --n N --schedules K --seed S [flags]

Runs elections in the deterministic simulator: no containers, no clock.

Subcommands:
  complexity  one fault-free election; its messages against the published formula
  explore     random fault schedules judged by the checkers the algorithm claims

Run 'ringleader help sim SUBCOMMAND' for a subcommand's flags and exit status.
`

const simComplexityUsage = `Usage: ringleader sim complexity --algorithm A --n N [--option NAME=VALUE]... [--ids 3,1,4,... | --arrangement best|worst|random --seed S] [--json] [--heartbeats] [--max-time D] [--max-messages M] [--max-memory SIZE]

One fault-free election, every node starting at once, run until quiet;
prints the election messages against the published formula. --n takes a
list (--n 4,8,16) for one row per size. Nothing fails, so no failure
detector runs unless --heartbeats asks for it; a run that passes --max-time
of virtual time, --max-messages or --max-memory stops with an error, and a
run longer than two seconds prints progress on stderr.

Exit status: 0 every election ended quiet and agreed, 1 one did not, hit a
cap or failed, 2 bad flags.

Flags:
`

const simExploreUsage = `Usage: ringleader sim explore --algorithm A --n N --schedules K --seed S [--quorum majority] [--option NAME=VALUE]... [--kinds K,...] [--json] [--shrink [--save DIR]]
       ringleader sim explore --program "COMMAND ARGS" [--image IMAGE] ... (a program of your own: docs/protocol.md)
       ringleader sim explore --merge [--json] SHARD.json... (the --json results of every --shard i/n of one exploration)

K random fault schedules (crashes, pauses, partitions, one-way and
non-transitive cuts, loss, delay), each ending with a heal and a quiet
period, judged by the checkers the algorithm claims; every failing schedule
comes with the command that replays it. Schedules are scenario steps:
--shrink minimises each failing one while the same checker still fails, and
--save DIR writes it as DIR/<algorithm>-<checker>-<seed>.yaml, a scenario
file that 'ringleader run' passes exactly when the failure reproduces, in
the simulator or in containers (for a program that needs an interpreter
there, --image names the image that holds it, written into the files).
Progress goes to stderr: a bar with rate and time left on a terminal, a
line every few seconds otherwise. A schedule whose simulator passes
--max-memory ends the exploration with an error.

Exit status: 0 every claimed property held, 1 one failed (or the work
failed), 2 bad flags.

Flags:
`

// simSubcommands are sim's subcommands, for help and completion.
var simSubcommands = []string{"complexity", "explore"}

func runSim(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(errOut, simUsage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(helpOut, simUsage)
		return 0
	case "complexity":
		return runSimComplexity(args[1:], os.Stdout, errOut)
	case "explore":
		return runSimExplore(args[1:], os.Stdout, errOut)
	}
	return usageError("sim", "unknown subcommand %q (valid: %s)", args[0], strings.Join(simSubcommands, ", "))
}

// badFlag reports a bad flag value in the CLI's one shape and returns 2.
func badFlag(stderr io.Writer, sub string, err error) int {
	return usageErrorTo(stderr, "sim "+sub, "%v", err)
}

func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("ringleader sim "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		printFlags(fs.Output(), fs)
	}
	return fs
}

// resolveSetup reads --quorum and the --option flags for alg and
// resolves them to what the run will use (election.Algorithm.Resolve).
func resolveSetup(alg election.Algorithm, quorum string, opts election.Options) (election.QuorumMode, election.Options, error) {
	q, err := election.ParseQuorum(quorum)
	if err != nil {
		return q, nil, fmt.Errorf("--%w", err)
	}
	if q, err = alg.ResolveQuorum(q); err != nil {
		return q, nil, fmt.Errorf("--quorum: %w", err)
	}
	if opts, err = alg.ResolveOptions(opts); err != nil {
		return q, nil, fmt.Errorf("--option: %w", err)
	}
	return q, opts, nil
}

// optionFlag declares the repeatable --option NAME=VALUE flag.
func optionFlag(fs *flag.FlagSet) election.Options {
	opts := election.Options{}
	fs.Var(opts, "option", "an algorithm option NAME=VALUE (repeatable, or NAME=VALUE,...); see the README's algorithm table")
	return opts
}

func parseNs(s string) ([]int, error) {
	var out []int
	for i, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--n %q: element %d (%q) is not a positive integer", s, i+1, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// memoryHint is what to add to err when the memory budget stopped a run.
func memoryHint(err error) string {
	var capped *sim.CapError
	if errors.As(err, &capped) && capped.Cap == "memory" {
		return "; raise it with --max-memory (or --max-memory none), or lower --n or --workers"
	}
	return ""
}

// maxMemoryFlag is --max-memory of the sim commands: the simulation's
// memory budget (sim.ParseMaxMemory reads it).
func maxMemoryFlag(fs *flag.FlagSet) *string {
	return fs.String("max-memory", "", "stop with an error when this process holds more memory than this, rather than be killed by the kernel: a size (8GiB, 512MiB) or none; default: 80% of the memory available at the start")
}

func runSimComplexity(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("complexity", simComplexityUsage)
	algName := fs.String("algorithm", "", "algorithm name (required)")
	nList := fs.String("n", "", "node count, or a comma-separated list of counts")
	idList := fs.String("ids", "", "explicit ring order, e.g. 3,1,4,5,2 (instead of --n and --arrangement)")
	arrangement := fs.String("arrangement", "random", "ring order of IDs 1..n: best (increasing), worst (decreasing) or random")
	seed := fs.Int64("seed", 1, "seed of the random arrangement and of the network")
	delay := fs.String("delay", "1ms", "message delay: 2ms, uniform:1ms-5ms or exp:1ms-3ms")
	quorum := fs.String("quorum", "", "quorum mode: majority or none (default: the algorithm's)")
	given := optionFlag(fs)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	heartbeats := fs.Bool("heartbeats", false, "run the failure detector too (heartbeats, pings, hop acknowledgements), counted as maintenance; without it only the election's own messages are sent")
	maxTime := fs.Duration("max-time", sim.DefaultMaxTime, "stop with an error when the election is still running after this much virtual time")
	maxMessages := fs.Int("max-messages", sim.DefaultMaxMessages, "stop with an error when the election has sent this many messages (every class) and still runs; -1: no cap")
	maxMemFlag := maxMemoryFlag(fs)
	if status, done := parseFlagsTo(fs, args, stderr); done {
		return status
	}
	if fs.NArg() > 0 {
		return badFlag(stderr, "complexity", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	maxMemory, err := sim.ParseMaxMemory(*maxMemFlag)
	if err != nil {
		return badFlag(stderr, "complexity", err)
	}
	if *maxTime <= 0 {
		return badFlag(stderr, "complexity", fmt.Errorf("--max-time %v: must be positive", *maxTime))
	}
	if *maxMessages == 0 || *maxMessages < -1 {
		return badFlag(stderr, "complexity", fmt.Errorf("--max-messages %d: must be positive, or -1 for no cap", *maxMessages))
	}
	if *algName == "" {
		return badFlag(stderr, "complexity", fmt.Errorf("--algorithm is required (known: %s)", knownAlgorithms()))
	}
	alg, err := election.Lookup(*algName)
	if err != nil {
		return badFlag(stderr, "complexity", err)
	}
	q, algOpts, err := resolveSetup(alg, *quorum, given)
	if err != nil {
		return badFlag(stderr, "complexity", err)
	}
	d, err := sim.ParseDist(*delay)
	if err != nil {
		return badFlag(stderr, "complexity", err)
	}
	var rings [][]election.NodeID
	arrangementSet := false
	fs.Visit(func(f *flag.Flag) { arrangementSet = arrangementSet || f.Name == "arrangement" })
	switch {
	case *idList != "":
		if arrangementSet {
			return badFlag(stderr, "complexity", fmt.Errorf("--ids and --arrangement both given; --ids is the arrangement"))
		}
		ids, err := sim.ParseIDs(*idList)
		if err != nil {
			return badFlag(stderr, "complexity", err)
		}
		if *nList != "" && *nList != strconv.Itoa(len(ids)) {
			return badFlag(stderr, "complexity", fmt.Errorf("--n %s but --ids lists %d IDs", *nList, len(ids)))
		}
		rings = append(rings, ids)
	case *nList == "":
		return badFlag(stderr, "complexity", fmt.Errorf("give --n (with --arrangement) or --ids"))
	default:
		ns, err := parseNs(*nList)
		if err != nil {
			return badFlag(stderr, "complexity", err)
		}
		for _, n := range ns {
			// Before the ring is laid out: n IDs alone can be more
			// than the machine holds.
			if err := sim.CheckNodes(n, maxMemory); err != nil {
				return badFlag(stderr, "complexity", fmt.Errorf("--n %d: %w; lower --n or raise --max-memory", n, err))
			}
			ids, err := sim.Arrange(*arrangement, n, *seed)
			if err != nil {
				return badFlag(stderr, "complexity", err)
			}
			rings = append(rings, ids)
		}
	}

	enc := json.NewEncoder(stdout)
	var rows []sim.Complexity
	status := 0
	// On a terminal the progress line is redrawn in place (and ended
	// before anything else is printed); in a log it is a line each time.
	tty, drawn := isTerminalWriter(stderr), false
	for i, ids := range rings {
		lim := sim.Limits{MaxTime: *maxTime, MaxMessages: *maxMessages, Progress: func(p sim.Progress) {
			line := fmt.Sprintf("complexity: %s n=%d (%d of %d): %v of virtual time, %d messages sent, %d delivered, %.0fs elapsed",
				alg.Name, len(ids), i+1, len(rings), p.Virtual.Round(time.Millisecond), p.Sent, p.Delivered, p.Elapsed.Seconds())
			if tty {
				fmt.Fprintf(stderr, "\r%s\x1b[K", line)
				drawn = true
				return
			}
			fmt.Fprintln(stderr, line)
		}}
		opts := sim.Options{Algorithm: alg.Name, Quorum: q, Options: algOpts, Seed: *seed, Delay: d, FaultFree: !*heartbeats, MaxMemory: maxMemory}
		c, err := sim.RunComplexityWithin(opts, ids, lim)
		if drawn {
			fmt.Fprintln(stderr)
			drawn = false
		}
		if capped, ok := err.(*sim.CapError); ok {
			flag := map[string]string{"time": "--max-time", "messages": "--max-messages", "memory": "--max-memory"}[capped.Cap]
			fmt.Fprintf(stderr, "ringleader sim complexity: %s n=%d: %v; raise the cap with %s\n", alg.Name, len(ids), capped, flag)
			return 1
		}
		if err != nil {
			fmt.Fprintf(stderr, "ringleader sim complexity: %v\n", err)
			return 1
		}
		if !c.Quiet || !c.Agreed {
			status = 1
		}
		if *asJSON {
			if err := enc.Encode(c); err != nil {
				fmt.Fprintf(stderr, "ringleader sim complexity: %v\n", err)
				return 1
			}
			continue
		}
		rows = append(rows, c)
	}
	if !*asJSON {
		printComplexity(stdout, rows)
	}
	return status
}

func printComplexity(w io.Writer, rows []sim.Complexity) {
	fmt.Fprintf(w, "%-14s %7s %7s %10s %9s %12s  %-22s %s\n", "algorithm", "n", "leader", "election", "announce", "maintenance", "formula", "")
	for _, c := range rows {
		formula, verdict := "-", ""
		if c.Formula != nil {
			rel := "="
			if !c.Formula.Exact {
				rel = "<="
			}
			formula = fmt.Sprintf("%s %s %s", c.Formula.Name, rel, strconv.FormatFloat(c.Formula.Value, 'f', -1, 64))
			if *c.MatchesFormula {
				verdict = "ok"
			} else {
				verdict = "MISMATCH"
			}
		}
		leader := strconv.Itoa(int(c.Leader))
		if !c.Agreed {
			leader = "none"
		}
		fmt.Fprintf(w, "%-14s %7d %7s %10d %9d %12d  %-22s %s\n", c.Algorithm, c.N, leader, c.Messages, c.AnnounceMessages, c.MaintenanceMessages, formula, verdict)
		if len(c.IDs) <= 20 {
			fmt.Fprintf(w, "  ring %v, elected after %.1f ms of virtual time; by type: %s\n", c.IDs, c.ElectedAfterMillis, byType(c.ByType))
		} else {
			fmt.Fprintf(w, "  elected after %.1f ms of virtual time; by type: %s\n", c.ElectedAfterMillis, byType(c.ByType))
		}
		if !c.Quiet {
			fmt.Fprintf(w, "  still electing when the virtual-time limit ran out\n")
		}
	}
}

func byType(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func knownAlgorithms() string {
	var names []string
	for _, a := range election.Algorithms() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

func runSimExplore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explore", simExploreUsage)
	algName := fs.String("algorithm", "", "algorithm name (this or --program)")
	progLine := fs.String("program", "", "instead of --algorithm: a program's command line, speaking docs/protocol.md (\"python3 examples/bully-python/bully.py\")")
	progTimeout := programTimeoutFlag(fs)
	image := fs.String("image", "", "with --program and --save: the image that holds the program's runtime on the docker backend, written into the saved files (cluster.image; \"ringleader-python:bookworm\")")
	n := fs.Int("n", 5, "node count (IDs 1..n)")
	engines := fs.Int("engines", 1, "place the nodes round-robin over this many engines, the groups the partition shape engines cuts along (--kinds engines)")
	schedules := fs.Int("schedules", 1000, "number of random fault schedules")
	seed := fs.Int64("seed", 1, "top-level seed; schedule 0 uses it as is, so --schedules 1 --seed X replays the schedule with seed X")
	quorum := fs.String("quorum", "", "quorum mode: majority or none (default: the algorithm's)")
	given := optionFlag(fs)
	faults := fs.Int("faults", 12, "at most this many faults per schedule")
	kindList := fs.String("kinds", "", "comma-separated fault kinds to draw (default all: "+strings.Join(explore.Kinds, ",")+")")
	workers := fs.Int("workers", 0, "schedules run in parallel (0: one per CPU); results do not depend on it")
	pin := fs.Bool("pin", true, "with --program: run each worker, and the program processes it starts, on one CPU (round-robin over the CPUs), so that an exchange switches tasks on one CPU instead of waking another; false leaves placement to the kernel. Results do not depend on it")
	shardFlag := fs.String("shard", "", "run only shard i/n of the schedules (schedule k when k mod n = i), for --merge; with --json")
	processes := fs.Int("processes", 0, "run the schedules in this many processes of this program, --workers shared among them, and merge their results (0: one per worker for raft, whose library runs one machine at a time per process; one otherwise)")
	merge := fs.Bool("merge", false, "merge the --json results of every --shard of one exploration, given as files, into one summary")
	hist := fs.String("history", "", "with --schedules 1: write the schedule's full history (JSON lines) to this file")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	shrink := fs.Bool("shrink", false, "minimise each failing (and split-brain) schedule while the same checker still fails")
	save := fs.String("save", "", "with --shrink: write each shrunk schedule as a scenario file DIR/<algorithm>-<checker>-<seed>.yaml")
	shrinkMax := fs.Int("shrink-max", 5, "with --shrink: shrink at most this many schedules")
	shrinkSeeds := fs.Int("shrink-seeds", 3, "with --shrink: a candidate must fail on this many simulator seeds")
	shrinkBudget := fs.Int("shrink-budget", 300, "with --shrink: at most this many candidates per schedule")
	shrinkTime := fs.Duration("shrink-time", 2*time.Minute, "with --shrink: stop shrinking after this long in all, keeping the smallest schedules found")
	maxMemFlag := maxMemoryFlag(fs)
	if status, done := parseFlagsTo(fs, args, stderr); done {
		return status
	}
	if *merge {
		return mergeExplore(fs, *asJSON, stdout, stderr)
	}
	if fs.NArg() > 0 {
		return badFlag(stderr, "explore", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	shard, err := shardFlags(*shardFlag, *processes, *shrink, *hist, *asJSON)
	if err != nil {
		return badFlag(stderr, "explore", err)
	}
	maxMemory, err := sim.ParseMaxMemory(*maxMemFlag)
	if err != nil {
		return badFlag(stderr, "explore", err)
	}
	switch {
	case *save != "" && !*shrink:
		return badFlag(stderr, "explore", fmt.Errorf("--save writes shrunk schedules: add --shrink"))
	case *image != "" && (*progLine == "" || *save == ""):
		return badFlag(stderr, "explore", fmt.Errorf("--image %s: it names a program's image in the files --save writes: give --program and --save", *image))
	case *shrinkMax < 1 || *shrinkSeeds < 1 || *shrinkBudget < 1 || *shrinkTime <= 0:
		return badFlag(stderr, "explore", fmt.Errorf("--shrink-max, --shrink-seeds, --shrink-budget and --shrink-time must be positive"))
	}
	switch {
	case *algName != "" && *progLine != "":
		return badFlag(stderr, "explore", fmt.Errorf("--algorithm and --program both given: explore one or the other"))
	case *progLine != "":
		q, err := election.ParseQuorum(*quorum)
		if err != nil {
			return badFlag(stderr, "explore", err)
		}
		if err := checkProgramTimeout(*progTimeout); err != nil {
			return badFlag(stderr, "explore", err)
		}
		name, status := programFlag(*progLine, q, *n, *progTimeout, stderr, "explore")
		if status != 0 {
			return status
		}
		defer program.CloseAll()
		*algName = name
	case *algName == "":
		return badFlag(stderr, "explore", fmt.Errorf("--algorithm or --program is required (known algorithms: %s)", knownAlgorithms()))
	}
	alg, err := election.Lookup(*algName)
	if err != nil {
		return badFlag(stderr, "explore", err)
	}
	q, algOpts, err := resolveSetup(alg, *quorum, given)
	if err != nil {
		return badFlag(stderr, "explore", err)
	}
	switch {
	case *n < 1:
		return badFlag(stderr, "explore", fmt.Errorf("--n %d: need at least one node", *n))
	case *workers < 0:
		return badFlag(stderr, "explore", fmt.Errorf("--workers %d: want a count of schedules at once, or 0 for one per CPU", *workers))
	case *engines < 1 || *engines > *n:
		return badFlag(stderr, "explore", fmt.Errorf("--engines %d: want 1 to --n (%d): every engine holds a node", *engines, *n))
	case *schedules < 1:
		return badFlag(stderr, "explore", fmt.Errorf("--schedules %d: need at least one", *schedules))
	case *faults < 1:
		return badFlag(stderr, "explore", fmt.Errorf("--faults %d: need at least one", *faults))
	case *hist != "" && *schedules != 1:
		return badFlag(stderr, "explore", fmt.Errorf("--history needs --schedules 1 (it records one schedule)"))
	}
	// Before the member list is made: --n IDs alone can be more than the
	// machine holds. explore.Run checks again with its workers counted.
	if err := sim.CheckNodes(*n, maxMemory); err != nil {
		return badFlag(stderr, "explore", fmt.Errorf("--n %d: %w; lower --n or raise --max-memory", *n, err))
	}
	if !checkOutputs(stderr, "sim explore",
		outputPath{flag: "--history", path: *hist, kind: outpath.File, ours: &outpath.HistoryFile},
		outputPath{flag: "--save", path: *save, kind: outpath.Dir}) {
		return 2
	}
	opts := explore.Options{
		Algorithm: alg.Name, N: *n, Quorum: q, Options: algOpts, Schedules: *schedules, Seed: *seed,
		MaxFaults: *faults, Workers: *workers, Image: *image, Shard: shard,
		Unpinned: !*pin, MaxMemory: maxMemory,
		Placement: chaos.RoundRobin(election.FirstIDs(*n), *engines),
	}
	if *kindList != "" {
		opts.Kinds = strings.Split(*kindList, ",")
		for _, k := range opts.Kinds {
			if !slices.Contains(explore.Kinds, k) {
				return badFlag(stderr, "explore", fmt.Errorf("--kinds %q: unknown kind %q (valid: %s)", *kindList, k, strings.Join(explore.Kinds, ", ")))
			}
		}
	}

	if *save != "" {
		// Found now, not after exploring and shrinking: a schedule
		// that could not be saved (more nodes than a scenario file
		// holds, say).
		if err := explore.CheckSave(opts); err != nil {
			return badFlag(stderr, "explore", fmt.Errorf("--save %s: %w", *save, err))
		}
	}

	if *hist != "" {
		return exploreOne(opts, *hist, *asJSON, stdout, stderr)
	}
	if p := exploreProcesses(*processes, *workers, *schedules, alg, *shardFlag != "" || *shrink); p > 1 {
		return exploreInProcesses(args, p, *workers, *schedules, maxMemory, *asJSON, stdout, stderr)
	}

	start := time.Now()
	// Progress on stderr whatever the size: one schedule of a large
	// cluster can take seconds, so the meter ticks between schedules too.
	meter := progress.New(stderr, isTerminalWriter(stderr), "explore", "schedules", *schedules, time.Now)
	opts.Progress = toParent(meter.Set)
	meter.Start()
	res, err := explore.Run(opts)
	meter.Done()
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: %v%s\n", err, memoryHint(err))
		return 1
	}
	elapsed := time.Since(start)
	var shrunk []explore.Shrunk
	status := 0 // a schedule that could not be saved; the summary is printed all the same
	if *shrink {
		so := explore.ShrinkOptions{Seeds: *shrinkSeeds, Budget: *shrinkBudget, Deadline: time.Now().Add(*shrinkTime)}
		shrunk, status = shrinkAndSave(opts, res, *shrinkMax, so, *save, stderr)
	}
	if printed := printExploreResult(res, elapsed, shrunk, *asJSON, stdout, stderr); printed != 0 || status != 0 {
		return 1
	}
	return 0
}

// exploreJSON is what sim explore --json prints.
type exploreJSON struct {
	explore.Result
	Seconds            float64          `json:"seconds"`
	SchedulesPerSecond float64          `json:"schedules_per_second"`
	SimulatedPerSecond float64          `json:"simulated_per_second"`
	Shrunk             []explore.Shrunk `json:"shrunk,omitempty"`
}

// printExploreResult prints res as text or JSON and returns the exit
// status it calls for: 1 when a claimed property failed or the output
// could not be written.
func printExploreResult(res explore.Result, elapsed time.Duration, shrunk []explore.Shrunk, asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		out := exploreJSON{res, elapsed.Seconds(), float64(res.Schedules) / elapsed.Seconds(), res.SimulatedSeconds / elapsed.Seconds(), shrunk}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			fmt.Fprintf(stderr, "ringleader sim explore: %v\n", err)
			return 1
		}
	} else {
		printExplore(stdout, res, elapsed)
		printShrunk(stdout, shrunk)
	}
	if res.Failed() {
		return 1
	}
	return 0
}

// shrinkAndSave shrinks the failures of res, with progress on stderr, and
// saves each shrunk schedule under dir when dir is set (explore.ShrinkAndSave).
// A schedule that cannot be shrunk or saved is reported and the others
// still are; one that could not be saved makes the status 1.
func shrinkAndSave(opts explore.Options, res explore.Result, max int, so explore.ShrinkOptions, dir string, stderr io.Writer) ([]explore.Shrunk, int) {
	if res.FailedSchedules+len(res.SplitBrain) == 0 {
		fmt.Fprintf(stderr, "explore: nothing to shrink: no schedule failed\n")
		return nil, 0
	}
	so.Progress = func(line string) { fmt.Fprintf(stderr, "shrink: %s\n", line) }
	var shrunk []explore.Shrunk
	status := 0
	for _, s := range explore.ShrinkAndSave(opts, explore.FailureJobs(res, max), so, dir) {
		switch {
		case s.Err != nil && s.Shrunk.StepCount == 0:
			fmt.Fprintf(stderr, "shrink: %v\n", s.Err) // not shrunk
			continue
		case s.Err != nil:
			fmt.Fprintf(stderr, "ringleader sim explore: %v\n", s.Err) // shrunk, not saved
			status = 1
		}
		sh := s.Shrunk
		fmt.Fprintf(stderr, "shrink: seed %d (%s): %d steps → %d (%d fault steps) after %d tries\n",
			sh.Seed, sh.Checker, sh.From, sh.StepCount, sh.FaultSteps, sh.Tried)
		shrunk = append(shrunk, sh)
	}
	return shrunk, status
}

func printShrunk(w io.Writer, shrunk []explore.Shrunk) {
	if len(shrunk) == 0 {
		return
	}
	fmt.Fprintf(w, "\nshrunk:\n")
	for _, sh := range shrunk {
		where := ""
		if sh.File != "" {
			where = " → " + sh.File
		}
		fmt.Fprintf(w, "  seed %d, %s: %d steps, %d of them faults%s\n", sh.Seed, sh.Checker, sh.StepCount, sh.FaultSteps, where)
		for _, st := range sh.Steps {
			fmt.Fprintf(w, "    %s\n", st)
		}
	}
}

// exploreOne replays one schedule and keeps its whole history.
func exploreOne(opts explore.Options, path string, asJSON bool, stdout, stderr io.Writer) int {
	w, err := history.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: %v\n", err)
		return 1
	}
	sc, err := explore.One(opts, opts.Seed, w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: %v\n", err)
		return 1
	}
	if asJSON {
		json.NewEncoder(stdout).Encode(sc)
	} else {
		printSchedule(stdout, sc)
		fmt.Fprintf(stdout, "history: %s\n", path)
	}
	if len(sc.Failed) > 0 {
		return 1
	}
	return 0
}

func printExplore(w io.Writer, r explore.Result, elapsed time.Duration) {
	mode := "no quorum"
	if r.Quorum != string(election.NoQuorum) {
		mode = "quorum " + r.Quorum
	}
	if len(r.Options) > 0 {
		mode += ", options " + r.Options.String()
	}
	fmt.Fprintf(w, "%s, %d nodes, %s: %d schedules from seed %d in %.2fs (%.0f/s)\n",
		r.Algorithm, r.N, mode, r.Schedules, r.Seed, elapsed.Seconds(), float64(r.Schedules)/elapsed.Seconds())
	fmt.Fprintf(w, "simulated %.0fs of cluster time in %.2fs: %.0f× real time\n",
		r.SimulatedSeconds, elapsed.Seconds(), r.SimulatedSeconds/elapsed.Seconds())
	fmt.Fprintf(w, "claimed checkers:\n")
	width := 16
	for _, c := range r.SortedFailures() {
		width = max(width, len(c))
	}
	for _, c := range r.SortedFailures() {
		status := "pass"
		if r.Failures[c] > 0 {
			status = "FAIL"
		}
		fmt.Fprintf(w, "  %-*s %s  failed in %d schedules\n", width, c, status, r.Failures[c])
	}
	fmt.Fprintf(w, "split brain (two leaders at once) in %d schedules; two leaders in one epoch in %d\n", r.SplitBrainSchedules, r.EpochConflictSchedules)
	if r.StaleLeaderSchedules > 0 {
		fmt.Fprintf(w, "a paused leader's frozen view overlapped another leader in %d schedules (stale, not split brain: a frozen node acts on nothing)\n", r.StaleLeaderSchedules)
	}
	for _, sc := range r.Failing {
		fmt.Fprintf(w, "\nFAILED schedule %d (seed %d): %v\n", sc.Index, sc.Seed, sc.Failed)
		printSchedule(w, sc)
	}
	if len(r.SplitBrain) > 0 {
		sc := r.SplitBrain[0]
		fmt.Fprintf(w, "\nsplit brain (not claimed by %s), first in schedule %d (seed %d):\n", r.Algorithm, sc.Index, sc.Seed)
		printSchedule(w, sc)
	}
	if len(r.Replay) > 0 {
		fmt.Fprintf(w, "\nreplay:\n")
		for _, c := range r.Replay {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
}

func printSchedule(w io.Writer, sc explore.Schedule) {
	fmt.Fprintf(w, "  faults:\n")
	for _, f := range sc.Faults {
		fmt.Fprintf(w, "    %s\n", f)
	}
	for _, v := range sc.Verdicts {
		fmt.Fprintf(w, "  %s: %s\n", v.Checker, v.Summary)
		if d := v.Detail(); d != "" {
			fmt.Fprintf(w, "    %s\n", indent(d, "    "))
		}
	}
	fmt.Fprintf(w, "  replay: %s\n", sc.Replay)
	if sc.Nondeterministic != "" {
		fmt.Fprintf(w, "  %s\n", sc.Nondeterministic)
	}
}
