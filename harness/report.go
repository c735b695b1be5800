package harness

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/report"
)

// writeReport renders report.html next to results.json. A run whose
// cluster never started has no history to draw and gets no page.
func writeReport(r *Result) error {
	if len(r.records) == 0 {
		return nil
	}
	err := outpath.WriteFile(filepath.Join(r.Dir, "report.html"), func(w io.Writer) error {
		return report.Write(w, reportOf(r))
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// reportOf is the page's input: the run's own analysis (the one
// results.json was written from, so the page replays nothing) and what the
// harness adds to it — steps, expectations, the run's verdict.
func reportOf(r *Result) report.Report {
	rep := report.Report{
		Title:     r.Scenario,
		Scenario:  r.Scenario,
		Backend:   r.Backend,
		Algorithm: r.Algorithm,
		Members:   r.Members,
		Date:      r.Started,
		Seed:      r.Seed,
		Records:   r.records,
		Analysis:  r.analysis,
	}
	// results.json spells the mode as people do; a bad spelling would
	// have been refused when the scenario was read.
	rep.Quorum, _ = election.ParseQuorum(r.Quorum)
	rep.Options = r.Options
	if s := r.System; s != nil {
		// A real server: its name and pinned version head the page,
		// with how it was observed.
		rep.Algorithm = s.Name + " " + s.Version
		note := fmt.Sprintf("real server %s %s (image %s), observed by probing every member every %s ms", s.Name, s.Version, s.Image, fmt.Sprint(s.ProbeIntervalMillis))
		if len(s.Defaults) > 0 {
			note += "; left to the server's defaults: " + strings.Join(s.Defaults, ", ")
		}
		rep.Notes = append(rep.Notes, note)
	}
	for _, e := range r.Engines {
		rep.Notes = append(rep.Notes, fmt.Sprintf("engine %s held nodes %s", e.Engine, chaos.IDList(e.Nodes)))
	}
	if r.Description != "" {
		rep.Notes = append(rep.Notes, r.Description)
	}
	if r.Reps > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("repetition %d of %d", r.Rep, r.Reps))
	}
	for _, f := range r.Failures {
		rep.Notes = append(rep.Notes, "FAILED: "+f)
	}
	for _, c := range r.Checkers {
		rep.Verdicts = append(rep.Verdicts, c.Verdict)
		if c.Expected == "fail" || c.Expected == Measured {
			// Expected, or measured only (a property the system
			// does not claim): not drawn as a fault of the run.
			rep.ExpectedFail = append(rep.ExpectedFail, c.Checker)
		}
	}
	passed := r.Pass
	rep.Passed = &passed
	for _, s := range r.Steps {
		name := s.Text
		if s.Resolved != "" {
			name += " → " + s.Resolved
		}
		rep.Steps = append(rep.Steps, report.Step{Name: name, Time: s.At, Number: s.Index})
		if s.Expect != nil {
			rep.Expectations = append(rep.Expectations, report.Expectation{
				Name: s.Expect.Expect, Time: s.Expect.At, Step: s.Index,
				Pass: s.Expect.Pass, Detail: s.Expect.Seen,
			})
		}
	}
	return rep
}
