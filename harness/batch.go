package harness

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Batch is what `ringleader run` does with its scenarios: every scenario
// its repetitions, each on a fresh backend with its own seed, up to
// Parallel runs at once, and one verdict over them all.
type Batch struct {
	Scenarios []*scenario.Scenario
	// Backend makes the backend of one run; it is called once per run.
	Backend func() chaos.Backend
	// Repeat, when positive, replaces each scenario's repeat:.
	Repeat int
	// Seed is the seed of a scenario's first repetition (repetition i
	// has Seed+i-1) unless the scenario has a seed: of its own and
	// SeedSet is false.
	Seed    int64
	SeedSet bool
	// Store is the root directory of run directories (Options.Store).
	Store string
	// Parallel is how many runs go at once; below 2, one after another.
	Parallel int
	// Progress receives each run's step lines and its verdict (nil:
	// none). Runs at once share it line by line: every line is whole and
	// begins with its run's label, and a verdict keeps its failure lines
	// under it.
	Progress io.Writer
}

// Outcome is a batch's verdict.
type Outcome struct {
	// Results holds every run that started, in the order of the
	// scenarios and, within one, of the repetitions, however many ran
	// at once.
	Results []*Result
	// Failed: a run failed a verdict or could not be carried out.
	Failed bool
	// Interrupted: the context ended the batch; runs not yet started
	// never will.
	Interrupted bool
}

// Exit statuses of a batch, as `ringleader run` reports them.
const (
	ExitPass        = 0
	ExitFail        = 1
	ExitInterrupted = 130
)

// ExitCode is the batch's exit status: interrupted before failed before
// passed.
func (o Outcome) ExitCode() int {
	switch {
	case o.Interrupted:
		return ExitInterrupted
	case o.Failed:
		return ExitFail
	}
	return ExitPass
}

// NotClosed lists, as "cluster: error", the runs whose backend could not
// remove everything it made.
func (o Outcome) NotClosed() []string {
	var out []string
	for _, r := range o.Results {
		if r.CloseError != "" {
			out = append(out, fmt.Sprintf("%s: %s", r.Cluster, r.CloseError))
		}
	}
	return out
}

// job is one repetition of one scenario, at its place in the batch.
type job struct {
	sc         *scenario.Scenario
	seed       int64
	rep, reps  int
	index      int // in the batch's order
	result     *Result
	err        error
	notStarted bool
}

// MaxRuns bounds a batch's runs (every scenario's repetitions together):
// each keeps its result in memory for the table, the JSON and the JUnit
// file, some 300 KB (2,000 runs of bridge.yaml in the simulator: 633 MB
// resident, 385 MB of store), so 10,000 runs are a few gigabytes and a
// --repeat of 100,000,000 filled the machine before its first run.
// Many more fault schedules are what sim explore is for: it keeps counts.
const MaxRuns = scenario.MaxRepeat

// Repeats is how many times the batch runs sc: Repeat, or else sc's own
// repeat:.
func (b Batch) Repeats(sc *scenario.Scenario) int {
	if b.Repeat > 0 {
		return b.Repeat
	}
	return sc.Repeat
}

// Runs is how many runs the batch holds, counted without listing them.
func (b Batch) Runs() int {
	n := 0
	for _, sc := range b.Scenarios {
		n += b.Repeats(sc)
	}
	return n
}

// jobs lists the batch's runs in the order a serial batch takes them.
func (b Batch) jobs() []*job {
	var js []*job
	for _, sc := range b.Scenarios {
		reps := b.Repeats(sc)
		seed := b.Seed
		if sc.Seed != nil && !b.SeedSet {
			seed = *sc.Seed
		}
		for rep := 1; rep <= reps; rep++ {
			js = append(js, &job{sc: sc, seed: seed + int64(rep-1), rep: rep, reps: reps, index: len(js)})
		}
	}
	return js
}

// Run runs the batch. Once ctx ends, no further run starts, and the ones
// under way end as harness.Run ends a cancelled run (their clusters
// removed, what they recorded kept).
func (b Batch) Run(ctx context.Context) Outcome {
	progress := b.Progress
	if progress != nil && b.Parallel > 1 {
		progress = SharedWriter(progress)
	}
	js := b.jobs()
	next := make(chan *job)
	var wg sync.WaitGroup
	for range max(b.Parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				b.runOne(ctx, j, progress)
			}
		}()
	}
	for _, j := range js {
		if ctx.Err() != nil {
			j.notStarted = true
			continue
		}
		next <- j
	}
	close(next)
	wg.Wait()

	var o Outcome
	for _, j := range js {
		if j.notStarted { // as a serial batch, whose next run fails at once
			o.Failed, o.Interrupted = true, true
			continue
		}
		if j.result != nil {
			o.Results = append(o.Results, j.result)
			o.Failed = o.Failed || !j.result.Pass
		}
		if j.err != nil {
			o.Failed = true
			o.Interrupted = o.Interrupted || ctx.Err() != nil
		}
	}
	return o
}

// runOne runs j and says how it went on progress.
func (b Batch) runOne(ctx context.Context, j *job, progress io.Writer) {
	if ctx.Err() != nil { // cancelled while this job waited for a worker
		j.notStarted = true
		return
	}
	j.result, j.err = Run(ctx, j.sc, b.Backend(), Options{
		Store: b.Store, Seed: j.seed, Rep: j.rep, Reps: j.reps, Progress: progress,
	})
	if progress == nil {
		return
	}
	label := fmt.Sprintf("[%s %d/%d]", j.sc.Name, j.rep, j.reps)
	switch res := j.result; {
	case j.err != nil:
		var s strings.Builder
		fmt.Fprintf(&s, "%s %v\n", label, j.err)
		if res != nil {
			// What else the run found (a system's members that never
			// elected, with their logs' ends), unless the error says it.
			for _, fl := range res.Failures {
				if !strings.Contains(j.err.Error(), strings.TrimPrefix(fl, "error: ")) {
					fmt.Fprintf(&s, "    %s\n", fl)
				}
			}
		}
		io.WriteString(progress, s.String())
	case res != nil:
		verdict := "PASS"
		if !res.Pass {
			verdict = "FAIL"
		}
		var s strings.Builder
		fmt.Fprintf(&s, "%s %s (%s) %s\n", label, verdict, millis.Float(res.WallMillis), res.Dir)
		for _, fl := range res.Failures {
			fmt.Fprintf(&s, "    %s\n", fl)
		}
		io.WriteString(progress, s.String())
	}
}

// SharedWriter lets runs at once share w: each Write (a progress line, a
// verdict with its failures, a backend's warning, as each is written in
// one call) reaches w whole, never cut into by another. Sharing one
// already shared adds nothing.
func SharedWriter(w io.Writer) io.Writer {
	if _, ok := w.(*sharedWriter); ok {
		return w
	}
	return &sharedWriter{w: w}
}

type sharedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *sharedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
