//go:build !nodeimage

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/internal/progress"
	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/program"
)

func init() {
	commands["conform"] = command{summary: "run the algorithm conformance suite on a program (or an algorithm) and report which claims hold", run: conformCmd}
}

func conformCmd(args []string) int { return runConform(args, os.Stdout, os.Stderr) }

const conformUsage = `Usage: ringleader conform --program "COMMAND ARGS" [--quorum none|majority] [--n 5] [--schedules 300] [--seed 1] [--json] [--save DIR [--image IMAGE]]
       ringleader conform --algorithm NAME [flags]

Runs the conformance suite every built-in algorithm passes (package
conformance) on a program speaking docs/protocol.md, or on a built-in
algorithm, in the simulator, and reports for each quorum mode each
property claimed (holds, or violated with its first counterexample) and
each case of the suite:

  FaultFreeElectionAgrees        every node starts at once; all agree (on the
                                 highest ID if bully-max is claimed) and every
                                 claimed checker passes
  FaultFreeElectionMeetsFormula  the published message count (skipped without one)
  LeaderCrashIsReplaced          the leader is killed, then restarted: the live
                                 nodes agree again within the liveness bound
  RandomFaultSchedules           --schedules explored fault schedules, every
                                 claimed checker judged on each

A program's claims are its answer to start, which depends on the quorum
mode: without --quorum it is started in each mode (none, majority) and
judged in those it accepts; a program declines a mode by exiting on a
start with it (the declined modes are listed with its stderr). An
algorithm runs in the modes it supports. A mode that claims nothing is a
failure: a suite that judges no property proves nothing.

A violated claim comes with its first counterexample: the case and what
happened, and the first explored schedule it failed on with the command
that replays it. --save DIR shrinks that schedule (as 'sim explore
--shrink' does) and writes it as a scenario file,
DIR/<algorithm>-<property>-<seed>.yaml, which 'ringleader run' passes
exactly when the failure reproduces. Progress goes to stderr.

Exit status: 0 every claim holds and every case passes, 1 a claim is
violated, a case fails or a mode claims nothing, 2 bad flags or a program
that cannot start (its stderr is quoted).

Flags:
`

// conformFlags are the command's settings.
type conformFlags struct {
	program, algorithm, quorum string
	n, schedules               int
	seed                       int64
	asJSON                     bool
	save, image                string
	shrinkTime                 time.Duration
	programTimeout             *time.Duration
}

func runConform(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	var f conformFlags
	fs.StringVar(&f.program, "program", "", "a program's command line, speaking docs/protocol.md (\"python3 examples/bully-python/bully.py\")")
	fs.StringVar(&f.algorithm, "algorithm", "", "instead of --program: a built-in algorithm")
	fs.StringVar(&f.quorum, "quorum", "", "run in this quorum mode only: none or majority (default: every mode the program accepts, or the algorithm runs in)")
	fs.IntVar(&f.n, "n", 5, "cluster size (IDs 1..n)")
	fs.IntVar(&f.schedules, "schedules", 300, "random fault schedules per quorum mode")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the ring arrangement, the simulator and the exploration")
	fs.BoolVar(&f.asJSON, "json", false, "print the report as one JSON object")
	fs.StringVar(&f.save, "save", "", "shrink the first failing schedule of each violated claim and write it as a scenario file in `DIR`")
	fs.StringVar(&f.image, "image", "", "with --program and --save: the image that holds the program's runtime on the docker backend, written into the saved files (cluster.image)")
	f.programTimeout = programTimeoutFlag(fs)
	fs.DurationVar(&f.shrinkTime, "shrink-time", 2*time.Minute, "with --save: stop shrinking after this long in all, keeping the smallest schedules found")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), conformUsage)
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlagsTo(fs, args, stderr); done {
		return status
	}
	if status := f.validate(fs, stderr); status != 0 {
		return status
	}
	if !checkOutputs(stderr, "conform", outputPath{flag: "--save", path: f.save, kind: outpath.Dir}) {
		return 2
	}
	q, _ := election.ParseQuorum(f.quorum) // validated

	var subject conformSubject
	var status int
	if f.program != "" {
		defer program.CloseAll()
		subject, status = registerProgramModes(strings.Fields(f.program), q, f.n, *f.programTimeout, stderr)
	} else {
		subject, status = algorithmModes(f.algorithm, q, stderr)
	}
	if status != 0 {
		return status
	}
	if f.save != "" {
		// Found now, not after the suite ran: a schedule that could
		// not be saved (more nodes than a scenario file holds).
		if err := explore.CheckSave(explore.Options{Algorithm: subject.runs[0].alg.Name, N: f.n, Quorum: subject.runs[0].q, Seed: f.seed}); err != nil {
			return usageErrorTo(stderr, "conform", "--save %s: %v", f.save, err)
		}
	}

	out, err := runSuite(subject, f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ringleader conform: %v\n", err)
		return 2
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "ringleader conform: %v\n", err)
			return 1
		}
	} else {
		printConform(stdout, out)
	}
	if !out.Pass {
		return 1
	}
	return 0
}

// runSuite runs the suite on each registered run of subject, with
// progress on stderr, and shrinks and saves the counterexamples when
// asked.
func runSuite(subject conformSubject, f conformFlags, stderr io.Writer) (conformReport, error) {
	out := conformReport{Program: subject.program, Algorithm: subject.algorithm, N: f.n, Schedules: f.schedules, Seed: f.seed, Declined: subject.declined}
	meter := &conformMeter{w: stderr, tty: isTerminalWriter(stderr)}
	for _, r := range subject.runs {
		rep, err := conformance.Check(r.alg, conformance.Options{
			N: f.n, Schedules: f.schedules, Seed: f.seed, Quorums: r.quorums(), Progress: meter.show,
		})
		meter.done()
		if err != nil {
			return out, err
		}
		out.Modes = append(out.Modes, rep.Modes...)
	}
	if f.save != "" {
		out.Saved = shrinkViolations(out.Modes, f.save, f.image, f.shrinkTime, stderr)
	}
	out.Pass = out.pass()
	return out, nil
}

func (f conformFlags) validate(fs *flag.FlagSet, stderr io.Writer) int {
	switch {
	case fs.NArg() > 0:
		return usageErrorTo(stderr, "conform", "unexpected argument %q", fs.Arg(0))
	case f.program != "" && f.algorithm != "":
		return usageErrorTo(stderr, "conform", "--program and --algorithm both given: judge one or the other")
	case f.program == "" && f.algorithm == "":
		return usageErrorTo(stderr, "conform", "give --program \"COMMAND ARGS\" or --algorithm NAME (known algorithms: %s)", knownAlgorithms())
	case f.program != "" && len(strings.Fields(f.program)) == 0:
		return usageErrorTo(stderr, "conform", "--program %q: want a command line, such as --program \"python3 examples/bully-python/bully.py\"", f.program)
	case f.n < 1:
		return usageErrorTo(stderr, "conform", "--n %d: need at least one node", f.n)
	case f.schedules < 1:
		return usageErrorTo(stderr, "conform", "--schedules %d: need at least one", f.schedules)
	case *f.programTimeout <= 0:
		return usageErrorTo(stderr, "conform", "--program-timeout %v: must be positive", *f.programTimeout)
	case f.shrinkTime <= 0:
		return usageErrorTo(stderr, "conform", "--shrink-time %v: must be positive", f.shrinkTime)
	case f.image != "" && (f.program == "" || f.save == ""):
		return usageErrorTo(stderr, "conform", "--image %s: it names a program's image in the files --save writes: give --program and --save", f.image)
	}
	if _, err := election.ParseQuorum(f.quorum); err != nil {
		return usageErrorTo(stderr, "conform", "--%v", err)
	}
	return 0
}

// conformSubject is what the suite runs on: one registered algorithm per
// run, with the modes a program declined.
type conformSubject struct {
	program   []string
	algorithm string
	runs      []conformRun
	declined  []declinedMode
}

// conformRun is one registered algorithm and the mode it runs in (a
// program is registered once per mode); q empty: every mode it runs in.
type conformRun struct {
	alg election.Algorithm
	q   election.QuorumMode
}

func (r conformRun) quorums() []election.QuorumMode {
	if r.q == election.QuorumDefault {
		return nil
	}
	return []election.QuorumMode{r.q}
}

// declinedMode is a quorum mode a program did not accept, and how it
// said so.
type declinedMode struct {
	Quorum election.QuorumMode `json:"quorum"`
	Reason string              `json:"reason"`
}

// registerProgramModes registers argv in mode q, or, when q is not given,
// in every mode; a mode whose probe start fails is declined. Status 2
// when the program runs in none of them.
func registerProgramModes(argv []string, q election.QuorumMode, n int, timeout time.Duration, stderr io.Writer) (conformSubject, int) {
	modes := []election.QuorumMode{election.NoQuorum, election.Majority}
	if q != election.QuorumDefault {
		modes = []election.QuorumMode{q}
	}
	members := election.FirstIDs(n)
	s := conformSubject{program: argv}
	var errs []string
	for _, m := range modes {
		name, err := program.Register(argv, m, members, election.Timing{}, program.Options{Timeout: timeout})
		if err != nil {
			s.declined = append(s.declined, declinedMode{Quorum: m, Reason: err.Error()})
			errs = append(errs, err.Error())
			continue
		}
		alg, err := election.Lookup(name)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader conform: %v\n", err)
			return s, 2
		}
		s.runs = append(s.runs, conformRun{alg: alg, q: m})
	}
	if len(s.runs) > 0 {
		return s, 0
	}
	// The same failure in every mode (a command that does not start)
	// is said once.
	if len(errs) == 1 || allSame(errs) {
		fmt.Fprintf(stderr, "ringleader conform: --program: %s\n", errs[0])
		return s, 2
	}
	fmt.Fprintf(stderr, "ringleader conform: --program: %s runs in no quorum mode:\n", strings.Join(argv, " "))
	for i, e := range errs {
		fmt.Fprintf(stderr, "  quorum %s: %s\n", modes[i], indent(e, "  "))
	}
	return s, 2
}

func allSame(l []string) bool {
	for _, s := range l {
		if s != l[0] {
			return false
		}
	}
	return true
}

// algorithmModes is a built-in algorithm in mode q, or in every mode it
// runs in.
func algorithmModes(name string, q election.QuorumMode, stderr io.Writer) (conformSubject, int) {
	alg, err := election.Lookup(name)
	if err != nil {
		return conformSubject{}, usageErrorTo(stderr, "conform", "--algorithm: %v", err)
	}
	if q != election.QuorumDefault {
		if _, err := alg.ResolveQuorum(q); err != nil {
			return conformSubject{}, usageErrorTo(stderr, "conform", "--quorum: %v", err)
		}
	}
	return conformSubject{algorithm: name, runs: []conformRun{{alg: alg, q: q}}}, 0
}

// conformReport is what the command prints: the suite's modes, with the
// modes a program declined and the counterexamples saved.
type conformReport struct {
	Program   []string           `json:"program,omitempty"`
	Algorithm string             `json:"algorithm,omitempty"`
	N         int                `json:"n"`
	Schedules int                `json:"schedules"`
	Seed      int64              `json:"seed"`
	Modes     []conformance.Mode `json:"modes"`
	Declined  []declinedMode     `json:"declined,omitempty"`
	Saved     []savedSchedule    `json:"saved,omitempty"`
	// Pass: every mode run claims something, every claim holds and
	// every case passes.
	Pass bool `json:"pass"`
}

// savedSchedule is a violated claim's first failing schedule, shrunk
// and written as a scenario file (File), or why it could not be.
type savedSchedule struct {
	Quorum election.QuorumMode `json:"quorum"`
	explore.Shrunk
	Error string `json:"error,omitempty"`
}

func (r conformReport) pass() bool {
	for _, m := range r.Modes {
		if !m.Pass() || m.ClaimsNothing() || len(m.Violated()) > 0 {
			return false
		}
	}
	return len(r.Modes) > 0
}

func (r conformReport) saved(q election.QuorumMode, p check.Name) (savedSchedule, bool) {
	for _, s := range r.Saved {
		if s.Quorum == q && s.Checker == p {
			return s, true
		}
	}
	return savedSchedule{}, false
}

// shrinkViolations shrinks the first failing schedule of each violated
// claim and saves it under dir, within shrinkTime in all
// (explore.ShrinkAndSave, as sim explore --shrink --save does).
func shrinkViolations(modes []conformance.Mode, dir, image string, shrinkTime time.Duration, stderr io.Writer) []savedSchedule {
	so := explore.ShrinkOptions{Deadline: time.Now().Add(shrinkTime),
		Progress: func(line string) { fmt.Fprintf(stderr, "shrink: %s\n", line) }}
	var out []savedSchedule
	for _, m := range modes {
		eo := m.Explore
		eo.Image = image
		var jobs []explore.Job
		for _, c := range m.Claims {
			if c.Holds || c.FirstSchedule == nil || m.Explored == nil {
				continue
			}
			if sc, ok := failingSchedule(*m.Explored, c.FirstSchedule.Schedule.Index); ok {
				jobs = append(jobs, explore.Job{Schedule: sc, Checker: c.Property})
			} // else kept in the report only (past explore.Options.Keep)
		}
		for _, r := range explore.ShrinkAndSave(eo, jobs, so, dir) {
			s := savedSchedule{Quorum: m.Quorum}
			if r.Err != nil {
				fmt.Fprintf(stderr, "shrink: %v\n", r.Err)
				s.Seed, s.Checker, s.Error = r.Job.Schedule.Seed, r.Job.Checker, r.Err.Error()
			} else {
				s.Shrunk = r.Shrunk
			}
			out = append(out, s)
		}
	}
	return out
}

func failingSchedule(r explore.Result, index int) (explore.Schedule, bool) {
	for _, sc := range r.Failing {
		if sc.Index == index {
			return sc, true
		}
	}
	return explore.Schedule{}, false
}

// conformMeter shows the suite's progress on stderr: a meter of the
// schedules while RandomFaultSchedules runs.
type conformMeter struct {
	w     io.Writer
	tty   bool
	meter *progress.Meter
}

func (m *conformMeter) show(p conformance.Progress) {
	if p.Case != conformance.RandomFaultSchedules {
		m.done()
		return
	}
	if m.meter == nil {
		m.meter = progress.New(m.w, m.tty, "conform (quorum "+p.Quorum.Text()+")", "schedules", p.Total, time.Now)
		m.meter.Start()
	}
	m.meter.Set(p.Done)
}

func (m *conformMeter) done() {
	if m.meter != nil {
		m.meter.Done()
		m.meter = nil
	}
}

func printConform(w io.Writer, r conformReport) {
	what := "algorithm " + r.Algorithm
	if len(r.Program) > 0 {
		what = "program " + strings.Join(r.Program, " ")
	}
	fmt.Fprintf(w, "conformance of %s: %d nodes, %d schedules per quorum mode, seed %d\n", what, r.N, r.Schedules, r.Seed)
	for _, m := range r.Modes {
		fmt.Fprintln(w)
		printMode(w, r, m)
	}
	for _, d := range r.Declined {
		fmt.Fprintf(w, "\nquorum %s: not run: the program declined it (its probe start failed):\n", d.Quorum.Text())
		fmt.Fprintf(w, "  %s\n", indent(d.Reason, "  "))
	}
	fmt.Fprintf(w, "\nsummary:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range r.Modes {
		fmt.Fprintf(tw, "  quorum %s\t%s\n", m.Quorum.Text(), modeSummary(m))
	}
	for _, d := range r.Declined {
		fmt.Fprintf(tw, "  quorum %s\tdeclined by the program\n", d.Quorum.Text())
	}
	tw.Flush()
	if r.Pass {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

func printMode(w io.Writer, r conformReport, m conformance.Mode) {
	name := ""
	if len(r.Program) > 0 {
		name = " (registered as " + m.Algorithm + ")"
	}
	if m.ClaimsNothing() {
		fmt.Fprintf(w, "quorum %s%s: claims NOTHING: no property is judged (a program lists its claims in its answer to start: docs/protocol.md)\n", m.Quorum.Text(), name)
	} else {
		fmt.Fprintf(w, "quorum %s%s:\n", m.Quorum.Text(), name)
	}
	// Padded by hand, not by a tabwriter: a counterexample's lines come
	// between the claims' and must not widen their column.
	width := 0
	for _, c := range m.Claims {
		width = max(width, len(c.Property))
	}
	for _, c := range m.Claims {
		if c.Holds {
			fmt.Fprintf(w, "  %-*s  holds\n", width, c.Property)
			continue
		}
		fmt.Fprintf(w, "  %-*s  VIOLATED\n", width, c.Property)
		printCounterexample(w, r, m, c)
	}
	fmt.Fprintf(w, "  cases:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range m.Cases {
		fmt.Fprintf(tw, "    %s\t%s\n", c.Name, caseLine(m, c))
	}
	tw.Flush()
}

// printCounterexample prints a violated claim's first failure and its
// first failing schedule.
func printCounterexample(w io.Writer, r conformReport, m conformance.Mode, c conformance.Claim) {
	if c.First.Schedule == nil {
		fmt.Fprintf(w, "      %s: %s\n", c.First.Case, indent(c.First.Message, "      "))
	}
	if c.FirstSchedule == nil {
		return
	}
	sc := c.FirstSchedule.Schedule
	first, _, _ := strings.Cut(c.FirstSchedule.Message, "\n")
	fmt.Fprintf(w, "      failed in %d of %d explored schedules; the first, %s\n", c.FailedSchedules, r.Schedules, first)
	fmt.Fprintf(w, "        replay: %s\n", sc.Replay)
	if sc.Nondeterministic != "" {
		fmt.Fprintf(w, "        %s\n", indent(sc.Nondeterministic, "        "))
	}
	if s, ok := r.saved(m.Quorum, c.Property); ok {
		if s.Error != "" {
			fmt.Fprintf(w, "        not saved: %s\n", indent(s.Error, "        "))
		} else {
			fmt.Fprintf(w, "        shrunk to %s (%d of them faults): %s\n", plural(s.StepCount, "step"), s.FaultSteps, s.File)
			for _, st := range s.Steps {
				fmt.Fprintf(w, "          %s\n", st)
			}
		}
	}
}

// caseLine is a case's outcome with its first failure's first line.
func caseLine(m conformance.Mode, c conformance.Case) string {
	switch c.Outcome {
	case conformance.Skip:
		return "skip: " + c.Skipped
	case conformance.Pass:
		return "pass"
	}
	f := c.Failures[0]
	line, _, _ := strings.Cut(f.Message, "\n")
	if f.Property != "" && f.Schedule == nil { // a schedule's message names its checker
		prop := string(f.Property)
		if !claims(m, f.Property) {
			prop += " (not claimed; the suite requires it)"
		}
		line = prop + ": " + line
	}
	switch more := len(c.Failures) - 1; {
	case c.Name == conformance.RandomFaultSchedules && m.Explored != nil:
		line += fmt.Sprintf(" (%d of %d schedules failed)", m.Explored.FailedSchedules, m.Explored.Schedules)
	case more > 0:
		line += fmt.Sprintf(" (and %d more)", more)
	}
	return "FAIL  " + line
}

// modeSummary is one mode in a line: how many claims hold, what failed.
func modeSummary(m conformance.Mode) string {
	s := "claims nothing"
	if !m.ClaimsNothing() {
		s = fmt.Sprintf("%d of %d claims hold", len(m.Claims)-len(m.Violated()), len(m.Claims))
	}
	if v := m.Violated(); len(v) > 0 {
		s += "; violated: " + joinNames(v)
	}
	var failed []string
	for _, c := range m.Cases {
		if c.Outcome == conformance.Fail {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		s += "; failed cases: " + strings.Join(failed, ", ")
	}
	return s
}

func claims(m conformance.Mode, p check.Name) bool {
	for _, c := range m.Claims {
		if c.Property == p {
			return true
		}
	}
	return false
}

func joinNames(ns []check.Name) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func indent(s, by string) string { return strings.ReplaceAll(s, "\n", "\n"+by) }
