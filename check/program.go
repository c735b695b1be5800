package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// ProgramEvidence is no-program-failure's evidence: every node whose
// program exited, hung or broke the protocol, in the order it happened.
type ProgramEvidence struct {
	Failures []ProgramFailure `json:"failures"`
}

// ProgramFailure is one program that failed: on which node, when, and
// what happened (the event it was to answer, the line it wrote, its
// stderr's tail), as the node's stop record says.
type ProgramFailure struct {
	Node election.NodeID `json:"node"`
	At   time.Time       `json:"at"`
	// AtMillis is At from the history's start.
	AtMillis float64 `json:"at_ms"`
	Failure  string  `json:"failure"`
}

// checkNoProgramFailure fails when a node's program failed by itself: a
// finding about the program, which nobody injected (a kill leaves no such
// record), whatever the other checkers say of the history around it.
func checkNoProgramFailure(t *Timeline, recs []history.Record, _ Options) Verdict {
	var ev ProgramEvidence
	for i := range recs {
		failure, ok := recs[i].ProgramFailure()
		if !ok {
			continue
		}
		ev.Failures = append(ev.Failures, ProgramFailure{
			Node: recs[i].Node, At: recs[i].Time,
			AtMillis: float64(recs[i].Time.Sub(t.Start)) / float64(time.Millisecond), Failure: failure,
		})
	}
	v := Verdict{Checker: NoProgramFailure, Pass: len(ev.Failures) == 0, Evidence: Evidence{Program: &ev}}
	if v.Pass {
		v.Summary = "no program failed"
		return v
	}
	first := ev.Failures[0]
	// The first line without the stderr's tail, which Detail gives.
	what, _, _ := strings.Cut(first.Failure, "\n")
	what = strings.TrimSuffix(strings.TrimSuffix(what, "; its stderr ended:"), " (its stderr was empty)")
	v.Summary = fmt.Sprintf("%d program failure(s); first: node %d at %s: %s", len(ev.Failures), first.Node, millis.Offset(first.At.Sub(t.Start)), what)
	return v
}

// Detail is what a failed verdict has to say beyond its one-line summary,
// for people reading a run's output: for no-program-failure, the first
// failure whole (the event it was to answer, the line it wrote, the
// program's stderr's tail). Empty for the other checkers, whose summary
// says it all.
func (v Verdict) Detail() string {
	if v.Pass || v.Evidence.Program == nil || len(v.Evidence.Program.Failures) == 0 {
		return ""
	}
	f := v.Evidence.Program.Failures[0]
	return fmt.Sprintf("node %d at %s: %s", f.Node, millis.Offset(time.Duration(f.AtMillis*float64(time.Millisecond))), f.Failure)
}
