//go:build !nodeimage

package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// These tests build the binary once and run it as a user would: arguments
// in, exit status and output out.

var binary string

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == testProgramArg {
		os.Exit(serveTestProgram(os.Args[2])) // the test binary plays a program (conform_test.go)
	}
	dir, err := os.MkdirTemp("", "ringleader-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "ringleader")
	build := exec.Command("go", "build", "-o", binary, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// ringleader runs the binary with args in the test's working directory
// (cmd/ringleader).
func ringleader(t *testing.T, args ...string) result {
	t.Helper()
	return ringleaderEnv(t, nil, args...)
}

func (r result) wantCode(t *testing.T, code int, args ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("ringleader %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
}

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

var commandNames = []string{"check", "clean", "compare", "completion", "conform", "control", "fault", "help", "image", "netfilter", "node", "reap", "report", "rig", "run", "sim", "tap", "up", "watch"}

func TestNoArgumentsPrintsUsageOnStderrAndExits2(t *testing.T) {
	r := ringleader(t)
	r.wantCode(t, 2)
	wantContains(t, "stderr", r.stderr, append([]string{"Usage: ringleader <command>"}, commandNames...)...)
	if r.stdout != "" {
		t.Errorf("usage went to stdout: %q", r.stdout)
	}
}

func TestHelpPrintsUsageAndExits0(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := ringleader(t, args...)
		r.wantCode(t, 0, args...)
		wantContains(t, "stdout", r.stdout, "Usage: ringleader <command>")
	}
}

func TestUnknownCommandExits2NamingItAndTheKnownCommands(t *testing.T) {
	r := ringleader(t, "elect")
	r.wantCode(t, 2, "elect")
	wantContains(t, "stderr", r.stderr, `unknown command "elect"`, "known: "+strings.Join(commandNames, ", "))
}

// complexity is the JSON row of sim complexity.
type complexity struct {
	Algorithm string `json:"algorithm"`
	N         int    `json:"n"`
	IDs       []int  `json:"ids"`
	Leader    int    `json:"leader"`
	Agreed    bool   `json:"agreed"`
	Messages  int    `json:"messages"`
	Formula   *struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Exact bool    `json:"exact"`
	} `json:"formula"`
	MatchesFormula *bool `json:"matches_formula"`
	Quiet          bool  `json:"quiet"`
}

func simComplexity(t *testing.T, args ...string) complexity {
	t.Helper()
	args = append([]string{"sim", "complexity"}, args...)
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	var c complexity
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	return c
}

func TestChangRobertsWorstRingCostsNTimesNPlusOneOverTwoMessages(t *testing.T) {
	c := simComplexity(t, "--algorithm", "changroberts", "--n", "64", "--arrangement", "worst", "--json")
	const want = 64 * 65 / 2 // 2080
	if c.Messages != want {
		t.Errorf("messages %d, want n(n+1)/2 = %d", c.Messages, want)
	}
	if c.Formula == nil || c.Formula.Value != want || !c.Formula.Exact {
		t.Errorf("formula %+v, want value %d, exact", c.Formula, want)
	}
	if c.MatchesFormula == nil || !*c.MatchesFormula {
		t.Errorf("matches_formula %v, want true", c.MatchesFormula)
	}
	if c.Leader != 64 || !c.Agreed || !c.Quiet {
		t.Errorf("leader %d agreed %v quiet %v, want 64, true, true", c.Leader, c.Agreed, c.Quiet)
	}
	if len(c.IDs) != 64 || c.IDs[0] != 64 || c.IDs[63] != 1 {
		t.Errorf("worst arrangement %v, want 64 down to 1", c.IDs)
	}
}

func TestChangRobertsBestRingCostsTwoNMinusOneMessages(t *testing.T) {
	c := simComplexity(t, "--algorithm", "changroberts", "--n", "64", "--arrangement", "best", "--json")
	const want = 2*64 - 1 // 127
	if c.Messages != want {
		t.Errorf("messages %d, want 2n-1 = %d", c.Messages, want)
	}
	if c.Formula == nil || c.Formula.Value != want || !c.Formula.Exact {
		t.Errorf("formula %+v, want value %d, exact", c.Formula, want)
	}
	if c.Leader != 64 || !c.Agreed {
		t.Errorf("leader %d agreed %v, want 64, true", c.Leader, c.Agreed)
	}
}

func TestUnknownAlgorithmExits2ListingTheKnownOnes(t *testing.T) {
	args := []string{"sim", "complexity", "--algorithm", "nope", "--n", "4", "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, `"nope"`, "bully", "changroberts", "hs", "peterson", "ring", "variable-time")
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
}

func TestBadIDListExits2NamingTheBadElement(t *testing.T) {
	args := []string{"sim", "complexity", "--algorithm", "changroberts", "--ids", "3,x,1", "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, `"x"`, "--ids")
}

// exploreResult is the part of sim explore --json the tests read.
type exploreResult struct {
	Algorithm           string         `json:"algorithm"`
	Quorum              string         `json:"quorum"`
	Schedules           int            `json:"schedules"`
	Claimed             []string       `json:"claimed"`
	Failures            map[string]int `json:"failures"`
	FailedSchedules     int            `json:"failed_schedules"`
	SplitBrainSchedules int            `json:"split_brain_schedules"`
	SplitBrain          []struct {
		Seed       int64    `json:"seed"`
		SplitBrain bool     `json:"split_brain"`
		Faults     []string `json:"faults"`
		Replay     string   `json:"replay"`
	} `json:"split_brain"`
	Replay []string `json:"replay"`
	Shrunk []struct {
		Seed       int64  `json:"seed"`
		File       string `json:"file"`
		Checker    string `json:"checker"`
		Steps      int    `json:"steps"`
		FaultSteps int    `json:"fault_steps"`
	} `json:"shrunk"`
}

func simExplore(t *testing.T, wantCode int, args ...string) exploreResult {
	t.Helper()
	args = append([]string{"sim", "explore"}, args...)
	r := ringleader(t, args...)
	r.wantCode(t, wantCode, args...)
	var res exploreResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	return res
}

func TestBullyWithMajorityQuorumHasNoSplitBrainUnderRandomFaults(t *testing.T) {
	res := simExplore(t, 0, "--algorithm", "bully", "--n", "5", "--schedules", "50", "--seed", "1", "--quorum", "majority", "--json")
	if res.Schedules != 50 || res.Quorum != "majority" {
		t.Errorf("ran %d schedules in quorum mode %q, want 50 in majority", res.Schedules, res.Quorum)
	}
	if res.SplitBrainSchedules != 0 || res.FailedSchedules != 0 {
		t.Errorf("split brain in %d schedules, claimed checkers failed in %d (%v); want 0 and 0", res.SplitBrainSchedules, res.FailedSchedules, res.Failures)
	}
	wantContains(t, "claimed checkers", strings.Join(res.Claimed, ","), "no-split-brain", "epoch-safety")
}

func TestPlainBullySplitBrainIsFoundAndItsReplayReproducesIt(t *testing.T) {
	res := simExplore(t, 0, "--algorithm", "bully", "--n", "5", "--schedules", "20", "--seed", "1", "--json")
	if res.SplitBrainSchedules == 0 || len(res.SplitBrain) == 0 {
		t.Fatalf("no split brain in %d schedules of plain bully (split_brain_schedules %d)", res.Schedules, res.SplitBrainSchedules)
	}
	first := res.SplitBrain[0]
	found := false
	for _, c := range res.Replay {
		found = found || c == first.Replay
	}
	if !found {
		t.Errorf("replay commands %q do not include the split-brain schedule's %q", res.Replay, first.Replay)
	}

	// Run the printed command, as a user would paste it.
	fields := strings.Fields(first.Replay)
	if len(fields) < 1 || fields[0] != "ringleader" {
		t.Fatalf("replay %q is not a ringleader command", first.Replay)
	}
	if len(fields) < 3 || fields[1] != "sim" || fields[2] != "explore" {
		t.Fatalf("replay %q is not a sim explore command", first.Replay)
	}
	replay := simExplore(t, 0, append(fields[3:], "--json")...)
	if replay.Schedules != 1 || replay.SplitBrainSchedules != 1 || len(replay.SplitBrain) != 1 {
		t.Fatalf("replay %q: %d schedules, split brain in %d; want 1 of 1", first.Replay, replay.Schedules, replay.SplitBrainSchedules)
	}
	got := replay.SplitBrain[0]
	if got.Seed != first.Seed || strings.Join(got.Faults, "\n") != strings.Join(first.Faults, "\n") {
		t.Errorf("replay ran a different schedule:\n seed %d faults %q\nwant seed %d faults %q", got.Seed, got.Faults, first.Seed, first.Faults)
	}
}

// TestShrunkSplitBrainIsSavedAsAScenarioThatRunPasses is the feature end
// to end as a user meets it: explore, shrink, save, then run the saved file
// in the simulator; the run passes because the split brain reproduces.
func TestShrunkSplitBrainIsSavedAsAScenarioThatRunPasses(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sim", "explore", "--algorithm", "bully", "--n", "5", "--schedules", "30", "--seed", "11", "--shrink", "--shrink-max", "2", "--save", dir, "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stderr", r.stderr, "shrink: seed ")
	var res exploreResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(res.Shrunk) == 0 {
		t.Fatalf("nothing shrunk: %s", r.stdout)
	}
	for _, sh := range res.Shrunk {
		if sh.Checker != "no-split-brain" || sh.FaultSteps > 4 || filepath.Dir(sh.File) != dir {
			t.Errorf("shrunk %+v: want a no-split-brain schedule of at most 4 faults saved in %s", sh, dir)
		}
		run := []string{"run", "--backend", "sim", "--store", t.TempDir(), sh.File}
		rr := ringleader(t, run...)
		rr.wantCode(t, 0, run...)
		wantContains(t, "run stdout", rr.stdout, "fail (expected)", "PASS")
	}
	bad := []string{"sim", "explore", "--algorithm", "bully", "--save", dir}
	ringleader(t, bad...).wantCode(t, 2, bad...)
}

// TestExploreSavesAProgramsImageIntoItsFiles: a shrunk schedule of a
// program, saved with --image, names the program and the image that
// holds its runtime, so the file runs on the docker backend as it is;
// --image without a program or --save is refused before exploring.
func TestExploreSavesAProgramsImageIntoItsFiles(t *testing.T) {
	dockertest.CPUBound(t)
	dir := t.TempDir()
	prog := testProgram(t, "lowest-wins")
	args := []string{"sim", "explore", "--program", prog, "--n", "3", "--schedules", "3", "--seed", "1",
		"--shrink", "--shrink-max", "1", "--save", dir, "--image", "ringleader-test:runtime"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("saved %v (%v), want one file\n%s%s", files, err, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, files[0], string(b), "program: ["+strings.Join(strings.Fields(prog), ", ")+"]", "image: ringleader-test:runtime\n")
	for _, bad := range [][]string{
		{"sim", "explore", "--algorithm", "bully", "--shrink", "--save", dir, "--image", "img"},
		{"sim", "explore", "--program", prog, "--image", "img"},
	} {
		r := ringleader(t, bad...)
		r.wantCode(t, 2, bad...)
		wantContains(t, "stderr", r.stderr, "ringleader sim explore: --image img: it names a program's image in the files --save writes: give --program and --save")
	}
}

func TestPlainBullyExploreTextOutputPrintsTheReplayCommands(t *testing.T) {
	args := []string{"sim", "explore", "--algorithm", "bully", "--n", "5", "--schedules", "20", "--seed", "1"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "split brain (not claimed by bully)", "\nreplay:\n", "  ringleader sim explore --algorithm bully --n 5 --schedules 1 --seed ")
}

func TestRunRejectsAnInvalidScenarioNamingFileLineAndField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	scenario := "name: bad-target\ncluster:\n  algorithm: bully\n  nodes: 5\nsteps:\n  - wait: stable\n  - kill: leadr\n"
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	args := []string{"run", "--backend", "sim", path, "--store", store}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, path+":7:", "steps[2].kill", `"leadr"`)
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("an invalid scenario left %d entries in the store", len(entries))
	}
}

func TestRunReportsEveryInvalidFieldAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	scenario := "name: bad-two\ncluster:\n  algorithm: bullyy\n  nodes: 5\nsteps:\n  - wait: stable\n  - kill: leadr\n"
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--backend", "sim", path, "--store", t.TempDir()}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, path+":3: cluster.algorithm", `"bullyy"`, path+":7: steps[2].kill")
}

func TestRunOnTheSimBackendWritesHistoryResultsAndReport(t *testing.T) {
	store := t.TempDir()
	args := []string{"run", "--backend", "sim", "../../scenarios/bully-leader-crash.yaml", "--store", store, "--seed", "1", "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	var results []struct {
		Scenario string   `json:"scenario"`
		Backend  string   `json:"backend"`
		Dir      string   `json:"dir"`
		Pass     bool     `json:"pass"`
		Failures []string `json:"failures"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil {
		t.Fatalf("--json stdout is not a JSON array: %v\n%s", err, r.stdout)
	}
	if len(results) != 1 || results[0].Scenario != "bully-leader-crash" || results[0].Backend != "sim" || !results[0].Pass {
		t.Fatalf("results %+v, want one passing bully-leader-crash run on sim", results)
	}
	wantContains(t, "stderr (the table goes there with --json)", r.stderr, "bully-leader-crash", "PASS")

	dir := results[0].Dir
	if rel, err := filepath.Rel(store, dir); err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("run directory %s is not inside the store %s", dir, store)
	}
	for _, f := range []string{"history.jsonl", "results.json", "report.html"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("store: %v", err)
			continue
		}
		if st.Size() == 0 {
			t.Errorf("store: %s is empty", f)
		}
	}
	recs, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[history.Kind]int{}
	for _, rec := range recs {
		kinds[rec.Kind]++
	}
	for _, k := range []history.Kind{history.KindView, history.KindFault, history.KindMark} {
		if kinds[k] == 0 {
			t.Errorf("history.jsonl has no %s record (kinds: %v)", k, kinds)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Scenario string `json:"scenario"`
		Pass     bool   `json:"pass"`
	}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if saved.Scenario != "bully-leader-crash" || !saved.Pass {
		t.Errorf("results.json says scenario %q pass %v", saved.Scenario, saved.Pass)
	}
}

// TestRunWritesJUnitForCI: --junit FILE holds one testsuite per run with a
// testcase per expectation and checker; a failing run's case carries the
// evidence, and the exit status still says the run failed.
func TestRunWritesJUnitForCI(t *testing.T) {
	store := t.TempDir()
	junit := filepath.Join(store, "junit.xml")
	// A scenario whose expectation cannot hold: 3 never leads a Bully
	// cluster while 5 lives.
	bad := filepath.Join(t.TempDir(), "wrong-leader.yaml")
	if err := os.WriteFile(bad, []byte("name: wrong-leader\ncluster: {algorithm: bully, nodes: 5}\nsteps:\n  - wait: stable\n  - expect: {leader: 3, within: 1s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--backend", "sim", "--seed", "1", "--store", store, "--junit", junit, "../../scenarios/bully-leader-crash.yaml", bad}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("junit.xml: %v\n%s", err, raw)
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "bully-leader-crash" || doc.Suites[1].Name != "wrong-leader" {
		t.Fatalf("suites: %+v", doc.Suites)
	}
	if s := doc.Suites[0]; s.Failures != 0 || s.Tests != len(s.Cases) || s.Tests < 6 {
		t.Errorf("bully-leader-crash: %d tests, %d failures, %d cases", s.Tests, s.Failures, len(s.Cases))
	}
	s := doc.Suites[1]
	if s.Failures != 1 {
		t.Fatalf("wrong-leader: %d failures, want 1", s.Failures)
	}
	for _, c := range s.Cases {
		if c.Failure != nil && (!strings.Contains(c.Name, "expect leader 3") || !strings.Contains(c.Failure.Text, "seen: ") || !strings.Contains(c.Failure.Text, "5→5*")) {
			t.Errorf("failing case %q: %+v", c.Name, c.Failure)
		}
	}
}

// TestSimRunsLeaveTheContainerRunsLatestAlone: a simulator run points
// latest-sim at itself and leaves latest, which means the container run.
func TestSimRunsLeaveTheContainerRunsLatestAlone(t *testing.T) {
	store := t.TempDir()
	base := filepath.Join(store, "bully-leader-crash")
	if err := os.MkdirAll(filepath.Join(base, "20260101T000000.000Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("20260101T000000.000Z", filepath.Join(base, "latest")); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--backend", "sim", "--seed", "1", "--store", store, "../../scenarios/bully-leader-crash.yaml"}
	ringleader(t, args...).wantCode(t, 0, args...)
	if l, _ := os.Readlink(filepath.Join(base, "latest")); l != "20260101T000000.000Z" {
		t.Errorf("a sim run re-pointed latest to %q", l)
	}
	l, err := os.Readlink(filepath.Join(base, "latest-sim"))
	if err != nil || l == "20260101T000000.000Z" {
		t.Fatalf("latest-sim -> %q (%v)", l, err)
	}
	if _, err := os.Stat(filepath.Join(base, "latest-sim", "report.html")); err != nil {
		t.Errorf("latest-sim does not lead to the run: %v", err)
	}
}

func TestNodeRejectsIDZeroExit2NamingTheFlag(t *testing.T) {
	args := []string{"node", "--id", "0", "--peers", "1=a"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, "--id")
}

// TestNetfilterHelpListsTheRuleFlags: the helper's rule flags are in its
// help, so a person can run it by hand.
func TestNetfilterHelpListsTheRuleFlags(t *testing.T) {
	r := ringleader(t, "netfilter", "apply", "-h")
	r.wantCode(t, 0, "netfilter", "apply", "-h")
	wantContains(t, "netfilter apply -h", r.stdout, "--drop-out", "--drop-in", "--loss-peers", "--queue-peers", "--delay", "NET_ADMIN")
}

// TestFaultRefusesBadWordsBeforeTouchingAnything: a malformed fault is
// refused with exit 2 and a message naming it, before any engine is asked.
func TestFaultRefusesBadWordsBeforeTouchingAnything(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fault"}, "no fault given"},
		{[]string{"fault", "explode", "5"}, "unknown fault"},
		{[]string{"fault", "partition", "odd"}, "not a group of node IDs"},
		{[]string{"fault", "cut", "1"}, "two node IDs"},
		{[]string{"fault", "--engines", "unix:///a.sock,,unix:///b.sock", "kill", "1"}, "--engines: engines"},
	} {
		r := ringleader(t, c.args...)
		r.wantCode(t, 2, c.args...)
		wantContains(t, strings.Join(c.args, " "), r.stderr, c.want)
	}
	r := ringleader(t, "fault", "-h")
	r.wantCode(t, 0, "fault", "-h")
	wantContains(t, "fault -h", r.stdout, "partition 1,2,3 4,5", "isolate TARGET", "cut A B [--one-way]", "--run", "--engines", "partition engines")
	r = ringleader(t, "watch", "-h")
	r.wantCode(t, 0, "watch", "-h")
	wantContains(t, "watch -h", r.stdout, "--engines", "which engine holds each node")
}
