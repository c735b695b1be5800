// Package harness runs scenarios: it starts a cluster on any chaos.Backend,
// walks the scenario's steps (resolving symbolic targets against the
// cluster's state at that moment, awaiting stability and expectations on the
// backend's clock), records everything into a history that is written as it
// happens, and afterwards judges that history with the checkers and writes
// results.json and report.html into the run's store directory.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Options tune one run.
type Options struct {
	// Store is the root directory of run directories ("store" if empty).
	Store string
	// Seed drives the backend and every random target choice.
	Seed int64
	// Rep and Reps label the repetition (1-based) in progress lines and
	// results; zero means 1 of 1.
	Rep, Reps int
	// Progress receives one line per step (nil: none).
	Progress io.Writer
	// CloseTimeout bounds Backend.Close (default 60s). Close runs with a
	// context that is not the run's, so a cancelled run still cleans up.
	CloseTimeout time.Duration
}

// HarnessProcess is the Process of the harness's own mark records.
const HarnessProcess = "harness"

// CheckpointMark is the note of the mark the harness records at each
// checkpoint (Player.Checkpoints), so that the history alone holds every
// instant agreement and bully-max judged, and Rejudge judges them again.
const CheckpointMark = "checkpoint"

// Run runs one repetition of sc on backend and returns what happened. The
// error is for runs that could not be carried out (the store could not be
// written, the cluster did not start, a fault could not be applied, the
// context was cancelled); a run that completed with failed expectations or
// checkers returns a Result with Pass false and a nil error. Either way the
// backend is closed, and whatever history was recorded stays on disk.
func Run(ctx context.Context, sc *scenario.Scenario, backend chaos.Backend, opts Options) (res *Result, err error) {
	if opts.Rep == 0 {
		opts.Rep, opts.Reps = 1, 1
	}
	if opts.CloseTimeout == 0 {
		opts.CloseTimeout = 60 * time.Second
	}
	// Until the deferred clean-up below is in place, every early return
	// closes the backend itself: a caller may hand over a backend that
	// already holds resources.
	abort := func(err error) (*Result, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.CloseTimeout)
		defer cancel()
		if cerr := backend.Close(cctx); cerr != nil {
			err = fmt.Errorf("%w (and closing the %s backend: %v)", err, backend.Name(), cerr)
		}
		return nil, err
	}
	alg, err := algorithmOf(sc.Cluster)
	if err != nil {
		return abort(fmt.Errorf("scenario %s: %w", sc.Name, err))
	}
	if sc.Cluster.System != nil && backend.Name() == "sim" {
		return abort(fmt.Errorf("scenario %s: system %s runs only as its own servers, in containers; in the simulator, its model is algorithm raft with the same timeouts", sc.Name, sc.Cluster.System.Name))
	}
	if err := refusedBySystem(sc); err != nil {
		return abort(fmt.Errorf("scenario %s: %w", sc.Name, err))
	}
	// A parsed scenario is resolved already; one built in code may leave
	// its quorum mode and options to the algorithm's defaults. The run
	// uses, and records, the resolved ones.
	resolved := *sc
	if resolved.Cluster.Quorum, resolved.Cluster.Options, err = alg.Resolve(sc.Cluster.Quorum, sc.Cluster.Options); err != nil {
		return abort(fmt.Errorf("scenario %s: %w", sc.Name, err))
	}
	sc = &resolved
	dir, err := newRunDir(storeRoot(opts.Store), sc.Name, backend.Name(), time.Now())
	if err != nil {
		return abort(err)
	}
	hw, err := history.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		return abort(err)
	}
	mem := &history.Memory{}
	sink := history.Tee{hw, mem}

	r := &runner{
		sc: sc, b: backend, opts: opts, sink: sink, alg: alg,
		members: sc.Members(),
		player:  NewPlayer(backend, sc.Cluster, opts.Seed),
		label:   fmt.Sprintf("[%s %d/%d]", sc.Name, opts.Rep, opts.Reps),
	}
	res = &Result{
		Scenario: sc.Name, File: sc.File, Description: sc.Description,
		Backend: backend.Name(), Algorithm: sc.Cluster.Algorithm, Program: sc.Cluster.Program, Quorum: sc.Cluster.Quorum.String(),
		Options: sc.Cluster.Options, Members: r.members, Timing: timingOf(sc.Cluster.Timing), LivenessBoundMillis: ms(sc.LivenessBound), Seed: opts.Seed,
		Rep: opts.Rep, Reps: opts.Reps, Dir: dir, Started: time.Now(),
		Cluster: clusterName(sc.Name, opts.Rep),
		// Empty, not null, in results.json when nothing happened.
		Steps: []StepResult{}, Expectations: []ExpectResult{}, Checkers: []CheckerResult{}, Failovers: []FailoverResult{}, Returns: []FailoverResult{},
	}
	r.res = res
	res.System = systemResult(sc.Cluster)

	defer func() {
		// Close with a context of our own: after SIGINT the run's
		// context is done, and the containers must still go.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.CloseTimeout)
		defer cancel()
		if cerr := backend.Close(cctx); cerr != nil {
			res.CloseError = cerr.Error()
			res.Errors = append(res.Errors, "close: "+cerr.Error())
			if err == nil {
				err = fmt.Errorf("scenario %s: closing the %s backend: %w", sc.Name, backend.Name(), cerr)
			}
		}
		if herr := hw.Close(); herr != nil && err == nil {
			err = herr
		}
		if sr, ok := backend.(systemStatser); ok && res.System != nil {
			res.System.Probes = sr.SystemStats()
		}
		res.Finished = time.Now()
		res.WallMillis = ms(res.Finished.Sub(res.Started))
		res.Judge()
		if werr := res.WriteFiles(); werr != nil && err == nil {
			err = werr
		}
	}()

	spec := chaos.ClusterSpec{
		Name: res.Cluster, Algorithm: sc.Cluster.Algorithm, Program: sc.Cluster.Program, ProgramImage: sc.Cluster.Image, ProgramTimeout: sc.Cluster.ProgramTimeout, Quorum: sc.Cluster.Quorum, Options: sc.Cluster.Options,
		Members: r.members, Timing: sc.Cluster.Timing, Seed: opts.Seed,
		System: sc.Cluster.System, SystemOptions: sc.Cluster.SystemOptions, Placement: sc.Cluster.Placement,
	}
	if gate, ok := backend.(chaos.Gate); ok && sc.Cluster.System == nil {
		// Every machine starts once every node has booted and the
		// opening faults are in force, as every machine starts at time
		// zero in the simulator. A node that booted alone, seconds
		// before its peers (a busy engine starts containers slowly),
		// elected alone, was told its peers were gone (no responders),
		// and a hint stands until the peer speaks to it: a follower
		// that never hears from two of its higher peers still counts
		// them gone when a partition cuts the rest away, and leads at
		// once (bridge, docs/harness.md). A real server cannot be held
		// back: its opening faults still race its first election
		// (docs/scenarios.md).
		spec.Gated, r.gate = true, gate
		r.opening = openingFaults(sc.Steps)
	}
	r.mark("start cluster " + spec.Name)
	if err := backend.Start(ctx, spec, sink); err != nil {
		res.Errors = append(res.Errors, "start: "+err.Error())
		return res, fmt.Errorf("scenario %s: starting the cluster on %s: %w", sc.Name, backend.Name(), err)
	}
	r.start = backend.Now()
	res.origin = r.start
	r.notePlacement(backend, res)

	runErr := r.steps(ctx)
	r.mark("end")
	r.end = backend.Now()

	recs := mem.Records()
	res.records = recs
	r.judge(recs)
	if lt, ok := backend.(memberLogTailer); ok && sc.Cluster.System != nil && check.LeadershipOf(recs).LeaderChanges == 0 {
		// A server that never elected says why in its log, if anywhere.
		res.Errors = append(res.Errors, fmt.Sprintf("no %s member ever led; %s", sc.Cluster.System.Name, lt.MemberLogTails(context.WithoutCancel(ctx), 10)))
	}
	if runErr != nil {
		res.Errors = append(res.Errors, runErr.Error())
		return res, fmt.Errorf("scenario %s: %w", sc.Name, runErr)
	}
	return res, nil
}

// runner is one run in progress.
type runner struct {
	sc      *scenario.Scenario
	b       chaos.Backend
	opts    Options
	sink    history.Sink
	alg     election.Algorithm
	members []election.NodeID
	player  *Player
	// gate, when set, holds the nodes' machines back until the first
	// opening steps (the faults the scenario opens with) are in force.
	gate        chaos.Gate
	opening     int
	label       string
	res         *Result
	start, end  time.Time
	checkpoints []time.Time
}

func (r *runner) mark(note string) { r.markAt(r.b.Now(), note) }

func (r *runner) markAt(at time.Time, note string) {
	// A mark that cannot be written means the history is broken; the
	// writer remembers the error and the run's files report it.
	_ = r.sink.Append(history.Record{Time: at, Process: HarnessProcess, Kind: history.KindMark, Note: note})
}

func (r *runner) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "%s %s\n", r.label, fmt.Sprintf(format, args...))
	}
}

// steps runs every step; it stops early only when the run cannot go on (a
// fault that cannot be resolved or applied, a backend error, cancellation).
// A failed expectation is recorded and the run continues, so the rest of
// the history is still recorded and judged.
func (r *runner) steps(ctx context.Context) error {
	n := len(r.sc.Steps)
	if r.gate != nil && r.opening == 0 {
		if err := r.openGate(ctx); err != nil { // nothing to put first
			return err
		}
	}
	for i, st := range r.sc.Steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before step %d: %w", i+1, err)
		}
		sr := StepResult{Index: i + 1, Line: st.Line, Op: string(st.Op), Text: st.String()}
		r.mark(fmt.Sprintf("step %d/%d: %s", i+1, n, sr.Text))
		t0, w0 := r.b.Now(), time.Now()
		sr.At, sr.Start = t0, ms(t0.Sub(r.start))
		err := r.player.Play(ctx, st, &sr)
		for _, cp := range r.player.Checkpoints()[len(r.checkpoints):] {
			r.markAt(cp, CheckpointMark)
		}
		r.checkpoints = r.player.Checkpoints()
		t1 := r.b.Now()
		sr.Millis = ms(t1.Sub(t0))
		sr.WallMillis = ms(time.Since(w0))
		status := "ok"
		switch {
		case err != nil:
			sr.Error = err.Error()
			status = "ERROR: " + err.Error()
		case sr.Expect != nil && !sr.Expect.Pass:
			status = "FAILED: " + sr.Expect.Seen
		}
		r.res.Steps = append(r.res.Steps, sr)
		resolved := ""
		if sr.Resolved != "" {
			resolved = " → " + sr.Resolved
		}
		r.progress("step %d/%d %s%s ... %s (%s)", i+1, n, sr.Text, resolved, status, millis.Of(t1.Sub(t0)))
		if err != nil {
			r.mark(fmt.Sprintf("step %d/%d failed: %v", i+1, n, err))
			return fmt.Errorf("step %d (line %d, %s): %w", i+1, st.Line, sr.Text, err)
		}
		if sr.Expect != nil {
			verdict := "passed"
			if !sr.Expect.Pass {
				verdict = "failed: " + sr.Expect.Seen
			}
			r.mark(fmt.Sprintf("step %d/%d %s", i+1, n, verdict))
		}
		if r.gate != nil && i+1 == r.opening {
			if err := r.openGate(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// GateMark is the note of the mark the harness records when a gated run's
// nodes start electing, the scenario's opening faults in force.
const GateMark = "gate open: every node booted, the opening faults (if any) in force; the nodes start electing"

// openingFaults is how many steps, from the first, inject or heal faults:
// the faults a scenario opens with, in force before its first election.
func openingFaults(steps []scenario.Step) int {
	for i, st := range steps {
		if !st.Op.IsFault() {
			return i
		}
	}
	return len(steps)
}

// openGate starts the machines of a gated run (chaos.Gate) once its
// opening faults, if any, are in force.
func (r *runner) openGate(ctx context.Context) error {
	r.mark(GateMark)
	t0 := r.b.Now()
	if err := r.gate.Open(ctx); err != nil {
		r.mark("gate not opened: " + err.Error())
		return fmt.Errorf("starting the nodes' machines after the %d opening fault step(s): %w", r.opening, err)
	}
	if r.opening > 0 {
		r.progress("opening faults in force: the nodes start electing (%s)", millis.Of(r.b.Now().Sub(t0)))
	}
	return nil
}

// judge analyses the history once and hands the analysis to results.json
// and the report (judgeInto).
func (r *runner) judge(recs []history.Record) {
	judgeInto(r.res, r.sc, r.alg, recs, r.checkpoints)
}

// judgeInto analyses recs once (check.Analyze) with the checkers and
// options of sc on algorithm a, judged at checkpoints, and fills res's
// verdicts, failovers, returns, overlaps, message counts and elections.
// It is the one place a history is judged: a run judges its history with
// it as it ends, and Rejudge a stored one.
func judgeInto(res *Result, sc *scenario.Scenario, a election.Algorithm, recs []history.Record, checkpoints []time.Time) {
	an := check.Analyze(recs, CheckOptions(sc, a, checkpoints), CheckerNames(sc, a)...)
	res.analysis = an
	res.Checkers = []CheckerResult{}
	for _, v := range an.Verdicts {
		want := sc.Expected(v.Checker)
		cr := CheckerResult{Verdict: v, Expected: verdictWord(want), Match: v.Pass == want}
		if measuredOnly(sc, v.Checker) {
			// A property the system does not promise: measured and
			// shown, expected neither way.
			cr.Expected, cr.Match = Measured, true
		}
		res.Checkers = append(res.Checkers, cr)
	}
	res.Checkpoints = len(checkpoints)
	sb := an.SplitBrain
	res.SplitBrain = SplitBrain{Overlaps: len(sb.Overlaps), TotalMillis: sb.TotalMillis, PairTotalMillis: sb.PairTotalMillis,
		StaleOverlaps: len(sb.StaleOverlaps), StaleMillis: sb.StaleMillis}
	susp := ms(sc.Cluster.Timing.Suspicion)
	res.Failovers = failoverResults(an.Failovers, susp)
	res.Returns = failoverResults(an.Returns, susp)
	res.Messages = &an.Counts
	res.Elections = an.Elections
	res.Leadership = an.Leadership
}

// failoverResults adds to each measured settling its length from the invoke
// and in suspicion timeouts (susp, in ms).
func failoverResults(fs []check.Failover, susp float64) []FailoverResult {
	out := []FailoverResult{}
	for _, f := range fs {
		fo := FailoverResult{Failover: f}
		if f.Recovered {
			fo.FromInvokeMillis = ms(f.At.Sub(f.Invoked))
			if susp > 0 {
				fo.Suspicions = f.Millis / susp
			}
		}
		out = append(out, fo)
	}
	return out
}

// CheckOptions are the checkers' options for a run of sc on algorithm a
// whose stable waits and expectations passed at checkpoints. The explorer
// judges its schedules with them too.
func CheckOptions(sc *scenario.Scenario, a election.Algorithm, checkpoints []time.Time) check.Options {
	return check.Options{
		Algorithm: a, Quorum: sc.Cluster.Quorum, Members: sc.Members(), Timing: sc.Cluster.Timing,
		Checkpoints: checkpoints, LivenessBound: sc.LivenessBound,
	}
}

// CheckerNames are the checkers a run of sc runs, in check.Names order:
// the scenario's list, or the properties the algorithm claims in its quorum
// mode; plus every checker whose verdict the scenario states, and the ones
// every history of the algorithm is judged by (check.Always). The
// message-complexity checker runs only when named: the published formulas
// count one election in which every node starts at the same instant, and
// containers boot one after another, so the first election of a container
// run is not the election the formula describes (the simulator's
// complexity command is where counts meet formulas).
func CheckerNames(sc *scenario.Scenario, a election.Algorithm) []check.Name {
	names := slices.Clone(sc.Checkers)
	if len(names) == 0 && sc.Cluster.System != nil {
		// A system runs every checker that means something for a
		// server; the ones it does not claim are measured only.
		names = slices.Clone(systemCheckers)
	}
	if len(names) == 0 {
		for _, n := range check.Claimed(a, sc.Cluster.Quorum) {
			if n != check.MessageComplexity {
				names = append(names, n)
			}
		}
	}
	// A program's failures are findings whatever the file names: a saved
	// schedule names only the checker it fails.
	names = append(names, check.Always(a)...)
	var out []check.Name
	for _, n := range check.Names {
		if _, stated := sc.ExpectCheckers[n]; stated || slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out
}

func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// IsInterrupted reports whether err comes from a cancelled run.
func IsInterrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func storeRoot(s string) string {
	if s == "" {
		return "store"
	}
	return s
}

// LatestBackend is the backend whose runs store/<scenario>/latest follows:
// the real containers. Every backend's newest run is also
// store/<scenario>/latest-<backend>, so a simulator run (well under a
// second) never hides the container run someone is looking at.
const LatestBackend = "docker"

// newRunDir creates store/<scenario>/<timestamp>/ (UTC, sortable; a suffix
// when two runs start in the same millisecond), points
// store/<scenario>/latest-<backend> at it and, for LatestBackend,
// store/<scenario>/latest too.
func newRunDir(root, name, backend string, now time.Time) (string, error) {
	base := filepath.Join(root, name)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	stamp := now.UTC().Format("20060102T150405.000Z")
	dir := filepath.Join(base, stamp)
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("store: %w", err)
		}
		dir = filepath.Join(base, fmt.Sprintf("%s-%d", stamp, i))
	}
	// A symlink is a convenience: where it cannot be made, the run is
	// still complete.
	links := []string{"latest-" + backend}
	if backend == LatestBackend {
		links = append(links, "latest")
	}
	for _, l := range links {
		latest := filepath.Join(base, l)
		// Only a link is replaced: a file or directory someone put
		// under that name is theirs.
		if fi, err := os.Lstat(latest); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		// Made aside and renamed over the old one: runs of one
		// scenario at once (Batch.Parallel) each replace it whole.
		tmp := fmt.Sprintf("%s.%d.tmp", latest, rand.Uint64())
		if os.Symlink(filepath.Base(dir), tmp) == nil && os.Rename(tmp, latest) != nil {
			_ = os.Remove(tmp)
		}
	}
	return dir, nil
}

// clusterName is unique per run: it names containers, networks and
// volumes and namespaces NATS subjects, so two runs (or two helpers) never
// mix. Within this process it is never handed out twice, so that runs at
// once (Batch.Parallel) cannot share a name even by a chance draw.
func clusterName(scenarioName string, rep int) string {
	n := scenarioName
	if len(n) > 40 {
		n = n[:40]
	}
	namesMu.Lock()
	defer namesMu.Unlock()
	for {
		name := fmt.Sprintf("%s-r%d-%06x", n, rep, rand.Uint32()&0xffffff)
		if !namesGiven[name] {
			namesGiven[name] = true
			return name
		}
	}
}

// The cluster names this process has handed out.
var (
	namesMu    sync.Mutex
	namesGiven = map[string]bool{}
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// notePlacement writes which engine holds each node of a run across
// several into the results and, as one mark per engine, the history.
func (r *runner) notePlacement(b chaos.Backend, res *Result) {
	p, ok := b.(chaos.Placed)
	if !ok {
		return
	}
	hosts, pl := p.Placement()
	for i, g := range pl {
		res.Engines = append(res.Engines, EngineResult{Engine: hosts[i], Nodes: g})
		r.mark(fmt.Sprintf("engine %s holds nodes %s", hosts[i], chaos.IDList(g)))
	}
}
