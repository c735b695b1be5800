package explore

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/bully"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden-summary.json from this build")

// goldenSummary is what an exploration found, in full: the counts the
// summary prints, and a digest of every schedule's faults, flags, failing
// verdicts (evidence and all) and simulated time, so that a change meant
// only to make the explorer faster cannot quietly change what it finds.
type goldenSummary struct {
	Failures               map[string]int `json:"failures"`
	FailedSchedules        int            `json:"failed_schedules"`
	SplitBrainSchedules    int            `json:"split_brain_schedules"`
	EpochConflictSchedules int            `json:"epoch_conflict_schedules"`
	StaleLeaderSchedules   int            `json:"stale_leader_schedules"`
	SimulatedSeconds       string         `json:"simulated_seconds"`
	Digest                 string         `json:"digest"`
}

func summarize(t *testing.T, o Options) goldenSummary {
	t.Helper()
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	o, _ = o.withDefaults()
	h := sha256.New()
	// Every schedule whole, as One plays it on a session of its own: the
	// digest also holds a session reused across schedules (runAll) to
	// finding what a fresh one finds.
	for i := range o.Schedules {
		sc, err := One(o, ScheduleSeed(o.Seed, i), nil)
		if err != nil {
			t.Fatal(err)
		}
		sc.Index = i
		// What the schedule is and found, not how its replay command
		// is spelt (TestExplorationRecordsAndReplaysItsOptions holds that).
		sc.Replay = ""
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", b, sc.Simulated)
	}
	g := goldenSummary{
		Failures:               map[string]int{},
		FailedSchedules:        res.FailedSchedules,
		SplitBrainSchedules:    res.SplitBrainSchedules,
		EpochConflictSchedules: res.EpochConflictSchedules,
		StaleLeaderSchedules:   res.StaleLeaderSchedules,
		SimulatedSeconds:       fmt.Sprintf("%.9f", res.SimulatedSeconds),
		Digest:                 fmt.Sprintf("%x", h.Sum(nil)),
	}
	for k, v := range res.Failures {
		g.Failures[string(k)] = v
	}
	return g
}

// TestExplorationFindsWhatItFoundBefore: 500 schedules of seed 1 on
// 5-node Bully, plain and in majority mode, give exactly the counts and
// schedules recorded in testdata/golden-summary.json (go test -update
// rewrites it, for a change meant to alter what the explorer does).
func TestExplorationFindsWhatItFoundBefore(t *testing.T) {
	got := map[string]goldenSummary{
		"bully":          summarize(t, Options{Algorithm: "bully", N: 5, Schedules: 500, Seed: 1}),
		"bully-majority": summarize(t, Options{Algorithm: "bully", N: 5, Schedules: 500, Seed: 1, Quorum: election.Majority}),
	}
	path := filepath.Join("testdata", "golden-summary.json")
	if *updateGolden {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]goldenSummary
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		g := got[name]
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s: 500 schedules of seed 1 gave\n%s\nwant (%s)\n%s", name, gb, path, wb)
		}
	}
}
