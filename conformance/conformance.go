// Package conformance is the conformance suite every election algorithm
// passes, in the manner of nettest.TestConn and fstest.TestFS: one function,
// Run, proves through the simulator that an algorithm does what its
// registration claims.
//
//   - A fault-free election, every node starting at once: all nodes agree on
//     one leader (the highest ID if the algorithm claims bully-max), every
//     claimed checker passes, and the election costs what the published
//     formula says (exactly, or at most, as the formula states).
//   - The leader crashes: every live node agrees on a new leader (the
//     highest live ID if claimed) within the liveness bound.
//   - The old leader restarts: if the algorithm claims bully-max it leads
//     again; otherwise the cluster agrees on some leader.
//   - A few hundred random fault schedules (package explore): every
//     claimed checker passes on every one, in both quorum modes when the
//     algorithm supports a majority.
//   - For an algorithm not seeded by construction (a program): the
//     fault-free election and a sample of the explored schedules, passing
//     or failing, each played twice, give the same history record for
//     record, so that a replay command or a saved file means one run.
//
// The same cases run outside a Go test through Check, which returns a
// Report: each case's outcome and, for each claimed property, whether it
// held and the first counterexample (`ringleader conform` prints it).
package conformance

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// Options tune the suite; the zero value is the full suite.
type Options struct {
	// N is the cluster size; zero: 5.
	N int
	// Schedules is the number of random fault schedules per quorum mode;
	// zero: 300 (60 when Run is given -short).
	Schedules int
	// Seed of the random arrangement and of the exploration; zero: 1.
	Seed int64
	// Quorums are the quorum modes to run; empty: every mode the
	// algorithm runs in (election.Algorithm.Quorums).
	Quorums []election.QuorumMode
	// Progress, when set, hears each case as it starts and, during
	// RandomFaultSchedules, every finished schedule (from one goroutine
	// at a time).
	Progress func(Progress)
}

// Progress is how far the suite has come.
type Progress struct {
	Quorum election.QuorumMode
	Case   string
	// Done of Total schedules, in RandomFaultSchedules; both zero in
	// the other cases.
	Done, Total int
}

// The cases, in the order they run.
const (
	FaultFreeElectionAgrees       = "FaultFreeElectionAgrees"
	FaultFreeElectionMeetsFormula = "FaultFreeElectionMeetsFormula"
	LeaderCrashIsReplaced         = "LeaderCrashIsReplaced"
	RandomFaultSchedules          = "RandomFaultSchedules"
	ReplaysAreDeterministic       = "ReplaysAreDeterministic"
)

// cases pairs each case's name with the suite's method that plays it.
var cases = []struct {
	name string
	play func(*suite, *caseRun)
}{
	{FaultFreeElectionAgrees, (*suite).faultFree},
	{FaultFreeElectionMeetsFormula, (*suite).formula},
	{LeaderCrashIsReplaced, (*suite).crash},
	{RandomFaultSchedules, (*suite).explore},
	{ReplaysAreDeterministic, (*suite).determinism},
}

// withDefaults fills the options left zero; short is go test's -short.
func (o Options) withDefaults(alg election.Algorithm, short bool) (Options, error) {
	if o.N <= 0 {
		o.N = 5
	}
	if o.Schedules <= 0 {
		o.Schedules = 300
		if short {
			o.Schedules = 60
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if _, err := election.Lookup(alg.Name); err != nil {
		return o, fmt.Errorf("the suite runs algorithms through the registry: %v", err)
	}
	if len(o.Quorums) == 0 {
		o.Quorums = alg.Quorums
	}
	for _, q := range o.Quorums {
		if !slices.Contains(alg.Quorums, q) {
			return o, fmt.Errorf("algorithm %s does not run with quorum %s (it runs with %s)", alg.Name, q.Text(), alg.QuorumModes())
		}
	}
	return o, nil
}

// modeName is the subtest of a quorum mode.
func modeName(q election.QuorumMode) string {
	if q == election.Majority {
		return "majority"
	}
	return "no-quorum"
}

// Run runs the whole suite on alg with default options.
func Run(t *testing.T, alg election.Algorithm) { RunWith(t, alg, Options{}) }

// RunWith runs the suite with opts: a subtest per quorum mode, and in it
// one per case. A case's failures are the test's errors.
func RunWith(t *testing.T, alg election.Algorithm, opts Options) {
	opts, err := opts.withDefaults(alg, testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range opts.Quorums {
		t.Run(modeName(q), func(t *testing.T) {
			s := newSuite(alg, q, opts)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					s.progress(c.name, 0)
					run := &caseRun{t: t, res: newCase(c.name, q)}
					defer run.judgeProgramFailures() // after a Fatalf too
					c.play(s, run)
				})
			}
		})
	}
}

// Check runs the suite on alg outside a Go test and reports what held:
// the same cases as RunWith, each recorded instead of failing a test.
// The error is a configuration the suite cannot run (an algorithm not in
// the registry, a quorum mode it does not run in).
func Check(alg election.Algorithm, opts Options) (Report, error) {
	opts, err := opts.withDefaults(alg, false)
	if err != nil {
		return Report{}, fmt.Errorf("conformance: %w", err)
	}
	r := Report{Algorithm: alg.Name, N: opts.N, Schedules: opts.Schedules, Seed: opts.Seed}
	for _, q := range opts.Quorums {
		s := newSuite(alg, q, opts)
		m := Mode{Algorithm: alg.Name, Quorum: q, Explore: s.exploreOptions()}
		for _, c := range cases {
			s.progress(c.name, 0)
			m.Cases = append(m.Cases, recordCase(s, c.name, c.play))
		}
		m.Explored = s.explored
		m.Claims = claimVerdicts(alg, q, m.Cases, s.explored)
		r.Modes = append(r.Modes, m)
	}
	return r, nil
}

// recordCase plays one case with a recorder: its Fatalf and Skipf end the
// case (as testing.T's do) by a panic recovered here.
func recordCase(s *suite, name string, play func(*suite, *caseRun)) Case {
	c := &caseRun{t: recorder{}, res: newCase(name, s.q)}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(endCase); !ok {
					panic(r)
				}
			}
		}()
		play(s, c)
	}()
	c.judgeProgramFailures()
	return *c.res
}

// reporter is the part of testing.TB a case reports to, besides the Case
// it fills: *testing.T in a Go test (its messages are the test's output,
// its Fatalf ends the case), recorder outside one.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
}

// recorder is the reporter of Check: the Case already holds every
// message, so it only ends a case that stops.
type recorder struct{}

// endCase is recorder's panic, recovered by recordCase.
type endCase struct{}

func (recorder) Helper()               {}
func (recorder) Errorf(string, ...any) {}
func (recorder) Logf(string, ...any)   {}
func (recorder) Fatalf(string, ...any) { panic(endCase{}) }
func (recorder) Skipf(string, ...any)  { panic(endCase{}) }
