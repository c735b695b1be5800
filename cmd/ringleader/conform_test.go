//go:build !nodeimage

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/internal/toyelection"
	"github.com/ringleader-dev/ringleader/program"
)

// testProgramArg makes the test binary play a program (TestMain):
// `cmd.test conform-test-program NAME`.
const testProgramArg = "conform-test-program"

// testPrograms are the programs the test binary plays: the toy election
// upside down (the lowest ID leads) claiming that the highest wins, and
// the honest toy claiming nothing.
var testPrograms = map[string]election.Algorithm{
	"lowest-wins": {
		Name: "lowest-wins", New: toyelection.NewMinID, ElectionTypes: []string{"ELECTION"},
		Claims: func(election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
		},
	},
	"claims-nothing": {Name: "claims-nothing", New: toyelection.NewMaxID, ElectionTypes: []string{"ELECTION"}},
	// Bully as it is (correct in both modes), and a Bully that runs
	// without a quorum whatever mode it is started in while claiming
	// what the mode's Bully claims: split brain under a majority.
	"bully":                bully.Algorithm(),
	"bully-ignores-quorum": bullyIgnoringQuorum(),
	// Bully whose node 3 fails when an election reaches it: it exits
	// with status 3, or writes a line that is not an answer.
	"bully-exits-on-election":   bullyFailingOnElection("exit"),
	"bully-garbles-on-election": bullyFailingOnElection("garbage"),
	// Bully whose timers wander by up to a millisecond, drawn from the
	// wall clock: correct, and not deterministic.
	"bully-jittery": bullyJittery(),
	// Bully that lists its heartbeat as an announcement.
	"bully-announces-heartbeats": bullyAnnouncingHeartbeats(),
}

func bullyAnnouncingHeartbeats() election.Algorithm {
	a := bully.Algorithm()
	a.AnnounceTypes = append(a.AnnounceTypes, bully.TypeHeartbeat)
	return a
}

func bullyJittery() election.Algorithm {
	a := bully.Algorithm()
	a.Name = "bully-jittery"
	a.New = func(cfg election.Config) (election.Machine, error) {
		m, err := bully.New(cfg)
		return jitteryMachine{m}, err
	}
	return a
}

type jitteryMachine struct{ election.Machine }

func (m jitteryMachine) Step(ev election.Event) []election.Effect {
	fx := m.Machine.Step(ev)
	for i := range fx {
		if fx[i].Kind == election.EffectSetTimer {
			fx[i].After += time.Duration(time.Now().UnixNano() % int64(time.Millisecond))
		}
	}
	return fx
}

// bullyFailingOnElection is Bully whose node 3 fails, the way mode says,
// at the first ELECTION message it receives.
func bullyFailingOnElection(mode string) election.Algorithm {
	a := bully.Algorithm()
	a.Name = "bully-fails-on-election"
	a.New = func(cfg election.Config) (election.Machine, error) {
		m, err := bully.New(cfg)
		return failingMachine{Machine: m, id: cfg.ID, mode: mode}, err
	}
	return a
}

type failingMachine struct {
	election.Machine
	id   election.NodeID
	mode string
}

func (m failingMachine) Step(ev election.Event) []election.Effect {
	if m.id == 3 && ev.Kind == election.EventReceive && ev.Msg.Type == bully.TypeElection {
		fmt.Fprintf(os.Stderr, "node 3: giving up on the election from %d\n", ev.Msg.From)
		if m.mode == "exit" {
			os.Exit(3)
		}
		fmt.Println("hello, runtime") // before the answer: not one
	}
	return m.Machine.Step(ev)
}

func bullyIgnoringQuorum() election.Algorithm {
	a := bully.Algorithm()
	a.Name = "bully-ignores-quorum"
	a.New = func(cfg election.Config) (election.Machine, error) {
		cfg.Quorum = election.NoQuorum
		return bully.New(cfg)
	}
	return a
}

func serveTestProgram(name string) int {
	alg, ok := testPrograms[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no test program %q\n", name)
		return 2
	}
	if err := program.Serve(os.Stdin, os.Stdout, alg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testProgram is the --program command line of a test program.
func testProgram(t *testing.T, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self + " " + testProgramArg + " " + name
}

// conformJSON is the part of conform --json the tests read.
type conformJSON struct {
	Modes []struct {
		Quorum string `json:"quorum"`
		Claims []struct {
			Property string `json:"property"`
			Holds    bool   `json:"holds"`
		} `json:"claims"`
		Cases []struct {
			Name    string `json:"name"`
			Outcome string `json:"outcome"`
		} `json:"cases"`
	} `json:"modes"`
	Declined []struct {
		Quorum string `json:"quorum"`
		Reason string `json:"reason"`
	} `json:"declined"`
	Pass bool `json:"pass"`
}

func TestConformPassesTheGoExampleInBothQuorumModes(t *testing.T) {
	bin := bullyGo(t)
	args := []string{"conform", "--program", bin, "--schedules", "20"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout,
		"conformance of program "+bin+": 5 nodes, 20 schedules per quorum mode, seed 1",
		"quorum none (registered as program-bully-go):\n  agreement           holds\n  bully-max           holds\n  liveness            holds\n  no-program-failure  holds\n",
		"quorum majority (registered as program-bully-go-majority):\n  agreement           holds\n  bully-max           holds\n  no-split-brain      holds\n  epoch-safety        holds\n  liveness            holds\n  no-program-failure  holds\n",
		"    FaultFreeElectionAgrees        pass\n    FaultFreeElectionMeetsFormula  skip: program-bully-go publishes no message-count formula\n    LeaderCrashIsReplaced          pass\n    RandomFaultSchedules           pass\n",
		"summary:\n  quorum none      4 of 4 claims hold\n  quorum majority  6 of 6 claims hold\nPASS\n")

	args = append(args, "--json")
	r = ringleader(t, args...)
	r.wantCode(t, 0, args...)
	var out conformJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json printed no JSON object: %v\n%s", err, r.stdout)
	}
	if !out.Pass || len(out.Modes) != 2 || len(out.Declined) != 0 || len(out.Modes[1].Claims) != 6 || len(out.Modes[1].Cases) != 5 {
		t.Errorf("--json: %+v; want both modes run and passing, majority with 6 claims (no-program-failure among them) and 5 cases", out)
	}
}

// TestConformPassesThePythonExampleWhichDeclinesAMajority: the Python
// example runs plain Bully only and exits on a start with a majority; that
// mode is reported declined, quoting its stderr, and the rest passes.
func TestConformPassesThePythonExampleWhichDeclinesAMajority(t *testing.T) {
	dockertest.CPUBound(t)
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 not found, and CI=true: the Python example must be tested (%v)", err)
		}
		t.Skipf("python3 not found (%v); CI=true makes this a failure", err)
	}
	args := []string{"conform", "--program", "python3 examples/bully-python/bully.py", "--schedules", "20"}
	cmd := exec.Command(binary, args...)
	cmd.Dir = "../.." // the example's path is the repository's
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ringleader %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	wantContains(t, "stdout", stdout.String(),
		"quorum none (registered as program-bully):\n  agreement           holds\n  bully-max           holds\n  liveness            holds\n  no-program-failure  holds\n",
		"quorum majority: not run: the program declined it (its probe start failed):",
		"program exited (exit status 2)", "| bully.py: quorum 'majority': this example runs plain Bully only (quorum none)",
		"  quorum none      4 of 4 claims hold\n  quorum majority  declined by the program\nPASS\n")
}

// TestConformReportsAViolatedClaimWithItsCounterexample: a program that
// elects the lowest ID while claiming bully-max is reported violated,
// exit 1, with the first counterexample: the fault-free election, then
// the first explored schedule with its replay command, shrunk and saved as
// a scenario file that fails the same way when run.
func TestConformReportsAViolatedClaimWithItsCounterexample(t *testing.T) {
	dockertest.CPUBound(t)
	prog := testProgram(t, "lowest-wins")
	save := t.TempDir()
	args := []string{"conform", "--program", prog, "--quorum", "none", "--schedules", "10", "--save", save, "--image", "ringleader-test:runtime"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "stdout", r.stdout,
		"  agreement           holds\n  bully-max           VIOLATED\n      FaultFreeElectionAgrees: ring [2 1 4 5 3]: leader 1, but the algorithm claims bully-max and 5 is the highest ID\n",
		"      failed in 10 of 10 explored schedules; the first, schedule 0 (seed 1): bully-max: ",
		"        replay: ringleader sim explore --program '"+prog+"' --n 5 --schedules 1 --seed 1 --quorum none\n",
		"  liveness            holds\n  no-program-failure  holds\n",
		"    FaultFreeElectionAgrees        FAIL  bully-max: ring [2 1 4 5 3]: leader 1",
		"    RandomFaultSchedules           FAIL  schedule 0 (seed 1): bully-max: ",
		"(10 of 10 schedules failed)\n",
		"  quorum none  3 of 4 claims hold; violated: bully-max; failed cases: FaultFreeElectionAgrees, LeaderCrashIsReplaced, RandomFaultSchedules\nFAIL\n")
	file := filepath.Join(save, "program-lowest-wins-bully-max-1.yaml")
	wantContains(t, "stdout", r.stdout, "): "+file+"\n")
	if strings.Contains(r.stdout, "quorum majority") {
		t.Errorf("--quorum none ran a majority too:\n%s", r.stdout)
	}

	// The saved scenario names the program, and the image --image gave
	// for containers, and expects bully-max to fail: it passes exactly
	// when the failure reproduces.
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "image: ringleader-test:runtime\n") {
		t.Errorf("the saved file (%v) does not carry --image as cluster.image:\n%s", err, b)
	}
	args = []string{"run", "--backend", "sim", file, "--store", t.TempDir()}
	r = ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "program-lowest-wins-bully-max-1", "fail (expected)", "PASS")
}

// TestConformFailsAProgramThatClaimsNothing: an honest program that
// claims no property passes every case, but nothing was judged: that is
// said, and the exit status is 1, not a silent pass.
func TestConformFailsAProgramThatClaimsNothing(t *testing.T) {
	dockertest.CPUBound(t)
	args := []string{"conform", "--program", testProgram(t, "claims-nothing"), "--quorum", "none", "--schedules", "5"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "stdout", r.stdout, "quorum none (registered as program-claims-nothing): claims NOTHING: no property is judged",
		"    FaultFreeElectionAgrees        pass\n", "  quorum none  claims nothing\nFAIL\n")
}

func TestConformRunsABuiltInAlgorithm(t *testing.T) {
	args := []string{"conform", "--algorithm", "ring", "--schedules", "20", "--seed", "3"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "conformance of algorithm ring: 5 nodes, 20 schedules per quorum mode, seed 3",
		"quorum none:\n", "  message-complexity  holds\n", "    FaultFreeElectionMeetsFormula  pass\n", "  quorum none  4 of 4 claims hold\nPASS\n")
}

// TestConformRefusesWhatItCannotRun: mistakes of usage and a program that
// cannot start exit 2, naming what is wrong (and quoting the program).
func TestConformRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "fails.sh")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'cannot parse my config' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{`ringleader conform: give --program "COMMAND ARGS" or --algorithm NAME (known algorithms: bully,`}},
		{[]string{"--program", "x", "--algorithm", "bully"}, []string{"--program and --algorithm both given"}},
		{[]string{"--algorithm", "bully", "extra"}, []string{`unexpected argument "extra"`}},
		{[]string{"--algorithm", "nosuch"}, []string{`--algorithm: unknown algorithm "nosuch"`}},
		{[]string{"--algorithm", "ring", "--quorum", "majority"}, []string{"--quorum: algorithm ring does not run with quorum majority"}},
		{[]string{"--algorithm", "bully", "--quorum", "most"}, []string{`--quorum "most": want none or majority`}},
		{[]string{"--algorithm", "bully", "--schedules", "0"}, []string{"--schedules 0: need at least one"}},
		{[]string{"--algorithm", "bully", "--n", "0"}, []string{"--n 0: need at least one node"}},
		{[]string{"--algorithm", "bully", "--save", file}, []string{"ringleader conform: --save " + file}},
		{[]string{"--algorithm", "bully", "--save", dir, "--image", "img"}, []string{"ringleader conform: --image img: it names a program's image in the files --save writes: give --program and --save"}},
		{[]string{"--program", "x", "--image", "img"}, []string{"ringleader conform: --image img: it names a program's image"}},
		{[]string{"--program", "/nonexistent/prog"}, []string{"ringleader conform: --program: program /nonexistent/prog: start /nonexistent/prog"}},
		{[]string{"--program", failing, "--quorum", "majority"}, []string{"ringleader conform: --program: program " + failing + ": the probe start: program exited (exit status 3)", "| cannot parse my config"}},
	} {
		args := append([]string{"conform"}, c.args...)
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, c.want...)
		if r.stdout != "" {
			t.Errorf("ringleader %s printed on stdout: %q", strings.Join(args, " "), r.stdout)
		}
	}
}
