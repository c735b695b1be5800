package check

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/history"
)

// Evidence is what a checker saw, typed: exactly one field is set, the one
// of the checker's kind. In JSON it is that field's object alone.
type Evidence struct {
	Stable     *StableEvidence     // agreement, bully-max
	SplitBrain *SplitBrainEvidence // no-split-brain
	Epochs     *EpochEvidence      // epoch-safety
	Liveness   *LivenessEvidence   // liveness
	Complexity *ComplexityEvidence // message-complexity
	Program    *ProgramEvidence    // no-program-failure
}

// IsZero reports whether no evidence is set.
func (e Evidence) IsZero() bool { return e.value() == nil }

func (e Evidence) value() any {
	switch {
	case e.Stable != nil:
		return e.Stable
	case e.SplitBrain != nil:
		return e.SplitBrain
	case e.Epochs != nil:
		return e.Epochs
	case e.Liveness != nil:
		return e.Liveness
	case e.Complexity != nil:
		return e.Complexity
	case e.Program != nil:
		return e.Program
	}
	return nil
}

// MarshalJSON writes the one evidence that is set.
func (e Evidence) MarshalJSON() ([]byte, error) { return json.Marshal(e.value()) }

// UnmarshalJSON reads a verdict back (results.json), its evidence into the
// type its checker gives.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var j struct {
		Checker  Name            `json:"checker"`
		Pass     bool            `json:"pass"`
		Summary  string          `json:"summary"`
		Evidence json.RawMessage `json:"evidence"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = Verdict{Checker: j.Checker, Pass: j.Pass, Summary: j.Summary}
	if len(j.Evidence) == 0 || string(j.Evidence) == "null" {
		return nil
	}
	var dst any
	switch j.Checker {
	case Agreement, BullyMax:
		v.Evidence.Stable = &StableEvidence{}
		dst = v.Evidence.Stable
	case NoSplitBrain:
		v.Evidence.SplitBrain = &SplitBrainEvidence{}
		dst = v.Evidence.SplitBrain
	case EpochSafety:
		v.Evidence.Epochs = &EpochEvidence{}
		dst = v.Evidence.Epochs
	case Liveness:
		v.Evidence.Liveness = &LivenessEvidence{}
		dst = v.Evidence.Liveness
	case MessageComplexity:
		v.Evidence.Complexity = &ComplexityEvidence{}
		dst = v.Evidence.Complexity
	case NoProgramFailure:
		v.Evidence.Program = &ProgramEvidence{}
		dst = v.Evidence.Program
	default:
		return nil // an unknown checker's verdict carries none
	}
	if err := json.Unmarshal(j.Evidence, dst); err != nil {
		return fmt.Errorf("verdict %s: evidence: %w", j.Checker, err)
	}
	return nil
}

// Analysis is everything one history says, from one replay of it: the
// timeline, the verdicts of the checkers asked for, the failovers, the
// message counts, the elections and the split-brain figures. A run's
// results.json and its report are both made from it, so they cannot tell
// two stories.
type Analysis struct {
	// Timeline is the history replayed; Records the history in time
	// order with its faults dated by the nodes' acts (DateFaults).
	Timeline *Timeline
	Records  []history.Record
	Verdicts []Verdict
	// Checkpoints are the instants agreement and bully-max judge.
	Checkpoints []time.Time
	Failovers   []Failover
	// Returns are the resumes, restarts and heals, each with the time the
	// cluster took to settle again (ReturnsOf).
	Returns   []Failover
	Counts    Counts
	Elections []Election
	// SplitBrain is no-split-brain's evidence, measured on every run,
	// claimed or not: the overlap is the figure that shows split brain
	// appear without a quorum and vanish with one.
	SplitBrain SplitBrainEvidence
	// Leadership is how often leadership moved and the highest epoch.
	Leadership Leadership
}

// Analyze replays recs once and computes the Analysis, running the named
// checkers (none: no verdicts).
func Analyze(recs []history.Record, opts Options, names ...Name) *Analysis {
	sorted := DateFaults(recs)
	t := newTimelineSorted(sorted, opts.Members)
	opts.Members = t.Members
	a := &Analysis{Timeline: t, Records: sorted, Checkpoints: checkpoints(t, opts)}
	a.Verdicts = runOn(t, sorted, opts, names)
	sb, ran := a.Verdict(NoSplitBrain)
	if !ran || sb.Evidence.SplitBrain == nil {
		sb = checkNoSplitBrain(t, sorted, opts)
	}
	a.SplitBrain = *sb.Evidence.SplitBrain
	a.Failovers = FailoversOf(t, opts.Quorum)
	a.Returns = ReturnsOf(t, opts)
	a.Leadership = LeadershipOf(sorted)
	// message-complexity, when it ran, has counted and segmented already.
	if mc, ran := a.Verdict(MessageComplexity); ran && mc.Evidence.Complexity != nil {
		a.Counts, a.Elections = mc.Evidence.Complexity.Counts, mc.Evidence.Complexity.Elections
	} else {
		a.Counts = CountMessages(sorted, opts.Algorithm, t.Members)
		a.Elections = Elections(t, sorted, opts.Algorithm, opts.Quorum)
	}
	return a
}

// Verdict returns the verdict of checker name, if it ran.
func (a *Analysis) Verdict(name Name) (Verdict, bool) {
	for _, v := range a.Verdicts {
		if v.Checker == name {
			return v, true
		}
	}
	return Verdict{}, false
}
