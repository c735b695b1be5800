package harness

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/report"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/system"
)

// A stored run is a directory holding results.json (what was run: the
// cluster, the checkers and the verdicts expected of them) and
// history.jsonl (what happened). Rejudge reads both and judges the history
// again with the code a run judges with (judgeInto).

// Stored names the files of a stored run.
type Stored struct {
	Dir, Results, History string
}

// FindStored resolves path, a run directory or the history.jsonl in one,
// to the run's files. The error says which is missing.
func FindStored(path string) (Stored, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Stored{}, fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	dir := path
	if !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	st := Stored{Dir: dir, Results: filepath.Join(dir, "results.json"), History: filepath.Join(dir, "history.jsonl")}
	if !fi.IsDir() {
		st.History = path
	}
	for _, f := range []string{st.History, st.Results} {
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			return st, fmt.Errorf("%s: no %s there; a stored run is a directory with results.json (the cluster and the verdicts expected) and history.jsonl", dir, filepath.Base(f))
		}
	}
	return st, nil
}

// Rejudged is a stored run judged again.
type Rejudged struct {
	// Stored is results.json as it was; Result the run judged again
	// (Dir, steps and expectations as stored: an expectation was judged
	// on the live cluster and is not judged again).
	Stored, Result *Result
	// Notes say where the judgement could not be the run's own (a run
	// recorded before checkpoints were marked in its history).
	Notes []string
}

// Rejudge reads a stored run and judges its history again.
func Rejudge(st Stored) (*Rejudged, error) {
	stored, err := ReadResult(st.Results)
	if err != nil {
		return nil, err
	}
	recs, err := history.ReadFile(st.History)
	if err != nil {
		return nil, err
	}
	sc, alg, err := scenarioOf(stored)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Results, err)
	}
	again, err := ReadResult(st.Results) // a copy to fill, keeping steps and expectations
	if err != nil {
		return nil, err
	}
	again.records = recs
	again.Dir = st.Dir // where it is now, wherever it was written from
	checkpoints := checkpointsOf(recs)
	out := &Rejudged{Stored: stored, Result: again}
	if len(checkpoints) != stored.Checkpoints {
		out.Notes = append(out.Notes, fmt.Sprintf("the history marks %d checkpoints where results.json counts %d (a run recorded before checkpoints were marked): agreement and bully-max are judged at %s",
			len(checkpoints), stored.Checkpoints, checkpointsText(len(checkpoints))))
	}
	judgeInto(again, sc, alg, recs, checkpoints)
	again.Judge()
	return out, nil
}

func checkpointsText(n int) string {
	if n == 0 {
		return "the end of the history"
	}
	return "the marked ones"
}

// scenarioOf rebuilds, from a stored run's results.json, what judging
// needs of its scenario: the cluster, the checkers that ran and the
// verdicts expected of them, the liveness bound.
func scenarioOf(r *Result) (*scenario.Scenario, election.Algorithm, error) {
	q, err := election.ParseQuorum(r.Quorum)
	if err != nil {
		return nil, election.Algorithm{}, err
	}
	name := r.Algorithm
	if len(r.Program) > 0 {
		// A program is an algorithm only once registered, in this
		// process too: its claims and message classes come from it.
		if name, err = program.Register(r.Program, q, r.Members, election.Timing{}, program.Options{}); err != nil {
			return nil, election.Algorithm{}, err
		}
	}
	var sys *system.System
	if r.System != nil {
		file := r.System.Name
		if r.System.File != "" {
			file = r.System.File
		}
		if sys, err = system.Lookup(file, ""); err != nil {
			return nil, election.Algorithm{}, err
		}
	}
	var alg election.Algorithm
	if sys != nil {
		alg = sys.Algorithm()
	} else if alg, err = election.Lookup(name); err != nil {
		return nil, election.Algorithm{}, err
	}
	if len(r.Members) == 0 {
		return nil, election.Algorithm{}, fmt.Errorf("members: none recorded")
	}
	sc := &scenario.Scenario{
		Name: r.Scenario, File: r.File,
		Cluster: scenario.Cluster{Algorithm: alg.Name, Program: slices.Clone(r.Program), IDs: slices.Clone(r.Members), Quorum: q, Timing: election.Timing{
			Heartbeat: fromMillis(r.Timing.HeartbeatMillis), Suspicion: fromMillis(r.Timing.SuspicionMillis), Answer: fromMillis(r.Timing.AnswerMillis),
		}},
		LivenessBound:  fromMillis(r.LivenessBoundMillis),
		ExpectCheckers: map[check.Name]bool{},
		Checkers:       []check.Name{},
	}
	sc.Cluster.System = sys
	for _, c := range r.Checkers {
		sc.Checkers = append(sc.Checkers, c.Checker)
		if c.Expected == "fail" {
			sc.ExpectCheckers[c.Checker] = false
		}
	}
	if len(sc.Checkers) == 0 {
		sc.Checkers = nil // none ran: judge what the algorithm claims
	}
	return sc, alg, nil
}

func fromMillis(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// checkpointsOf are the checkpoint marks of a history (CheckpointMark).
func checkpointsOf(recs []history.Record) []time.Time {
	var out []time.Time
	for _, r := range recs {
		if r.Kind == history.KindMark && r.Process == HarnessProcess && r.Note == CheckpointMark {
			out = append(out, r.Time)
		}
	}
	return out
}

// WriteReport renders r's report page to path (outpath.WriteFile: never
// over anything but a regular file).
func (r *Result) WriteReport(path string) error {
	if len(r.records) == 0 {
		return fmt.Errorf("report: %s: the run has no history to draw", r.Dir)
	}
	if r.analysis == nil {
		return fmt.Errorf("report: %s: the run was not judged", r.Dir)
	}
	err := outpath.WriteFile(path, func(w io.Writer) error { return report.Write(w, reportOf(r)) })
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
