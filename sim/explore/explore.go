// Package explore searches for fault schedules that break an election
// algorithm. It runs many short simulated histories, each driven by random
// faults drawn from its own seed, ends each with a heal and a quiet period,
// and judges the history with package check. A failing schedule comes back
// with the command that replays it exactly.
//
// Schedule seeds: schedule 0 of top-level seed S has seed S itself, and
// schedule i > 0 a seed mixed from (S, i). Running one schedule with seed X
// (--schedules 1 --seed X) therefore replays the schedule whose seed was X,
// whichever run found it.
package explore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// Options configure an exploration.
type Options struct {
	Algorithm string
	// N nodes with IDs 1..N in ring order, unless Members is set.
	N       int
	Members []election.NodeID
	Quorum  election.QuorumMode
	Timing  election.Timing
	// Schedules to run; Seed is the top-level seed.
	Schedules int
	Seed      int64
	// MaxFaults per schedule (each schedule draws 1..MaxFaults); zero: 12.
	MaxFaults int
	// Kinds restricts the fault kinds drawn (names in FaultKinds), as one
	// picks a Jepsen nemesis; empty: every kind.
	Kinds []string
	// Quiet is the fault-free period after the final heal; the checkers
	// judge agreement and bully-max at its end, and liveness with it as
	// the bound. Zero: check.DefaultLivenessBound (ten suspicions).
	Quiet time.Duration
	// Workers run schedules in parallel; zero: GOMAXPROCS. Results do not
	// depend on it.
	Workers int
	// Keep is how many failing (and split-brain) schedules to report in
	// full; zero: 20. Counts always cover every schedule.
	Keep int
	// Progress, when set, is called after each finished schedule with the
	// number done so far (from one goroutine at a time).
	Progress func(done int)
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Members) == 0 {
		if o.N < 1 {
			return o, fmt.Errorf("explore: --n %d: need at least one node", o.N)
		}
		for i := 1; i <= o.N; i++ {
			o.Members = append(o.Members, election.NodeID(i))
		}
	}
	o.N = len(o.Members)
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
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Keep <= 0 {
		o.Keep = 20
	}
	if len(o.Kinds) > 0 {
		for _, k := range o.Kinds {
			if !slices.Contains(FaultKinds[:], k) {
				return o, fmt.Errorf("explore: fault kind %q: want some of %s", k, strings.Join(FaultKinds[:], ", "))
			}
		}
	}
	return o, nil
}

// weightsFor returns the weights of the allowed kinds.
func (o Options) weightsFor() [kinds]int {
	if len(o.Kinds) == 0 {
		return defaultWeights
	}
	var w [kinds]int
	for k := range w {
		if slices.Contains(o.Kinds, FaultKinds[k]) {
			w[k] = defaultWeights[k]
		}
	}
	return w
}

// Schedule is the outcome of one schedule.
type Schedule struct {
	Index int   `json:"index"`
	Seed  int64 `json:"seed"`
	// Failed lists the claimed checkers that failed.
	Failed []string `json:"failed,omitempty"`
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
	// Faults describes the schedule, one line per fault.
	Faults []string `json:"faults"`
	Replay string   `json:"replay"`
}

// Result sums up an exploration.
type Result struct {
	Algorithm string `json:"algorithm"`
	N         int    `json:"n"`
	Quorum    string `json:"quorum"`
	Seed      int64  `json:"seed"`
	Schedules int    `json:"schedules"`
	// Claimed are the checkers judged as pass/fail; Failures counts the
	// schedules each failed in (every claimed checker has an entry).
	Claimed  []string       `json:"claimed"`
	Failures map[string]int `json:"failures"`
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
	var b strings.Builder
	fmt.Fprintf(&b, "ringleader sim explore --algorithm %s --n %d --schedules 1 --seed %d", o.Algorithm, len(o.Members), seed)
	if o.Quorum == election.Majority {
		b.WriteString(" --quorum majority")
	}
	if o.MaxFaults != 12 {
		fmt.Fprintf(&b, " --faults %d", o.MaxFaults)
	}
	if len(o.Kinds) > 0 {
		fmt.Fprintf(&b, " --kinds %s", strings.Join(o.Kinds, ","))
	}
	return b.String()
}

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
	if opts.Quorum == election.Majority && !alg.Quorum {
		return Result{}, fmt.Errorf("explore: algorithm %s has no quorum mode", alg.Name)
	}
	// Fail on a bad configuration once, here, not in every worker.
	if _, err := sim.New(simOptions(opts, opts.Seed), nil); err != nil {
		return Result{}, fmt.Errorf("explore: %w", err)
	}
	res := Result{
		Algorithm: alg.Name, N: len(opts.Members), Quorum: string(opts.Quorum), Seed: opts.Seed,
		Schedules: opts.Schedules, Claimed: claimed(alg, opts.Quorum), Failures: map[string]int{},
	}
	for _, c := range res.Claimed {
		res.Failures[c] = 0
	}

	// Workers take indexes from a channel; results are put back in index
	// order, so the report is the same whatever the parallelism.
	results := make([]Schedule, opts.Schedules)
	idx := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < min(opts.Workers, max(opts.Schedules, 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				sc := runSchedule(opts, alg, res.Claimed, ScheduleSeed(opts.Seed, i), nil)
				sc.Index = i
				results[i] = sc
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < opts.Schedules; i++ {
		idx <- i
	}
	close(idx)
	wg.Wait()

	claimsSplit := slices.Contains(res.Claimed, check.NoSplitBrain)
	for _, sc := range results {
		for _, f := range sc.Failed {
			res.Failures[f]++
		}
		if len(sc.Failed) > 0 {
			res.FailedSchedules++
			if len(res.Failing) < opts.Keep {
				res.Failing = append(res.Failing, sc)
			}
		}
		if sc.SplitBrain {
			res.SplitBrainSchedules++
			if !claimsSplit && len(res.SplitBrain) < opts.Keep {
				res.SplitBrain = append(res.SplitBrain, sc)
			}
		}
		if sc.EpochConflict {
			res.EpochConflictSchedules++
		}
		if sc.StaleLeader {
			res.StaleLeaderSchedules++
		}
	}
	res.Replay = []string{}
	for _, sc := range res.Failing {
		res.Replay = append(res.Replay, sc.Replay)
	}
	for _, sc := range res.SplitBrain {
		res.Replay = append(res.Replay, sc.Replay)
	}
	return res, nil
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
	if _, err := sim.New(simOptions(opts, seed), nil); err != nil {
		return Schedule{}, fmt.Errorf("explore: %w", err)
	}
	return runSchedule(opts, alg, claimed(alg, opts.Quorum), seed, sink), nil
}

// claimed are the checkers the algorithm claims, without
// message-complexity: a run with faults has no formula to meet.
func claimed(a election.Algorithm, q election.QuorumMode) []string {
	var out []string
	for _, c := range check.Claimed(a, q) {
		if c != check.MessageComplexity {
			out = append(out, c)
		}
	}
	return out
}

func simOptions(o Options, seed int64) sim.Options {
	return sim.Options{
		Algorithm: o.Algorithm, Members: o.Members, Quorum: o.Quorum, Timing: o.Timing, Seed: seed,
		// Delays vary enough that messages from different senders
		// interleave differently from schedule to schedule.
		Delay: sim.Uniform(500*time.Microsecond, 5*time.Millisecond),
	}
}

// runSchedule plays one schedule and judges it. extra, when not nil, also
// receives the history with its messages.
func runSchedule(o Options, alg election.Algorithm, claims []string, seed int64, extra history.Sink) Schedule {
	var mem history.Memory
	so := simOptions(o, seed)
	var sink history.Sink = &mem
	if extra != nil {
		sink = history.Tee{&mem, extra}
	} else {
		so.OmitMessages = true
	}
	s, err := sim.New(so, sink)
	if err != nil {
		panic(err) // the options were checked by Run and One
	}
	sc := Schedule{Seed: seed, Replay: ReplayCommand(o, seed)}
	g := &generator{
		r:       rand.New(rand.NewPCG(uint64(seed), 0x7363686564)), // "sched"
		weights: o.weightsFor(),
		s:       s,
		members: o.Members,
		timing:  o.Timing,
	}
	s.Start()
	s.RunFor(g.gap())
	nf := 1 + g.r.IntN(o.MaxFaults)
	for i := 0; i < nf; i++ {
		f, target, ok := g.next()
		if ok {
			g.apply(f, target, &sc)
		}
		s.RunFor(g.gap())
	}
	g.finish(&sc)
	s.RunFor(o.Quiet)

	names := slices.Clone(claims)
	for _, always := range []string{check.NoSplitBrain, check.EpochSafety} {
		if !slices.Contains(names, always) {
			names = append(names, always)
		}
	}
	verdicts := check.Run(mem.Records(), check.Options{
		Algorithm: alg, Quorum: o.Quorum, Members: o.Members, Timing: o.Timing,
		Checkpoints: []time.Time{s.Time()}, LivenessBound: o.Quiet,
	}, names...)
	for _, v := range verdicts {
		if ev, ok := v.Evidence.(check.SplitBrainEvidence); ok && len(ev.StaleOverlaps) > 0 {
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
	return sc
}

// generator draws one schedule's faults from its own random stream. It
// looks at the simulator's state only through what a nemesis could see
// (who runs, who is paused, who believes it leads), so the same seed gives
// the same schedule.
type generator struct {
	r       *rand.Rand
	weights [kinds]int
	s       *sim.Sim
	members []election.NodeID
	timing  election.Timing
	netBad  bool // a partition, loss or delay is in force
}

// gap is the time between faults: up to three suspicion timeouts, so that
// some faults land mid-election and some after the cluster settled.
func (g *generator) gap() time.Duration {
	return time.Duration(g.r.Int64N(int64(3 * g.timing.Suspicion)))
}

type kind int

const (
	kKill kind = iota
	kStop
	kRestart
	kPause
	kResume
	kHalves
	kIsolate
	kBridge
	kOneWay
	kHeal
	kLoss
	kDelay
	kinds
)

// FaultKinds names the kinds the generator draws, for Options.Kinds and
// the --kinds flag: halves and isolate and bridge are partitions into two
// halves, one node against the rest, and two sides joined by one node (not
// transitive); one-way cuts a single direction of one link.
var FaultKinds = [kinds]string{
	kKill: "kill", kStop: "stop", kRestart: "restart", kPause: "pause", kResume: "resume",
	kHalves: "halves", kIsolate: "isolate", kBridge: "bridge", kOneWay: "one-way", kHeal: "heal",
	kLoss: "loss", kDelay: "delay",
}

// defaultWeights of each fault kind: crashes and partitions dominate,
// since they are what elections exist for.
var defaultWeights = [kinds]int{
	kKill: 4, kStop: 1, kRestart: 4, kPause: 2, kResume: 2,
	kHalves: 3, kIsolate: 3, kBridge: 2, kOneWay: 2, kHeal: 3, kLoss: 1, kDelay: 1,
}

func (g *generator) pickKind() kind {
	total := 0
	for _, w := range g.weights {
		total += w
	}
	x := g.r.IntN(total)
	for k, w := range g.weights {
		if x < w {
			return kind(k)
		}
		x -= w
	}
	return kHeal
}

func (g *generator) where(pred func(election.NodeID) bool) []election.NodeID {
	var out []election.NodeID
	for _, id := range g.members {
		if pred(id) {
			out = append(out, id)
		}
	}
	return out
}

func (g *generator) pick(ids []election.NodeID) election.NodeID { return ids[g.r.IntN(len(ids))] }

// victim picks from candidates, half the time a node that believes it
// leads (the interesting one to hurt), and names the target accordingly.
func (g *generator) victim(cands []election.NodeID) (election.NodeID, string) {
	if g.r.IntN(2) == 0 {
		var leaders []election.NodeID
		for _, id := range cands {
			if v := g.s.View(id); v.Role == election.Leader && v.Leader == id {
				leaders = append(leaders, id)
			}
		}
		if len(leaders) > 0 {
			return g.pick(leaders), "leader"
		}
	}
	id := g.pick(cands)
	return id, strconv.Itoa(int(id))
}

func (g *generator) shuffled() []election.NodeID {
	ids := slices.Clone(g.members)
	g.r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

// next draws a fault that can apply now; ok is false when none could be
// found (a one-node cluster with nothing to do).
func (g *generator) next() (chaos.Fault, string, bool) {
	n := len(g.members)
	running := g.where(func(id election.NodeID) bool { return g.s.Up(id) && !g.s.Paused(id) })
	down := g.where(func(id election.NodeID) bool { return !g.s.Up(id) })
	paused := g.where(g.s.Paused)
	for try := 0; try < 20; try++ {
		switch k := g.pickKind(); k {
		case kKill, kStop:
			up := g.where(g.s.Up)
			if len(up) == 0 {
				continue
			}
			id, target := g.victim(up)
			op := chaos.Kill
			if k == kStop {
				op = chaos.Stop
			}
			return chaos.Fault{Op: op, Nodes: []election.NodeID{id}}, target, true
		case kRestart:
			if len(down) == 0 {
				continue
			}
			id := g.pick(down)
			return chaos.Fault{Op: chaos.Restart, Nodes: []election.NodeID{id}}, strconv.Itoa(int(id)), true
		case kPause:
			if len(running) == 0 {
				continue
			}
			id, target := g.victim(running)
			return chaos.Fault{Op: chaos.Pause, Nodes: []election.NodeID{id}}, target, true
		case kResume:
			if len(paused) == 0 {
				continue
			}
			id := g.pick(paused)
			return chaos.Fault{Op: chaos.Resume, Nodes: []election.NodeID{id}}, strconv.Itoa(int(id)), true
		case kHalves:
			if n < 2 {
				continue
			}
			ids := g.shuffled()
			a, b := slices.Clone(ids[:n/2]), slices.Clone(ids[n/2:])
			slices.Sort(a)
			slices.Sort(b)
			return chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{a, b}}, "halves", true
		case kIsolate:
			if n < 2 {
				continue
			}
			id, target := g.victim(g.members)
			rest := g.where(func(x election.NodeID) bool { return x != id })
			return chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{id}, rest}}, "isolate " + target, true
		case kBridge:
			if n < 3 {
				continue
			}
			// The bridge talks to both sides; the sides cannot talk
			// to each other: a partition that is not transitive.
			ids := g.shuffled()
			bridge := ids[0]
			cutAt := 1 + g.r.IntN(n-2)
			a := append([]election.NodeID{bridge}, ids[1:1+cutAt]...)
			b := append([]election.NodeID{bridge}, ids[1+cutAt:]...)
			slices.Sort(a)
			slices.Sort(b)
			return chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{a, b}}, "bridge " + strconv.Itoa(int(bridge)), true
		case kOneWay:
			if n < 2 {
				continue
			}
			ids := g.shuffled()
			return chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{ids[0], ids[1]}}}, "one-way", true
		case kHeal:
			return chaos.Fault{Op: chaos.Heal}, "all", true
		case kLoss:
			id := g.pick(g.members)
			return chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{id}, Loss: float64(1+g.r.IntN(5)) / 10}, strconv.Itoa(int(id)), true
		case kDelay:
			id := g.pick(g.members)
			d := time.Duration(1+g.r.IntN(10)) * 5 * time.Millisecond
			j := time.Duration(g.r.IntN(5)) * 5 * time.Millisecond
			return chaos.Fault{Op: chaos.Delay, Nodes: []election.NodeID{id}, Delay: d, Jitter: j}, strconv.Itoa(int(id)), true
		}
	}
	return chaos.Fault{}, "", false
}

func (g *generator) apply(f chaos.Fault, target string, sc *Schedule) {
	if err := g.s.Apply(f, target); err != nil {
		// The generator only draws applicable faults; a failure here is
		// a bug in it, and the record in the history says so.
		sc.Faults = append(sc.Faults, fmt.Sprintf("%v %s FAILED: %v", g.s.Now(), describe(f), err))
		return
	}
	switch f.Op {
	case chaos.Partition, chaos.Loss, chaos.Delay:
		g.netBad = true
	case chaos.Heal:
		g.netBad = false
	}
	label := describe(f)
	if target == "leader" || strings.HasPrefix(target, "isolate leader") {
		label += " (the leader)"
	}
	sc.Faults = append(sc.Faults, fmt.Sprintf("%v %s", g.s.Now(), label))
}

// finish ends the schedule so the checkers have a stable cluster to judge:
// heal the network, resume every paused node, and restart crashed nodes
// (lowest first) until a majority runs, so a quorum algorithm can elect.
// Nodes beyond that stay down: the leader may well be among them.
func (g *generator) finish(sc *Schedule) {
	if g.netBad {
		g.apply(chaos.Fault{Op: chaos.Heal}, "all", sc)
	}
	if paused := g.where(g.s.Paused); len(paused) > 0 {
		g.apply(chaos.Fault{Op: chaos.Resume, Nodes: paused}, idsText(paused), sc)
	}
	up := len(g.where(g.s.Up))
	var restart []election.NodeID
	for _, id := range g.where(func(id election.NodeID) bool { return !g.s.Up(id) }) {
		if up >= len(g.members)/2+1 {
			break
		}
		restart = append(restart, id)
		up++
	}
	if len(restart) > 0 {
		g.apply(chaos.Fault{Op: chaos.Restart, Nodes: restart}, idsText(restart), sc)
	}
}

func describe(f chaos.Fault) string {
	switch f.Op {
	case chaos.Partition:
		var parts []string
		for _, gr := range f.Groups {
			parts = append(parts, idsText(gr))
		}
		for _, l := range f.Links {
			parts = append(parts, fmt.Sprintf("%d->%d", l[0], l[1]))
		}
		if len(f.Groups) > 0 {
			return "partition " + strings.Join(parts, " | ")
		}
		return "cut " + strings.Join(parts, " ")
	case chaos.Heal:
		return "heal"
	case chaos.Loss:
		return fmt.Sprintf("loss %s %.0f%%", idsText(f.Nodes), f.Loss*100)
	case chaos.Delay:
		return fmt.Sprintf("delay %s %v±%v", idsText(f.Nodes), f.Delay, f.Jitter)
	}
	return fmt.Sprintf("%s %s", f.Op, idsText(f.Nodes))
}

func idsText(ids []election.NodeID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

// SortedFailures lists Failures' keys in checker order, for printing.
func (r Result) SortedFailures() []string {
	keys := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Compare(slices.Index(check.Names, a), slices.Index(check.Names, b))
	})
	return keys
}
