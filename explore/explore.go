// Package explore searches for fault schedules that break an election
// algorithm. It runs many short simulated histories, each driven by random
// faults drawn from its own seed, ends each with a heal and a quiet period,
// and judges the history with package check. A failing schedule comes back
// with the command that replays it exactly, and can be shrunk to a minimal
// scenario file (Shrink, Save) that fails the same way on any backend.
//
// A schedule is a list of scenario steps in the fault language of package
// chaos, played through harness.Player on the simulator's chaos.Backend:
// the same code path as `ringleader run --backend sim`, so a step means the
// same thing here, in a scenario file, and in containers.
//
// Schedule seeds: schedule 0 of top-level seed S has seed S itself, and
// schedule i > 0 a seed mixed from (S, i). Running one schedule with seed X
// (--schedules 1 --seed X) therefore replays the schedule whose seed was X,
// whichever run found it.
package explore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/cpupin"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

// Options configure an exploration.
type Options struct {
	Algorithm string
	// N nodes with IDs 1..N in ring order, unless Members is set.
	N       int
	Members []election.NodeID
	// Placement groups the members by engine, as a run across several
	// engines would place them (nil: one engine); the partition shape
	// engines cuts along it.
	Placement chaos.Placement
	// Quorum and Options may be left unset: every entry point resolves
	// them to the algorithm's defaults (election.Algorithm.Resolve).
	Quorum  election.QuorumMode
	Options election.Options
	Timing  election.Timing
	// Image, for a program, is the image it runs in on the docker backend
	// (cluster.image): the simulator does not use it, saved scenario files
	// carry it, so that one of an interpreted program runs in containers.
	Image string
	// Schedules to run; Seed is the top-level seed.
	Schedules int
	Seed      int64
	// MaxFaults per schedule (each schedule draws 1..MaxFaults); zero: 12.
	MaxFaults int
	// Kinds restricts the fault kinds drawn (names in Kinds), as one
	// picks a Jepsen nemesis; empty: every kind.
	Kinds []string
	// Quiet is the fault-free period after the final heal; the checkers
	// judge agreement and bully-max at its end, and liveness with it as
	// the bound. Zero: check.DefaultLivenessBound (ten suspicions).
	Quiet time.Duration
	// Workers run schedules in parallel; zero: GOMAXPROCS. Results do not
	// depend on it.
	Workers int
	// Unpinned leaves the workers of a program's exploration where the
	// kernel puts them. By default each runs on one CPU, round-robin over
	// the CPUs this process may use (starting at Shard.Index, so that the
	// shards of one machine spread), and so do the program processes it
	// starts (internal/cpupin): an exchange over a program's pipe is then
	// a switch of tasks on one CPU, not a wake-up of another. An
	// algorithm of this process has no pipe and is never pinned. Results
	// do not depend on it.
	Unpinned bool
	// Keep is how many failing (and split-brain) schedules to report in
	// full; zero: 20. Counts always cover every schedule.
	Keep int
	// Shard, when set, plays only this shard's part of the Schedules
	// (shard.go); the Result covers that part, for Merge.
	Shard Shard
	// Progress, when set, is called after each finished schedule with the
	// number done so far (from one goroutine at a time).
	Progress func(done int)
	// MaxMemory is each simulator's memory budget (sim.Options.MaxMemory:
	// zero for the machine's default, sim.NoMemoryLimit for none). A
	// schedule that passes it ends the exploration with an error.
	MaxMemory int64
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Members) > 0 {
		o.N = len(o.Members)
	} else if o.N < 1 {
		return o, fmt.Errorf("explore: --n %d: need at least one node", o.N)
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	// Every worker holds a cluster of its own; checked before the member
	// list is made, which alone can be more than the machine holds.
	if err := sim.CheckNodes(o.N*o.Workers, o.MaxMemory); err != nil {
		return o, fmt.Errorf("explore: --n %d with %d workers: %w", o.N, o.Workers, err)
	}
	if len(o.Members) == 0 {
		o.Members = election.FirstIDs(o.N)
	}
	alg, err := election.Lookup(o.Algorithm)
	if err != nil {
		return o, fmt.Errorf("explore: %w", err)
	}
	if o.Quorum, o.Options, err = alg.Resolve(o.Quorum, o.Options); err != nil {
		return o, fmt.Errorf("explore: %w", err)
	}
	if o.Schedules < 0 {
		return o, fmt.Errorf("explore: --schedules %d must not be negative", o.Schedules)
	}
	if o.MaxFaults <= 0 {
		o.MaxFaults = 12
	}
	o.Timing = o.Timing.WithDefaults()
	if o.Quiet <= 0 {
		o.Quiet = check.DefaultLivenessBound(o.Timing)
	}
	if o.Keep <= 0 {
		o.Keep = 20
	}
	if err := o.Shard.validate(); err != nil {
		return o, fmt.Errorf("explore: %w", err)
	}
	if len(o.Kinds) > 0 {
		for _, k := range o.Kinds {
			if !slices.Contains(Kinds, k) {
				return o, fmt.Errorf("explore: fault kind %q: want some of %s", k, strings.Join(Kinds, ", "))
			}
		}
	}
	return o, nil
}

// Schedule is the outcome of one schedule.
type Schedule struct {
	Index int   `json:"index"`
	Seed  int64 `json:"seed"`
	// Failed lists the claimed checkers that failed.
	Failed []check.Name `json:"failed,omitempty"`
	// SplitBrain: two nodes held role=leader at once (whether or not the
	// algorithm claims it cannot happen); EpochConflict: two leaders in
	// one epoch.
	SplitBrain    bool `json:"split_brain"`
	EpochConflict bool `json:"epoch_conflict"`
	// StaleLeader: a paused leader's frozen view overlapped another
	// leader. package check does not call that split brain (a frozen
	// process acts on nothing); it is counted so a reader sees how often
	// the schedules put a leader to sleep and replaced it.
	StaleLeader bool `json:"stale_leader,omitempty"`
	// Verdicts are the failing verdicts, claimed or not.
	Verdicts []check.Verdict `json:"verdicts,omitempty"`
	// Nondeterministic, on a failing schedule of a program, says where
	// two more plays of it differed (determinism.go); empty when they
	// were the same, or were not compared.
	Nondeterministic string `json:"nondeterministic,omitempty"`
	// Steps is the schedule: waits and faults as drawn, symbolic targets
	// and all. Resolved holds, for each fault step, what it resolved to.
	Steps    []scenario.Step `json:"-"`
	Resolved []chaos.Fault   `json:"-"`
	// Faults describes the schedule, one line per step: virtual time, the
	// step and what its target resolved to. Replay is the command that
	// replays it. Both are written (describe) only for the schedules a
	// result keeps: most schedules pass, and their text would be waste.
	Faults []string `json:"faults"`
	Replay string   `json:"replay"`
	// Simulated is the virtual time the schedule ran for.
	Simulated time.Duration `json:"-"`
	// log is what Faults is written from, one entry per step but waits.
	log []stepLog
}

// stepLog is one played step, as Schedule.Faults will describe it.
type stepLog struct {
	at       time.Duration // virtual time when the step began
	step     int           // its index in Steps
	resolved int           // its index in Resolved when it was applied; -1 when not
	err      error         // why it could not be carried out
}

// describe writes sc's Faults and Replay.
func (sc *Schedule) describe(o Options) {
	sc.Replay = ReplayCommand(o, sc.Seed)
	sc.Faults = make([]string, 0, len(sc.log))
	for _, l := range sc.log {
		line := l.at.Round(time.Millisecond).String() + " " + sc.Steps[l.step].String() // fmt's "%v %s", without its machinery
		if l.resolved >= 0 {
			if t := harness.ResolvedText(sc.Resolved[l.resolved]); t != "" {
				line += " → " + t
			}
		}
		if l.err != nil {
			line += " FAILED: " + l.err.Error()
		}
		sc.Faults = append(sc.Faults, line)
	}
}

// kept reports whether a result may keep sc (Result.Failing, SplitBrain).
func (sc *Schedule) kept() bool { return len(sc.Failed) > 0 || sc.SplitBrain }

// summary is sc without the steps and lines, for a schedule no result
// keeps: its counts are all Run needs.
func (sc *Schedule) summary() Schedule {
	return Schedule{Index: sc.Index, Seed: sc.Seed, SplitBrain: sc.SplitBrain, EpochConflict: sc.EpochConflict,
		StaleLeader: sc.StaleLeader, Simulated: sc.Simulated}
}

// Result sums up an exploration.
type Result struct {
	Algorithm string `json:"algorithm"`
	N         int    `json:"n"`
	Quorum    string `json:"quorum"`
	// Options are the algorithm's options the schedules ran with.
	Options election.Options `json:"options,omitempty"`
	Seed    int64            `json:"seed"`
	// Schedules is how many schedules this result judged: for a shard,
	// its part of the exploration's Of.
	Schedules int `json:"schedules"`
	// Shard is "i/n" for one shard of an exploration of Of schedules
	// (Options.Shard), empty for a whole one.
	Shard string `json:"shard,omitempty"`
	Of    int    `json:"of,omitempty"`
	// Claimed are the checkers judged as pass/fail; Failures counts the
	// schedules each failed in (every claimed checker has an entry).
	Claimed  []check.Name       `json:"claimed"`
	Failures map[check.Name]int `json:"failures"`
	// FailedSchedules failed at least one claimed checker.
	FailedSchedules int `json:"failed_schedules"`
	// SplitBrainSchedules and EpochConflictSchedules are counted for every
	// algorithm, claimed or not: the explorer is meant to find plain
	// bully's split brain.
	SplitBrainSchedules    int `json:"split_brain_schedules"`
	EpochConflictSchedules int `json:"epoch_conflict_schedules"`
	// StaleLeaderSchedules had a paused leader's frozen view overlap
	// another leader (not split brain; see Schedule.StaleLeader).
	StaleLeaderSchedules int `json:"stale_leader_schedules"`
	// NondeterministicSchedules counts the failing schedules of a
	// program that did not replay (see Schedule.Nondeterministic).
	NondeterministicSchedules int `json:"nondeterministic_schedules,omitempty"`
	// SimulatedSeconds is the virtual time of every schedule together:
	// divided by the wall time it took, the simulator's speed-up over
	// real time.
	SimulatedSeconds float64 `json:"simulated_seconds"`
	// Failing are the first Keep failing schedules; SplitBrain the first
	// Keep split-brain schedules of an algorithm that does not claim
	// no-split-brain (they are not failures, but worth replaying).
	Failing    []Schedule `json:"failing,omitempty"`
	SplitBrain []Schedule `json:"split_brain,omitempty"`
	// Replay holds the commands replaying Failing, then SplitBrain.
	Replay []string `json:"replay"`
}

// Failed reports whether any claimed property failed.
func (r Result) Failed() bool { return r.FailedSchedules > 0 }

// ScheduleSeed is the seed of schedule i of top-level seed top. Schedule 0
// is top itself, so that a single-schedule run with a schedule's seed
// replays that schedule.
func ScheduleSeed(top int64, i int) int64 {
	if i == 0 {
		return top
	}
	// splitmix64 of (top, i): neighbouring indexes get unrelated seeds.
	z := uint64(top) + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int64(z >> 1) // non-negative: easy to paste into a flag
}

// ReplayCommand is the command line that replays the schedule with seed.
func ReplayCommand(o Options, seed int64) string {
	if d, err := o.withDefaults(); err == nil {
		o = d // the members, quorum and options the run resolves to
	}
	var b strings.Builder
	what := "--algorithm " + o.Algorithm
	if p, ok := program.Lookup(o.Algorithm); ok {
		what = "--program '" + strings.Join(p.Command(), " ") + "'"
		if p.Timeout() != program.DefaultTimeout {
			what += " --program-timeout " + p.Timeout().String()
		}
	}
	fmt.Fprintf(&b, "ringleader sim explore %s --n %d --schedules 1 --seed %d", what, len(o.Members), seed)
	// The quorum mode and every option are spelt out, defaults too: a
	// program is registered once per mode and reads none without the
	// flag, and a default may change between versions.
	if o.Quorum != election.QuorumDefault {
		b.WriteString(" --quorum " + string(o.Quorum))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Options)) {
		fmt.Fprintf(&b, " --option %s=%s", k, o.Options[k])
	}
	if o.MaxFaults != 12 {
		fmt.Fprintf(&b, " --faults %d", o.MaxFaults)
	}
	if len(o.Placement) > 1 {
		fmt.Fprintf(&b, " --engines %d", len(o.Placement))
	}
	if len(o.Kinds) > 0 {
		fmt.Fprintf(&b, " --kinds %s", strings.Join(o.Kinds, ","))
	}
	return b.String()
}

// explorerGCPercent is the GOGC an exploration runs with (see Run).
const explorerGCPercent = 400

// Run explores opts.Schedules schedules.
func Run(opts Options) (Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	alg, err := election.Lookup(opts.Algorithm)
	if err != nil {
		return Result{}, fmt.Errorf("explore: %w", err)
	}
	// Fail on a bad configuration once, here, not in every worker.
	if err := spec(opts, opts.Seed).Validate(); err != nil {
		return Result{}, fmt.Errorf("explore: %w", err)
	}
	res := Result{
		Algorithm: alg.Name, N: len(opts.Members), Quorum: string(opts.Quorum), Options: opts.Options, Seed: opts.Seed,
		Schedules: opts.Shard.size(opts.Schedules), Claimed: claimed(alg, opts.Quorum), Failures: map[check.Name]int{},
	}
	if opts.Shard.Count > 0 {
		res.Shard, res.Of = opts.Shard.String(), opts.Schedules
	}
	for _, c := range res.Claimed {
		res.Failures[c] = 0
	}

	// The explorer allocates fast and keeps little: a schedule's history
	// is garbage once judged. Collecting at five times the live heap
	// rather than twice spends far less time in the collector (see
	// docs/simulator.md, "Figures"); the setting is put back when Run
	// returns, and a higher GOGC the user chose, or GOGC=off, is kept.
	if prev := debug.SetGCPercent(explorerGCPercent); prev < 0 || prev > explorerGCPercent {
		debug.SetGCPercent(prev)
	} else {
		defer debug.SetGCPercent(prev)
	}

	if err := runAll(opts, res.Claimed, res.count); err != nil {
		return Result{}, err
	}
	if err := checkReplays(opts, alg, &res); err != nil {
		return Result{}, err
	}
	res.Replay = []string{}
	for _, kept := range [][]Schedule{res.Failing, res.SplitBrain} {
		for i := range kept {
			kept[i].describe(opts)
			res.Replay = append(res.Replay, kept[i].Replay)
		}
	}
	return res, nil
}

// count adds one schedule's outcome to the result. Schedules are counted
// in index order, so the schedules kept (the first Keep failing and
// split-brain ones) are the same whatever the parallelism.
func (res *Result) count(sc Schedule, keep int) {
	for _, f := range sc.Failed {
		res.Failures[f]++
	}
	if len(sc.Failed) > 0 {
		res.FailedSchedules++
		if len(res.Failing) < keep {
			res.Failing = append(res.Failing, sc)
		}
	}
	if sc.SplitBrain {
		res.SplitBrainSchedules++
		if !slices.Contains(res.Claimed, check.NoSplitBrain) && len(res.SplitBrain) < keep {
			res.SplitBrain = append(res.SplitBrain, sc)
		}
	}
	if sc.EpochConflict {
		res.EpochConflictSchedules++
	}
	if sc.StaleLeader {
		res.StaleLeaderSchedules++
	}
	res.SimulatedSeconds += sc.Simulated.Seconds()
}

// chunkSchedules is how many schedules runAll hands out before it counts
// them: the results it holds at once (a few hundred bytes each), however
// many schedules the exploration has; three thousand million had taken
// 12 GB after 37 s, none yet played. A variable for the test that moves
// it.
var chunkSchedules = 4096

// runAll plays the shard's schedules and counts each (count, in index
// order, with opts.Keep). Workers take schedules from a channel, a chunk
// at a time; a chunk's results are counted in index order once it is
// done, so the report is the same whatever the parallelism, and memory
// does not grow with the schedules. The error is the first schedule that
// could not be started; no chunk after its own is played.
func runAll(opts Options, claims []check.Name, count func(Schedule, int)) error {
	total := opts.Shard.size(opts.Schedules)
	chunk := min(total, chunkSchedules)
	results := make([]Schedule, chunk)
	errs := make([]error, chunk)
	idx := make(chan int)
	var wg, played sync.WaitGroup
	var mu sync.Mutex
	done := 0
	var cpus []int // where workers are pinned: a program's exploration only
	if alg, err := election.Lookup(opts.Algorithm); err == nil && alg.External && !opts.Unpinned {
		cpus = cpupin.Allowed()
	}
	base := 0 // the shard's index of results[0]
	for w := 0; w < min(opts.Workers, max(total, 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if len(cpus) > 0 {
				// A CPU the kernel refuses leaves the worker unpinned:
				// slower, never different.
				if pin, err := cpupin.Pin(cpus[(opts.Shard.Index+w)%len(cpus)]); err == nil {
					defer pin.Release()
				}
			}
			// One simulator per worker, reset between schedules; closed
			// at the end, so that a program's processes go back to its
			// pool for the next exploration (before the pin is released:
			// they are idle where they were started).
			x := &session{o: opts, b: newBackend(opts)}
			defer x.close()
			for i := range idx {
				k := opts.Shard.index(base + i)
				sc, err := x.runSchedule(claims, ScheduleSeed(opts.Seed, k), nil)
				sc.Index = k
				errs[i] = err
				if !sc.kept() {
					x.spare = sc // its lists serve the next schedule
					sc = sc.summary()
				}
				results[i] = sc
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done)
					mu.Unlock()
				}
				played.Done()
			}
		}()
	}
	defer wg.Wait()
	defer close(idx)
	for ; base < total; base += chunk {
		n := min(chunk, total-base)
		played.Add(n)
		for i := range n {
			idx <- i
		}
		played.Wait() // base and results are the workers' again after this
		for i := range n {
			if errs[i] != nil {
				return errs[i]
			}
			count(results[i], opts.Keep)
			results[i], errs[i] = Schedule{}, nil
		}
	}
	return nil
}

// One runs the single schedule with the given seed, writing its full history
// (messages included) to sink, which may be nil.
func One(opts Options, seed int64, sink history.Sink) (Schedule, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Schedule{}, err
	}
	alg, err := election.Lookup(opts.Algorithm)
	if err != nil {
		return Schedule{}, fmt.Errorf("explore: %w", err)
	}
	if err := spec(opts, seed).Validate(); err != nil {
		return Schedule{}, fmt.Errorf("explore: %w", err)
	}
	x := &session{o: opts, b: newBackend(opts)}
	defer x.close()
	sc, err := x.runSchedule(claimed(alg, opts.Quorum), seed, sink)
	if err == nil {
		sc.describe(opts)
	}
	return sc, err
}

// claimed are the checkers the algorithm claims, without
// message-complexity: a run with faults has no formula to meet.
func claimed(a election.Algorithm, q election.QuorumMode) []check.Name {
	var out []check.Name
	for _, c := range check.Claimed(a, q) {
		if c != check.MessageComplexity {
			out = append(out, c)
		}
	}
	return out
}

// spec is the cluster every schedule starts.
func spec(o Options, seed int64) chaos.ClusterSpec {
	return chaos.ClusterSpec{
		Name: "explore", Algorithm: o.Algorithm, Quorum: o.Quorum, Options: o.Options,
		Members: o.Members, Timing: o.Timing, Seed: seed, Placement: o.Placement,
	}
}

// cluster is the scenario cluster of o; a registered program's names its
// command, so that a saved scenario runs it again (cluster.program).
func cluster(o Options) scenario.Cluster {
	c := scenario.Cluster{Algorithm: o.Algorithm, IDs: o.Members, Quorum: o.Quorum, Options: o.Options, Timing: o.Timing, Placement: o.Placement}
	if p, ok := program.Lookup(o.Algorithm); ok {
		c.Program, c.Image = p.Command(), o.Image
		if p.Timeout() != program.DefaultTimeout {
			c.ProgramTimeout = p.Timeout()
		}
	}
	return c
}

// session is one schedule being played: a simulated cluster, the harness's
// player on it, and the history in memory. A worker plays every schedule
// it takes on one session, started afresh (start) for each.
type session struct {
	o      Options
	b      *sim.Backend
	p      *harness.Player
	rec    recorder
	played Schedule
	// spare holds the lists of a schedule no result kept, for reuse.
	spare Schedule
	// gen is the generator of the last schedule drawn.
	gen *generator
}

// newBackend is the simulator a session plays on, within o's memory
// budget.
func newBackend(o Options) *sim.Backend { return &sim.Backend{MaxMemory: o.MaxMemory} }

// close releases the session's machines: a program's processes go back
// to its pool, idle, for whoever runs it next in this process.
func (x *session) close() { _ = x.b.Close(context.Background()) }

// recorder keeps one schedule's history, and its latest fault record: what
// the step just played resolved to. A schedule runs on one goroutine, so it
// needs no lock, and reading the last fault costs nothing.
type recorder struct {
	recs      []history.Record
	lastFault *history.Fault
}

func (r *recorder) Append(rec history.Record) error {
	r.recs = append(r.recs, rec)
	if rec.Fault != nil {
		r.lastFault = rec.Fault
	}
	return nil
}

// start boots the cluster afresh for the schedule with this seed, on the
// simulator of the previous schedule if there was one, with an empty
// history and nothing played. extra, when not nil, also receives the
// history with its messages (without it, messages are left out: the
// checkers the explorer runs need views and faults only).
func (x *session) start(seed int64, extra history.Sink) error {
	clear(x.rec.recs) // the records' pointers are the last schedule's
	x.rec.recs, x.rec.lastFault = x.rec.recs[:0], nil
	x.played = Schedule{Steps: x.spare.Steps[:0], Resolved: x.spare.Resolved[:0], log: x.spare.log[:0]}
	x.spare = Schedule{}
	x.b.OmitMessages = extra == nil
	var sink history.Sink = &x.rec
	if extra != nil {
		sink = history.Tee{&x.rec, extra}
	}
	if err := x.b.NewRun(context.Background(), spec(x.o, seed), sink); err != nil {
		return err
	}
	x.p = harness.NewPlayer(x.b, cluster(x.o), seed)
	return nil
}

// play plays one step and notes it in the schedule. A step that cannot be
// carried out is noted as FAILED, and the error returned.
func (x *session) play(st scenario.Step) error {
	at := x.b.Now().Sub(history.SimOrigin)
	before := x.rec.lastFault
	err := x.p.Play(context.Background(), st, nil)
	x.played.Steps = append(x.played.Steps, st)
	l := stepLog{at: at, step: len(x.played.Steps) - 1, resolved: -1, err: err}
	if st.Fault != nil {
		// What the step resolved to, from its record: the player
		// resolved it against the state just before applying it.
		x.played.Resolved = append(x.played.Resolved, x.lastFault())
		if x.rec.lastFault != before {
			l.resolved = len(x.played.Resolved) - 1
		}
	}
	if st.Op != scenario.OpWait {
		x.played.log = append(x.played.log, l)
	}
	return err
}

// lastFault is the fault of the latest nemesis record.
func (x *session) lastFault() chaos.Fault {
	if f := x.rec.lastFault; f != nil {
		return chaos.Fault{Op: chaos.Op(f.Op), Nodes: f.Nodes, Groups: f.Groups, Links: f.Links}
	}
	return chaos.Fault{}
}

// judge ends the history as the harness does (a mark at the end, so the
// checkers judge the state after the last wait) and runs the checkers
// with the options the harness would give a scenario file of these steps.
func (x *session) judge(names []check.Name) []check.Verdict {
	_ = x.rec.Append(history.Record{Time: x.b.Now(), Process: harness.HarnessProcess, Kind: history.KindMark, Note: "end"})
	sc := &scenario.Scenario{Cluster: cluster(x.o), LivenessBound: x.o.Quiet}
	return check.Run(x.rec.recs, harness.CheckOptions(sc, mustLookup(x.o.Algorithm), x.p.Checkpoints()), names...)
}

func mustLookup(name string) election.Algorithm {
	a, err := election.Lookup(name)
	if err != nil {
		panic(err) // checked by Run and One before any schedule
	}
	return a
}

// judged are the checkers every schedule runs: the claimed ones, plus
// no-split-brain and epoch-safety, counted for every algorithm.
func judged(claims []check.Name) []check.Name {
	names := slices.Clone(claims)
	for _, always := range []check.Name{check.NoSplitBrain, check.EpochSafety} {
		if !slices.Contains(names, always) {
			names = append(names, always)
		}
	}
	return names
}

// runSchedule draws one schedule from its seed, plays it and judges it.
// extra, when not nil, also receives the history with its messages; the
// error is a cluster that could not be started, which with extra set can
// be extra failing to take the first records (a full disk).
func (x *session) runSchedule(claims []check.Name, seed int64, extra history.Sink) (Schedule, error) {
	if err := x.start(seed, extra); err != nil {
		return Schedule{}, fmt.Errorf("explore: schedule with seed %d: %w", seed, err)
	}
	o := x.o
	g := newGenerator(o, seed, x.gen)
	x.gen = g
	netFaults := false
	x.play(g.gap())
	nf := 1 + g.d.R.IntN(o.MaxFaults)
	// The schedule's lists are the result's: size them once, for nf
	// faults, their gaps and up to three finishing steps and the quiet.
	x.played.Steps = slices.Grow(x.played.Steps, 2*nf+4)
	x.played.Resolved = slices.Grow(x.played.Resolved, nf+3)
	x.played.log = slices.Grow(x.played.log, nf+3)
	for i := 0; i < nf; i++ {
		if f, ok := g.next(x.b.Peek()); ok {
			// A generated step that fails is a bug in the generator;
			// the schedule's lines say so (FAILED) and the tests look.
			_ = x.play(scenario.FaultStep(f))
			if k, _ := chaos.KindOf(f.Op); k.Family == chaos.FamilyNetwork {
				netFaults = f.Op != chaos.Heal
			}
		}
		x.play(g.gap())
	}
	for _, f := range g.finish(x.b.Peek(), netFaults) {
		_ = x.play(scenario.FaultStep(f))
	}
	x.play(scenario.WaitStep(o.Quiet))

	sc := x.played
	sc.Seed = seed
	sc.Simulated = x.b.Now().Sub(history.SimOrigin)
	sc.judge(x.judge(judged(claims)), claims)
	return sc, nil
}

// judge records the verdicts: the failing ones, which claimed checkers
// failed, and the split-brain, epoch and stale-leader flags.
func (sc *Schedule) judge(verdicts []check.Verdict, claims []check.Name) {
	for _, v := range verdicts {
		if ev := v.Evidence.SplitBrain; ev != nil && len(ev.StaleOverlaps) > 0 {
			sc.StaleLeader = true
		}
		if v.Pass {
			continue
		}
		sc.Verdicts = append(sc.Verdicts, v)
		if slices.Contains(claims, v.Checker) {
			sc.Failed = append(sc.Failed, v.Checker)
		}
		switch v.Checker {
		case check.NoSplitBrain:
			sc.SplitBrain = true
		case check.EpochSafety:
			sc.EpochConflict = true
		}
	}
}

// SortedFailures lists Failures' keys in checker order, for printing.
func (r Result) SortedFailures() []check.Name {
	keys := make([]check.Name, 0, len(r.Failures))
	for k := range r.Failures {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b check.Name) int {
		return cmp.Compare(slices.Index(check.Names, a), slices.Index(check.Names, b))
	})
	return keys
}

// Replay plays a scenario's steps on the simulator the way the explorer
// plays its schedules (same backend, same player), with simulator seed
// seed, and judges the history with the scenario's checkers (the ones its
// algorithm claims when it names none, plus those in expect_checkers). It
// is how stored schedule files serve as regression tests.
func Replay(sc *scenario.Scenario, seed int64) ([]check.Verdict, error) {
	o := Options{Algorithm: sc.Cluster.Algorithm, Members: sc.Members(), Quorum: sc.Cluster.Quorum, Options: sc.Cluster.Options, Timing: sc.Cluster.Timing, Quiet: sc.LivenessBound}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	alg, err := election.Lookup(o.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	x := &session{o: o, b: newBackend(o)}
	defer x.close()
	if err := x.start(seed, nil); err != nil {
		return nil, fmt.Errorf("explore: %s: %w", sc.Name, err)
	}
	for i, st := range sc.Steps {
		if err := x.play(st); err != nil {
			return nil, fmt.Errorf("explore: %s: step %d (line %d, %s): %w", sc.Name, i+1, st.Line, st, err)
		}
	}
	names := harness.CheckerNames(sc, alg)
	return x.judge(names), nil
}
