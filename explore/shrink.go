package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// ShrinkOptions bound a shrink.
type ShrinkOptions struct {
	// Seeds is how many simulator seeds a candidate must fail on: the
	// schedule's own and Seeds−1 others. A schedule that fails on one
	// seed only depends on one ordering of messages and would not
	// reproduce in containers. Zero: 3.
	Seeds int
	// Budget is the most candidates tried; zero: 300. With Deadline it
	// bounds the time a shrink takes.
	Budget int
	// Deadline, when not zero, stops shrinking at that wall-clock time
	// with the smallest schedule found so far (Exhausted is then set).
	Deadline time.Time
	// WaitMargin multiplies every wait of the shrunk schedule, so that a
	// slower world (containers boot one by one and hear of a cut only
	// when a route times out) still reaches the state the simulator
	// reached; the result is checked again. Zero: 2. 1 keeps the
	// minimal waits.
	WaitMargin float64
	// Progress, when set, hears one line per accepted reduction.
	Progress func(string)
}

func (so ShrinkOptions) withDefaults() ShrinkOptions {
	if so.Seeds <= 0 {
		so.Seeds = 3
	}
	if so.Budget <= 0 {
		so.Budget = 300
	}
	if so.WaitMargin <= 0 {
		so.WaitMargin = 2
	}
	return so
}

// Shrunk is a failing schedule minimised while the same checker still
// fails.
type Shrunk struct {
	Seed    int64      `json:"seed"`
	Checker check.Name `json:"checker"`
	// Steps is the shrunk schedule; FaultSteps counts its faults (the
	// final heal included), From how many steps the schedule had.
	Steps      []scenario.Step `json:"-"`
	StepCount  int             `json:"steps"`
	FaultSteps int             `json:"fault_steps"`
	From       int             `json:"from_steps"`
	// Evidence is the checker's summary on the shrunk schedule.
	Evidence string `json:"evidence"`
	// Tried counts the candidates played (each on every seed).
	Tried int `json:"tried"`
	// Exhausted: the budget or the deadline ended the shrink before no
	// reduction was left.
	Exhausted bool `json:"exhausted,omitempty"`
	// WaitMargin is the factor the waits were widened by (0: they were
	// not: the widened schedule no longer failed).
	WaitMargin float64 `json:"wait_margin,omitempty"`
	// File is where Save wrote it.
	File string `json:"file,omitempty"`
}

// minWait is the shortest wait the shrinker writes: below it a scenario
// file says nothing a container run could honour.
const minWait = 100 * time.Millisecond

// shrinker holds one shrink in progress.
type shrinker struct {
	o       Options
	so      ShrinkOptions
	checker check.Name
	seeds   []int64
	tried   int
	// best is the smallest failing schedule so far and what its first
	// seed's run resolved each fault to; evidence its checker summary.
	best     []scenario.Step
	resolved []chaos.Fault
	evidence string
	widened  float64
	// s plays every candidate, reset for each.
	s *session
}

// Shrink minimises sc, a schedule of an exploration with options o, while
// checker still fails on it: first fewer steps, then weaker faults (a
// partition becomes a cut of one link, a cut a one-way cut; a kill a stop),
// then shorter waits. Random targets (one, minority, ...) are first pinned
// to the nodes they chose, so the schedule means the same on every seed.
// It is deterministic for given options unless so.Deadline cuts it short.
func Shrink(o Options, sc Schedule, checker check.Name, so ShrinkOptions) (Shrunk, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Shrunk{}, err
	}
	so = so.withDefaults()
	x := &shrinker{o: o, so: so, checker: checker}
	defer func() {
		if x.s != nil {
			x.s.close()
		}
	}()
	for i := 0; i < so.Seeds; i++ {
		x.seeds = append(x.seeds, ScheduleSeed(sc.Seed, i))
	}
	out := Shrunk{Seed: sc.Seed, Checker: checker, From: len(sc.Steps)}
	pinned := pinTargets(sc.Steps, sc.Resolved)
	if !x.try(pinned) {
		return out, fmt.Errorf("schedule %d (seed %d): not shrunk: with its targets pinned, %s does not fail on every one of %d simulator seeds (the failure depends on one ordering of messages, which another run or containers would not reproduce; --shrink-seeds sets how many must fail)", sc.Index, sc.Seed, checker, so.Seeds)
	}
	for changed := true; changed && !x.spent(); {
		changed = x.dropSteps() || x.weakenFaults() || x.shortenWaits()
	}
	x.widenWaits()
	out.Steps = x.best
	out.StepCount = len(x.best)
	for _, st := range x.best {
		if st.Fault != nil {
			out.FaultSteps++
		}
	}
	out.Evidence, out.Tried, out.Exhausted, out.WaitMargin = x.evidence, x.tried, x.spent(), x.widened
	return out, nil
}

// Job is a failing schedule to shrink while Checker still fails on it.
type Job struct {
	Schedule Schedule
	Checker  check.Name
}

// FailureJobs are the jobs of r, an exploration's result, at most max:
// the failing schedules first (each by its first failed checker), then
// the split-brain ones of an algorithm that does not claim
// no-split-brain.
func FailureJobs(r Result, max int) []Job {
	var jobs []Job
	for _, sc := range r.Failing {
		jobs = append(jobs, Job{sc, sc.Failed[0]})
	}
	for _, sc := range r.SplitBrain {
		jobs = append(jobs, Job{sc, check.NoSplitBrain})
	}
	return jobs[:min(len(jobs), max)]
}

// ShrinkFailures shrinks up to max schedules of r (FailureJobs), an
// exploration with options o, each with so; a schedule that cannot be
// shrunk is reported in the errors and skipped.
func ShrinkFailures(o Options, r Result, max int, so ShrinkOptions) ([]Shrunk, []error) {
	var out []Shrunk
	var errs []error
	for _, s := range ShrinkAndSave(o, FailureJobs(r, max), so, "") {
		if s.Err != nil {
			errs = append(errs, s.Err)
			continue
		}
		out = append(out, s.Shrunk)
	}
	return out, errs
}

// Saved is what became of one job: its shrunk schedule (File set when it
// was saved), or why it could not be shrunk or saved.
type Saved struct {
	Job    Job
	Shrunk Shrunk
	Err    error
}

// ShrinkAndSave shrinks each job with so and, when dir is not empty,
// saves it there (Save): the one loop behind sim explore --shrink --save
// and conform --save. Every job has its outcome; one that fails does not
// stop the others.
func ShrinkAndSave(o Options, jobs []Job, so ShrinkOptions, dir string) []Saved {
	out := make([]Saved, 0, len(jobs))
	for _, j := range jobs {
		s := Saved{Job: j}
		s.Shrunk, s.Err = Shrink(o, j.Schedule, j.Checker, so)
		if s.Err == nil && dir != "" {
			s.Shrunk.File, s.Err = Save(o, s.Shrunk, dir)
		}
		out = append(out, s)
	}
	return out
}

// spent reports whether the reductions must stop: the budget is used up,
// keeping one try for widenWaits when it will make one, so that Tried never
// passes the budget, or the deadline has passed.
func (x *shrinker) spent() bool {
	reserve := 0
	if x.so.WaitMargin != 1 {
		reserve = 1
	}
	return x.tried >= x.so.Budget-reserve || (!x.so.Deadline.IsZero() && time.Now().After(x.so.Deadline))
}

func (x *shrinker) progress(format string, args ...any) {
	if x.so.Progress != nil {
		x.so.Progress(fmt.Sprintf(format, args...) + fmt.Sprintf(" (%d steps, %d tried)", len(x.best), x.tried))
	}
}

// try plays steps on every seed and keeps them as the best schedule when
// the checker fails on each. A step that cannot be carried out (a target
// with nothing to resolve to) counts as not failing.
func (x *shrinker) try(steps []scenario.Step) bool {
	x.tried++
	var first Schedule
	var evidence string
	for i, seed := range x.seeds {
		if x.s == nil {
			x.s = &session{o: x.o, b: newBackend(x.o)}
		}
		s := x.s
		if err := s.start(seed, nil); err != nil {
			return false
		}
		for _, st := range steps {
			if err := s.play(st); err != nil {
				return false
			}
		}
		failed := false
		for _, v := range s.judge([]check.Name{x.checker}) {
			if v.Checker == x.checker && !v.Pass {
				failed, evidence = true, v.Summary
			}
		}
		if !failed {
			return false
		}
		if i == 0 {
			first = s.played
			x.evidence = evidence
		}
	}
	x.best, x.resolved = steps, first.Resolved
	return true
}

// dropSteps removes one fault step at a time, last first, joining the
// waits around it so that later steps keep their times. The last heal
// stays: a schedule that cuts the network ends by healing it.
func (x *shrinker) dropSteps() bool {
	changed := false
	lastHeal := -1
	for i, st := range x.best {
		if st.Fault != nil && st.Fault.Op == chaos.Heal {
			lastHeal = i
		}
	}
	for i := len(x.best) - 1; i >= 0 && !x.spent(); i-- {
		if i >= len(x.best) || x.best[i].Fault == nil || (i == lastHeal && hasNetFault(x.best[:i])) {
			continue
		}
		what := x.best[i].String()
		if x.try(joinWaits(slices.Delete(slices.Clone(x.best), i, i+1))) {
			x.progress("dropped %s", what)
			changed = true
		}
	}
	return changed
}

func hasNetFault(steps []scenario.Step) bool {
	return slices.ContainsFunc(steps, func(st scenario.Step) bool {
		if st.Fault == nil || st.Fault.Op == chaos.Heal {
			return false
		}
		k, _ := chaos.KindOf(st.Fault.Op)
		return k.Family == chaos.FamilyNetwork
	})
}

// joinWaits merges adjacent fixed waits into one.
func joinWaits(steps []scenario.Step) []scenario.Step {
	out := steps[:0:0]
	for _, st := range steps {
		if n := len(out); n > 0 && isFixedWait(st) && isFixedWait(out[n-1]) {
			out[n-1].Duration += st.Duration
			continue
		}
		out = append(out, st)
	}
	return out
}

func isFixedWait(st scenario.Step) bool { return st.Op == scenario.OpWait && !st.Stable }

// weakenFaults replaces one fault at a time by a weaker one: a partition by
// the two-way cut of one of its links, then by a one-way cut; a two-way cut
// by one of its directions; a kill by a stop.
func (x *shrinker) weakenFaults() bool {
	changed := false
	fi := -1 // index into x.resolved
	for i := 0; i < len(x.best) && !x.spent(); i++ {
		st := x.best[i]
		if st.Fault == nil {
			continue
		}
		fi++
		for _, weaker := range weakerThan(*st.Fault, x.resolvedAt(fi), x.o.Members) {
			if x.spent() {
				break
			}
			cand := slices.Clone(x.best)
			cand[i] = scenario.FaultStep(weaker)
			if x.try(cand) {
				x.progress("weakened %s to %s", st, weaker)
				changed = true
				break
			}
		}
	}
	return changed
}

func (x *shrinker) resolvedAt(i int) chaos.Fault {
	if i < len(x.resolved) {
		return x.resolved[i]
	}
	return chaos.Fault{}
}

// weakerThan lists the faults one notch weaker than f, which resolved to r:
// its kind's weaker forms (chaos.Weaker).
func weakerThan(f chaos.Spec, r chaos.Fault, members []election.NodeID) []chaos.Spec {
	return chaos.Weaker(f, r, members)
}

// shortenWaits halves one wait at a time, down to minWait.
func (x *shrinker) shortenWaits() bool {
	changed := false
	for i := 0; i < len(x.best) && !x.spent(); i++ {
		st := x.best[i]
		if !isFixedWait(st) {
			continue
		}
		shorter := roundUp(st.Duration/2, minWait)
		if shorter >= st.Duration {
			continue
		}
		cand := slices.Clone(x.best)
		cand[i].Duration = shorter
		if x.try(cand) {
			x.progress("shortened wait %v to %v", st.Duration, shorter)
			changed = true
		}
	}
	return changed
}

// widenWaits gives every wait its margin, keeping the result only if the
// checker still fails with it.
func (x *shrinker) widenWaits() {
	if x.so.WaitMargin == 1 || x.tried >= x.so.Budget {
		return
	}
	cand := slices.Clone(x.best)
	for i := range cand {
		if isFixedWait(cand[i]) {
			cand[i].Duration = roundUp(time.Duration(float64(cand[i].Duration)*x.so.WaitMargin), minWait)
		}
	}
	if x.try(cand) {
		x.widened = x.so.WaitMargin
		x.progress("widened every wait %g×", x.so.WaitMargin)
	}
}

func roundUp(d, unit time.Duration) time.Duration {
	if d < unit {
		return unit
	}
	return (d + unit - 1) / unit * unit
}

// pinTargets replaces each random target (one, follower, minority,
// majority, a random isolate or bridge) by the nodes it resolved to, so the
// schedule no longer depends on the random source that chose them. leader,
// down, paused and all depend on the cluster's state only and stay.
func pinTargets(steps []scenario.Step, resolved []chaos.Fault) []scenario.Step {
	out := make([]scenario.Step, len(steps))
	fi := 0
	for i, st := range steps {
		out[i] = st
		if st.Fault == nil {
			continue
		}
		f := st.Fault.Clone()
		if fi < len(resolved) {
			r := resolved[fi]
			if f.Target.IsRandom() && len(r.Nodes) > 0 {
				f.Target = chaos.IDs(r.Nodes...)
			}
			if p := f.Partition; p != nil && p.Target.IsRandom() && len(r.Nodes) > 0 {
				p.Target = chaos.IDs(r.Nodes...)
			}
		}
		fi++
		out[i] = scenario.FaultStep(f)
	}
	return out
}
