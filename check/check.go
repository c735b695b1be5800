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
)

// Checker names, as used in scenarios and in Verdict.Checker.
const (
	Agreement         = "agreement"
	BullyMax          = "bully-max"
	NoSplitBrain      = "no-split-brain"
	EpochSafety       = "epoch-safety"
	Liveness          = "liveness"
	MessageComplexity = "message-complexity"
)

// Names lists every checker in the order Run reports them.
var Names = []string{Agreement, BullyMax, NoSplitBrain, EpochSafety, Liveness, MessageComplexity}

// Verdict is one checker's judgement of one history.
type Verdict struct {
	Checker  string `json:"checker"`
	Pass     bool   `json:"pass"`
	Summary  string `json:"summary"`            // one human line
	Evidence any    `json:"evidence,omitempty"` // which nodes, which times, overlaps and their lengths, counts
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

var checkers = map[string]Checker{
	Agreement:         checkAgreement,
	BullyMax:          checkBullyMax,
	NoSplitBrain:      checkNoSplitBrain,
	EpochSafety:       checkEpochSafety,
	Liveness:          checkLiveness,
	MessageComplexity: checkMessageComplexity,
}

// Claimed returns the checkers Run uses when given no names: the ones whose
// properties the algorithm claims in the quorum mode, plus
// message-complexity when the algorithm has a formula.
func Claimed(a election.Algorithm, q election.QuorumMode) []string {
	var out []string
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
	return out
}

// Run replays recs once and runs the named checkers (no names: Claimed).
// An unknown name yields a failing Verdict that lists the known ones, so a
// typo in a scenario fails the run visibly instead of checking nothing.
func Run(recs []history.Record, opts Options, names ...string) []Verdict {
	if len(names) == 0 {
		names = Claimed(opts.Algorithm, opts.Quorum)
	}
	sorted := Settled(recs)
	t := newTimelineSorted(sorted, opts.Members)
	opts.Members = t.Members
	out := make([]Verdict, 0, len(names))
	for _, n := range names {
		c, ok := checkers[n]
		if !ok {
			out = append(out, Verdict{
				Checker: n,
				Summary: fmt.Sprintf("unknown checker %q (known: %s)", n, strings.Join(Names, ", ")),
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
func Check(recs []history.Record, opts Options, name string) Verdict {
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
func rel(t *Timeline, ts time.Time) string { return ts.Sub(t.Start).String() }
