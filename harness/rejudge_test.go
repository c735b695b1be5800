package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/sim"
)

// Judging a stored run again gives what the run wrote in results.json:
// every verdict with its evidence, the failovers, returns, overlaps,
// message counts, elections and the run's verdict — for every shipped
// scenario, passing or expected to fail, from the run directory or from
// its history.jsonl.
func TestRejudgingAStoredRunGivesItsVerdictsAgain(t *testing.T) {
	for _, sc := range simulated(t) {
		t.Run(sc.Name, func(t *testing.T) {
			res, err := harness.Run(context.Background(), sc, &sim.Backend{}, harness.Options{Store: t.TempDir(), Seed: 7, Progress: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{res.Dir, filepath.Join(res.Dir, "history.jsonl")} {
				st, err := harness.FindStored(path)
				if err != nil {
					t.Fatal(err)
				}
				again, err := harness.Rejudge(st)
				if err != nil {
					t.Fatal(err)
				}
				if len(again.Notes) > 0 {
					t.Errorf("notes on a run recorded now: %v", again.Notes)
				}
				stored, judged := again.Stored, again.Result
				for what, pair := range map[string][2]any{
					"checkers": {stored.Checkers, judged.Checkers}, "failovers": {stored.Failovers, judged.Failovers},
					"returns": {stored.Returns, judged.Returns}, "split brain": {stored.SplitBrain, judged.SplitBrain},
					"messages": {stored.Messages, judged.Messages}, "elections": {stored.Elections, judged.Elections},
					"pass": {stored.Pass, judged.Pass}, "failures": {stored.Failures, judged.Failures},
					"checkpoints": {stored.Checkpoints, judged.Checkpoints},
				} {
					a, _ := json.Marshal(pair[0])
					b, _ := json.Marshal(pair[1])
					if string(a) != string(b) {
						t.Errorf("%s: %s judged again differs:\nstored: %s\nagain:  %s", path, what, a, b)
					}
				}
				if len(judged.Checkers) == 0 {
					t.Errorf("no checker ran")
				}
			}
		})
	}
}

func TestFindStoredSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := harness.FindStored(dir); err == nil || !strings.Contains(err.Error(), "no history.jsonl there") {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "history.jsonl"), nil, 0o644)
	if _, err := harness.FindStored(filepath.Join(dir, "history.jsonl")); err == nil || !strings.Contains(err.Error(), "no results.json there") {
		t.Errorf("history alone: %v", err)
	}
	if _, err := harness.FindStored(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing path: %v", err)
	}
}
