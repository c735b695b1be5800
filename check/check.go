// Package check judges a recorded history against the guarantees an
// election algorithm claims. Every checker reads only []history.Record: it
// replays the history into a Timeline (views, liveness and cut links over
// time) and returns a Verdict whose Evidence says which nodes, which instants
// and how long, so that a failure can be read without the raw history.
//
// The definitions and their edge cases (paused leaders, partitions that are
// not transitive, checkpoints) are written down in docs/checkers.md.
package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// Name names a checker, as scenarios, results and the explorer write it.
type Name string

// The checkers.
const (
	Agreement         Name = "agreement"
	BullyMax          Name = "bully-max"
	NoSplitBrain      Name = "no-split-brain"
	EpochSafety       Name = "epoch-safety"
	Liveness          Name = "liveness"
	MessageComplexity Name = "message-complexity"
	// NoProgramFailure: no node's program exited, hung or broke the
	// protocol. Judged on every run of a program (election.Algorithm's
	// External), whatever else is named.
	NoProgramFailure Name = "no-program-failure"
)

// Names lists every checker in the order Run reports them.
var Names = []Name{Agreement, BullyMax, NoSplitBrain, EpochSafety, Liveness, MessageComplexity, NoProgramFailure}

// ParseName reads a checker's name, or says which names there are.
func ParseName(s string) (Name, error) {
	if slices.Contains(Names, Name(s)) {
		return Name(s), nil
	}
	return "", fmt.Errorf("unknown checker %q (valid: %s)", s, NamesText())
}

// NamesText lists the checkers' names, comma-separated.
func NamesText() string {
	parts := make([]string, len(Names))
	for i, n := range Names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

// Verdict is one checker's judgement of one history.
type Verdict struct {
	Checker  Name     `json:"checker"`
	Pass     bool     `json:"pass"`
	Summary  string   `json:"summary"`           // one human line
	Evidence Evidence `json:"evidence,omitzero"` // which nodes, which times, overlaps and their lengths, counts
}

// Options says what the history is of and what to expect.
type Options struct {
	Algorithm election.Algorithm
	Quorum    election.QuorumMode
	// Members is the configured membership in ring order. Empty: the
	// node IDs the history mentions, sorted.
	Members []election.NodeID
	Timing  election.Timing
	// Checkpoints are instants at which the cluster is expected stable
	// (the end of each quiet period); agreement and bully-max are judged
	// there. Empty: the history's final state, after its last record.
	Checkpoints []time.Time
	// LivenessBound: liveness wants a leader agreed by every live node
	// within this after the last fault. Zero: DefaultLivenessBound.
	LivenessBound time.Duration
}

// DefaultLivenessBound is used when Options.LivenessBound is zero: ten
// suspicion timeouts, enough for a few election rounds on any backend.
func DefaultLivenessBound(t election.Timing) time.Duration {
	return 10 * t.WithDefaults().Suspicion
}

// Checker judges one history.
type Checker func(t *Timeline, recs []history.Record, opts Options) Verdict

var checkers = map[Name]Checker{
	Agreement:         checkAgreement,
	BullyMax:          checkBullyMax,
	NoSplitBrain:      checkNoSplitBrain,
	EpochSafety:       checkEpochSafety,
	Liveness:          checkLiveness,
	MessageComplexity: checkMessageComplexity,
	NoProgramFailure:  checkNoProgramFailure,
}

// Claimed returns the checkers Run uses when given no names: the ones whose
// properties the algorithm claims in the quorum mode, plus
// message-complexity when the algorithm has a formula, plus Always.
func Claimed(a election.Algorithm, q election.QuorumMode) []Name {
	var out []Name
	if a.Claims != nil {
		claims := a.Claims(q)
		for _, n := range Names {
			if slices.Contains(claims, election.Property(n)) {
				out = append(out, n)
			}
		}
	}
	if a.Formula != nil {
		out = append(out, MessageComplexity)
	}
	return append(out, Always(a)...)
}

// Always are the checkers a history of a is judged by whatever a scenario
// or a claim names: no-program-failure for a program (External), whose
// failures are findings about it, not faults anyone injected.
func Always(a election.Algorithm) []Name {
	if a.External {
		return []Name{NoProgramFailure}
	}
	return nil
}

// Run replays recs once and runs the named checkers (no names: Claimed).
// An unknown name yields a failing Verdict that lists the known ones, so a
// typo in a scenario fails the run visibly instead of checking nothing.
func Run(recs []history.Record, opts Options, names ...Name) []Verdict {
	if len(names) == 0 {
		names = Claimed(opts.Algorithm, opts.Quorum)
	}
	sorted := dateFaults(recs, false) // only read: no copy of an ordered history
	t := newTimelineSorted(sorted, opts.Members)
	opts.Members = t.Members
	return runOn(t, sorted, opts, names)
}

// runOn runs the named checkers on a replayed history.
func runOn(t *Timeline, sorted []history.Record, opts Options, names []Name) []Verdict {
	out := make([]Verdict, 0, len(names))
	for _, n := range names {
		c, ok := checkers[n]
		if !ok {
			out = append(out, Verdict{
				Checker: n,
				Summary: fmt.Sprintf("unknown checker %q (known: %s)", n, NamesText()),
			})
			continue
		}
		v := c(t, sorted, opts)
		v.Checker = n
		out = append(out, v)
	}
	return out
}

// Check runs one checker; it is Run for a single name.
func Check(recs []history.Record, opts Options, name Name) Verdict {
	return Run(recs, opts, name)[0]
}

// majority is the smallest majority of the membership.
func majority(members []election.NodeID) int { return len(members)/2 + 1 }

// checkpoints returns opts.Checkpoints or the timeline's end.
func checkpoints(t *Timeline, opts Options) []time.Time {
	if len(opts.Checkpoints) > 0 {
		return opts.Checkpoints
	}
	return []time.Time{t.End}
}

// ms is a duration in milliseconds, for evidence meant to be read.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rel is an instant as an offset from the timeline's start.
func rel(t *Timeline, ts time.Time) string { return millis.Offset(ts.Sub(t.Start)) }
