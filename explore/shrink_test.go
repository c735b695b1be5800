package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/scenario"
)

// splitBrainSchedule explores plain Bully until it finds split brain.
func splitBrainSchedule(t *testing.T) (Options, Schedule) {
	t.Helper()
	o := Options{Algorithm: "bully", N: 5, Schedules: 40, Seed: 11}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SplitBrain) == 0 {
		t.Fatalf("no split brain in 40 schedules of plain Bully: %+v", res)
	}
	return o, res.SplitBrain[0]
}

func fails(t *testing.T, sc *scenario.Scenario, seed int64, checker check.Name) bool {
	t.Helper()
	verdicts, err := Replay(sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range verdicts {
		if v.Checker == checker {
			return !v.Pass
		}
	}
	t.Fatalf("%s did not run on %s (verdicts %v)", checker, sc.Name, verdicts)
	return false
}

func TestShrunkSplitBrainIsSmallAndFailsOnEverySeedItWasShrunkOn(t *testing.T) {
	o, sc := splitBrainSchedule(t)
	var progress []string
	sh, err := Shrink(o, sc, check.NoSplitBrain, ShrinkOptions{Progress: func(l string) { progress = append(progress, l) }})
	if err != nil {
		t.Fatal(err)
	}
	if sh.FaultSteps > 4 || sh.StepCount >= len(sc.Steps) {
		t.Errorf("shrunk %d steps to %d with %d faults: %v", len(sc.Steps), sh.StepCount, sh.FaultSteps, sh.Steps)
	}
	if len(progress) == 0 || sh.Tried == 0 || sh.Evidence == "" {
		t.Errorf("no progress lines (%v), tries (%d) or evidence (%q)", progress, sh.Tried, sh.Evidence)
	}
	for _, st := range sh.Steps {
		if st.Fault != nil && st.Fault.Target.IsRandom() {
			t.Errorf("step %s still draws its target at random", st)
		}
	}
	full, _ := o.withDefaults()
	saved := Scenario(full, sh)
	for i := 0; i < 3; i++ {
		if !fails(t, saved, ScheduleSeed(sh.Seed, i), check.NoSplitBrain) {
			t.Errorf("the shrunk schedule shows no split brain with seed %d: %v", ScheduleSeed(sh.Seed, i), sh.Steps)
		}
	}
	again, err := Shrink(o, sc, check.NoSplitBrain, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Steps, sh.Steps) {
		t.Errorf("shrinking twice gave\n%v\nand\n%v", sh.Steps, again.Steps)
	}
}

func TestSavedScheduleIsAScenarioThatExpectsItsFailure(t *testing.T) {
	o, sc := splitBrainSchedule(t)
	sh, err := Shrink(o, sc, check.NoSplitBrain, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, err := Save(o, sh, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, FileStem("bully", check.NoSplitBrain, sc.Seed)+".yaml"); path != want {
		t.Errorf("saved as %s, want %s", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# algorithm: bully   n: 5   quorum: none   seed: ", "# commit: ", "# checker: no-split-brain fails: ", "expect_checkers: {no-split-brain: fail}"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q:\n%s", path, want, data)
		}
	}
	back, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Checkers, []check.Name{check.NoSplitBrain}) || back.Expected(check.NoSplitBrain) {
		t.Errorf("checkers %v, expected no-split-brain to %v", back.Checkers, back.Expected(check.NoSplitBrain))
	}
	if !fails(t, back, sc.Seed, check.NoSplitBrain) {
		t.Error("the file read back shows no split brain")
	}
}

func TestAScheduleThatDoesNotFailIsNotShrunk(t *testing.T) {
	o, sc := splitBrainSchedule(t)
	// Nothing but waits: no seed shows split brain.
	calm := sc
	calm.Steps, calm.Resolved = []scenario.Step{scenario.WaitStep(check.DefaultLivenessBound(election.Timing{}))}, nil
	if _, err := Shrink(o, calm, check.NoSplitBrain, ShrinkOptions{}); err == nil || !strings.Contains(err.Error(), "does not fail") {
		t.Fatalf("shrinking a schedule that does not fail: %v", err)
	}
}

// TestStoredSplitBrainSchedulesSplitWithoutQuorumAndNeverWithIt replays
// the split-brain schedules the explorer found and shrank (testdata) as
// regression tests: plain Bully must still split on each, on several
// seeds, and quorum Bully must never, on the same faults.
func TestStoredSplitBrainSchedulesSplitWithoutQuorumAndNeverWithIt(t *testing.T) {
	files, err := filepath.Glob("testdata/bully-no-split-brain-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stored schedules: %v", err)
	}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		quorum := *sc
		quorum.Cluster.Quorum = election.Majority
		quorum.Checkers, quorum.ExpectCheckers = []check.Name{check.NoSplitBrain, check.EpochSafety}, nil
		for seed := int64(1); seed <= 3; seed++ {
			if !fails(t, sc, seed, check.NoSplitBrain) {
				t.Errorf("%s, seed %d: plain Bully no longer splits", f, seed)
			}
			verdicts, err := Replay(&quorum, seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range verdicts {
				if !v.Pass {
					t.Errorf("%s with quorum, seed %d: %s: %s", f, seed, v.Checker, v.Summary)
				}
			}
		}
	}
}

// TestAClaimedCheckerFailureShrinksToAFileThatFailsIt: the shrinker keeps
// whichever checker failed, here agreement, broken by an algorithm without
// failure detection, and the saved scenario runs only that checker.
func TestAClaimedCheckerFailureShrinksToAFileThatFailsIt(t *testing.T) {
	o := Options{Algorithm: "test-floodmax", N: 4, Schedules: 60, Seed: 9}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	shrunk, errs := ShrinkFailures(o, res, 1, ShrinkOptions{})
	if len(errs) > 0 || len(shrunk) != 1 {
		t.Fatalf("shrinking the first failure: %v, %d shrunk", errs, len(shrunk))
	}
	sh := shrunk[0]
	if sh.Checker != res.Failing[0].Failed[0] || sh.StepCount > len(res.Failing[0].Steps) {
		t.Fatalf("shrunk %+v from %v", sh, res.Failing[0].Failed)
	}
	full, _ := o.withDefaults()
	saved := Scenario(full, sh)
	if !slices.Equal(saved.Checkers, []check.Name{sh.Checker}) || saved.Expected(sh.Checker) {
		t.Errorf("saved checkers %v expecting %v", saved.Checkers, saved.ExpectCheckers)
	}
	for seed := int64(20); seed < 23; seed++ {
		if !fails(t, saved, seed, sh.Checker) {
			t.Errorf("seed %d: %s passes on the shrunk schedule %v", seed, sh.Checker, sh.Steps)
		}
	}
}

// The budget is exact: a shrink never plays more candidates than it
// allows, the final widening of the waits included.
func TestShrinkBudgetIsNeverExceeded(t *testing.T) {
	o, sc := splitBrainSchedule(t)
	for _, budget := range []int{1, 2, 3, 7} {
		sh, err := Shrink(o, sc, check.NoSplitBrain, ShrinkOptions{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if sh.Tried > budget || !sh.Exhausted {
			t.Errorf("budget %d: tried %d, exhausted %v", budget, sh.Tried, sh.Exhausted)
		}
	}
}

// TestASavedFileIsNamedWithinTheScenarioNameRules: whatever a program's
// name (long, upper case, underscores), the stem a saved schedule gets is
// a valid scenario name, and two long names that differ only past the
// cut still get different stems.
func TestASavedFileIsNamedWithinTheScenarioNameRules(t *testing.T) {
	seed := int64(4097618618563484380)
	stems := map[string]bool{}
	for _, alg := range []string{
		"bully",
		"program-buggy-splitbrain-majority",
		"program-" + strings.Repeat("very-long-election-", 5) + "a-majority",
		"program-" + strings.Repeat("very-long-election-", 5) + "b-majority",
		"program-My_Election.v2-majority",
	} {
		stem := FileStem(alg, check.NoSplitBrain, seed)
		doc := fmt.Sprintf("name: %s\ncluster: {algorithm: bully, nodes: 3}\nsteps: [heal]\n", stem)
		if _, err := scenario.Parse(stem+".yaml", []byte(doc)); err != nil {
			t.Errorf("%s: stem %q is not a scenario name: %v", alg, stem, err)
		}
		if !strings.HasSuffix(stem, fmt.Sprintf("-no-split-brain-%d", seed)) {
			t.Errorf("%s: stem %q lost its checker or seed", alg, stem)
		}
		if stems[stem] {
			t.Errorf("%s: stem %q given to two algorithms", alg, stem)
		}
		stems[stem] = true
	}
	if got := FileStem("bully", check.Agreement, 7); got != "bully-agreement-7" {
		t.Errorf("a short name is kept as it is: got %q", got)
	}
}

// TestShrinkAndSaveGivesEveryJobItsOutcome: the one shrink-and-save loop
// saves each job that shrinks as a scenario file and says why of each
// that does not, without stopping at it.
func TestShrinkAndSaveGivesEveryJobItsOutcome(t *testing.T) {
	o, sc := splitBrainSchedule(t)
	calm := sc
	calm.Steps, calm.Resolved = []scenario.Step{scenario.WaitStep(check.DefaultLivenessBound(election.Timing{}))}, nil
	dir := t.TempDir()
	got := ShrinkAndSave(o, []Job{{calm, check.NoSplitBrain}, {sc, check.NoSplitBrain}}, ShrinkOptions{}, dir)
	if len(got) != 2 {
		t.Fatalf("%d outcomes for 2 jobs", len(got))
	}
	if got[0].Err == nil || !strings.Contains(got[0].Err.Error(), "does not fail") {
		t.Errorf("the calm schedule: %v, want it not shrunk, saying why", got[0].Err)
	}
	if got[1].Err != nil || filepath.Dir(got[1].Shrunk.File) != dir {
		t.Fatalf("the split-brain schedule: %v, saved as %q; want it shrunk and saved in %s", got[1].Err, got[1].Shrunk.File, dir)
	}
	if _, err := scenario.Load(got[1].Shrunk.File); err != nil {
		t.Errorf("the saved file does not load: %v", err)
	}
}
