package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/scenario"
)

func mustParse(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const crash = `name: crash
cluster: {algorithm: fake-bully, nodes: 5}
steps:
  - wait: stable
  - expect: {leader: 5}
  - kill: leader
  - expect: {leader: 4, within: 2s}
  - restart: down
  - wait: stable
  - expect: {leader: 5, on: all}
`

func TestRunLeaderCrashPassesAndRecordsEverything(t *testing.T) {
	store := t.TempDir()
	b := newFake()
	var progress bytes.Buffer
	res, err := Run(context.Background(), mustParse(t, crash), b, Options{Store: store, Seed: 7, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("run failed: %v", res.Failures)
	}
	if b.closes != 1 {
		t.Errorf("backend closed %d times, want 1", b.closes)
	}
	if p, n := res.ExpectationsPassed(); p != 5 || n != 5 {
		t.Errorf("expectations: %d/%d passed, want 5/5", p, n)
	}
	if res.Steps[2].Resolved != "node 5" {
		t.Errorf("kill leader resolved to %q, want node 5", res.Steps[2].Resolved)
	}
	if len(res.Failovers) != 1 || !res.Failovers[0].Recovered || res.Failovers[0].Leader != 5 {
		t.Fatalf("failovers: %+v", res.Failovers)
	}
	// Virtual time: the fake elects exactly electionTime after a fault.
	if got := res.Failovers[0].Millis; got != 700 {
		t.Errorf("failover %v ms, want 700", got)
	}
	if got := res.Failovers[0].Suspicions; got != 700.0/500 {
		t.Errorf("failover %v × suspicion, want 1.4", got)
	}
	if res.SplitBrain.Overlaps != 0 {
		t.Errorf("overlaps without any partition: %+v", res.SplitBrain)
	}
	for _, c := range res.Checkers {
		if !c.Pass {
			t.Errorf("checker %s failed: %s", c.Checker, c.Summary)
		}
	}

	// The store: results.json and history.jsonl in store/crash/<stamp>/,
	// and latest-fake pointing there; latest is the container runs' only.
	if filepath.Dir(res.Dir) != filepath.Join(store, "crash") {
		t.Errorf("run dir %s not under %s/crash", res.Dir, store)
	}
	if l, err := os.Readlink(filepath.Join(store, "crash", "latest-fake")); err != nil || l != filepath.Base(res.Dir) {
		t.Errorf("latest-fake -> %q (%v), want %s", l, err, filepath.Base(res.Dir))
	}
	if _, err := os.Lstat(filepath.Join(store, "crash", "latest")); err == nil {
		t.Error("a run on the fake backend made latest, which follows the docker runs")
	}
	back, err := ReadResult(filepath.Join(res.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Pass || back.Seed != 7 || back.Backend != "fake" || len(back.Steps) != 7 || len(back.Checkers) != len(res.Checkers) {
		t.Errorf("results.json lost something: pass=%v seed=%d backend=%s steps=%d", back.Pass, back.Seed, back.Backend, len(back.Steps))
	}
	if page, err := os.ReadFile(filepath.Join(res.Dir, "report.html")); err != nil || !strings.Contains(string(page), "kill leader") {
		t.Errorf("report.html missing or without the steps (%v)", err)
	}
	recs, err := history.ReadFile(filepath.Join(res.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	var kill *history.Fault
	for _, r := range recs {
		if r.Kind == history.KindMark {
			marks = append(marks, r.Note)
		}
		if r.Kind == history.KindFault && r.Fault.Op == "kill" && r.Fault.Phase == history.FaultOK {
			kill = r.Fault
		}
	}
	if !slices.Contains(marks, "step 3/7: kill leader") {
		t.Errorf("no mark for the kill step; marks: %q", marks)
	}
	if kill == nil || kill.Target != "leader" || !slices.Equal(kill.Nodes, []election.NodeID{5}) {
		t.Errorf("kill record: %+v, want target leader, nodes [5]", kill)
	}
	if !strings.Contains(progress.String(), "[crash 1/1] step 3/7 kill leader → node 5 ... ok") {
		t.Errorf("progress lacks the kill line:\n%s", progress.String())
	}
}

func TestLatestFollowsEachBackendAndLatestTheContainers(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	docker, err := newRunDir(root, "crash", "docker", t0)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := newRunDir(root, "crash", "sim", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for link, want := range map[string]string{"latest": docker, "latest-docker": docker, "latest-sim": sim} {
		if l, err := os.Readlink(filepath.Join(root, "crash", link)); err != nil || l != filepath.Base(want) {
			t.Errorf("%s -> %q (%v), want %s", link, l, err, filepath.Base(want))
		}
	}
}

func TestRunFailedExpectationFailsTheRunButFinishesIt(t *testing.T) {
	src := strings.Replace(crash, "{leader: 4, within: 2s}", "{leader: 3, within: 2s}", 1)
	res, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass {
		t.Fatal("run passed although node 4, not 3, took over")
	}
	if len(res.Steps) != 7 {
		t.Errorf("ran %d steps, want all 7", len(res.Steps))
	}
	if len(res.Failures) != 1 || !strings.Contains(res.Failures[0], "step 4 (line 7) expect leader 3") || !strings.Contains(res.Failures[0], "1→4") {
		t.Errorf("failures: %q", res.Failures)
	}
}

const splitBrain = `name: split
cluster: {algorithm: fake-bully, nodes: 5}
steps:
  - wait: stable
  - partition: {groups: [[1,2,3],[4,5]]}
  - expect: {leaders: [3, 5], within: 2s}
  - heal
  - wait: stable
  - expect: {leader: 5}
checkers: [agreement]
`

func TestRunCheckerExpectedToFailMakesSplitBrainAPass(t *testing.T) {
	shown, err := Run(context.Background(), mustParse(t, splitBrain+"expect_checkers: {no-split-brain: fail}\n"), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !shown.Pass {
		t.Fatalf("split brain expected and shown, yet the run failed: %v", shown.Failures)
	}
	nsb, ok := shown.Checker("no-split-brain")
	if !ok || nsb.Pass || nsb.Expected != "fail" || !nsb.Match {
		t.Errorf("no-split-brain: %+v", nsb)
	}
	if shown.SplitBrain.Overlaps == 0 || shown.SplitBrain.TotalMillis <= 0 {
		t.Errorf("no overlap measured: %+v", shown.SplitBrain)
	}

	src := strings.Replace(splitBrain, "checkers: [agreement]", "checkers: [agreement, no-split-brain]", 1)
	unexpected, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if unexpected.Pass || len(unexpected.Failures) != 1 || !strings.Contains(unexpected.Failures[0], "checker no-split-brain: expected pass, got fail") {
		t.Errorf("split brain not expected, yet: pass=%v failures=%q", unexpected.Pass, unexpected.Failures)
	}
}

func TestRunQuorumMinorityHasNoLeaderAndNoOverlap(t *testing.T) {
	src := `name: quorum
cluster: {algorithm: fake-bully, nodes: 5, quorum: majority}
steps:
  - wait: stable
  - partition: {shape: halves}
  - wait: stable
  - expect: {leader: 3, on: [1, 2, 3]}
  - expect: {leader: none, on: [4, 5]}
  - heal
  - wait: stable
  - expect: {leader: 5}
checkers: [no-split-brain]
`
	res, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("failures: %v", res.Failures)
	}
	if res.SplitBrain.Overlaps != 0 {
		t.Errorf("quorum run overlapped: %+v", res.SplitBrain)
	}
}

func TestRunCancelledMidRunClosesBackendAndKeepsHistory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := newFake()
	// SIGINT arrives while the kill is being applied.
	b.onApply = func(f chaos.Fault) {
		if f.Op == chaos.Kill {
			cancel()
		}
	}
	res, err := Run(ctx, mustParse(t, crash), b, Options{Store: t.TempDir()})
	if err == nil || !IsInterrupted(err) {
		t.Fatalf("want an interruption error, got %v", err)
	}
	if b.closes != 1 {
		t.Errorf("backend closed %d times, want 1", b.closes)
	}
	recs, rerr := history.ReadFile(filepath.Join(res.Dir, "history.jsonl"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	boots := 0
	for _, r := range recs {
		if r.Kind == history.KindBoot {
			boots++
		}
	}
	if boots != 5 {
		t.Errorf("history kept %d boots, want 5", boots)
	}
	back, rerr := ReadResult(filepath.Join(res.Dir, "results.json"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if back.Pass || len(back.Errors) == 0 {
		t.Errorf("interrupted run recorded as pass=%v errors=%q", back.Pass, back.Errors)
	}
}

func TestRunStartFailureStillClosesTheBackend(t *testing.T) {
	b := newFake()
	b.startErr = context.DeadlineExceeded
	res, err := Run(context.Background(), mustParse(t, crash), b, Options{Store: t.TempDir()})
	if err == nil {
		t.Fatal("no error although the cluster never started")
	}
	if b.closes != 1 {
		t.Errorf("backend closed %d times, want 1", b.closes)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "results.json")); err != nil {
		t.Errorf("no results.json after a failed start: %v", err)
	}
}

func TestRunUnresolvableTargetStopsTheRun(t *testing.T) {
	src := `name: nothing-down
cluster: {algorithm: fake-bully, nodes: 3}
steps:
  - wait: stable
  - restart: down
  - wait: 1s
`
	res, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "none is down") {
		t.Fatalf("want a 'none is down' error, got %v", err)
	}
	if len(res.Steps) != 2 || res.Pass {
		t.Errorf("steps run: %d, pass %v", len(res.Steps), res.Pass)
	}
}

func TestWaitStableTimesOutAsAFailedExpectation(t *testing.T) {
	b := newFake()
	b.electionTime = time.Hour // never converges within the deadline
	src := "name: slow\ncluster: {algorithm: fake-bully, nodes: 3}\nsteps:\n  - wait: stable\n    within: 2s\n"
	res, err := Run(context.Background(), mustParse(t, src), b, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass || len(res.Expectations) != 1 || res.Expectations[0].Pass || !strings.Contains(res.Expectations[0].Seen, "not stable within 2s") {
		t.Errorf("got pass=%v expectations=%+v", res.Pass, res.Expectations)
	}
}

func TestExpectForFailsWhenTheStateBreaksWithinTheHoldTime(t *testing.T) {
	src := `name: hold
cluster: {algorithm: fake-bully, nodes: 5}
steps:
  - wait: stable
  - partition: {groups: [[1,2,3],[4,5]]}
  - expect: {leader: 5, on: [1, 2, 3], within: 100ms, for: 2s}
  - expect: {leader: 3, on: [1, 2, 3], for: 2s}
checkers: [agreement]
`
	res, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// 1-3 still view 5 for a moment (nobody noticed the cut yet), then
	// elect 3: "5 for 2s" breaks, "3 for 2s" holds.
	if e := res.Expectations[1]; e.Pass || !strings.Contains(e.Seen, "broke 700 ms later") {
		t.Errorf("leader 5 for 2s: %+v", e)
	}
	if e := res.Expectations[2]; !e.Pass {
		t.Errorf("leader 3 for 2s: %+v", e)
	}
}

func TestRunUnwritableStoreStillClosesTheBackend(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b := newFake()
	if _, err := Run(context.Background(), mustParse(t, crash), b, Options{Store: file}); err == nil {
		t.Fatal("no error for a store that is a file")
	}
	if b.closes != 1 {
		t.Errorf("backend closed %d times, want 1", b.closes)
	}
}
