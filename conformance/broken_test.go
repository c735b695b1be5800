package conformance_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/toyelection"
)

// lowestWinsName registers the toy election upside down (the lowest ID
// leads) under a claim that the highest ID wins: a lie the suite must catch.
const lowestWinsName = "test-lowest-wins-claims-bully-max"

func init() {
	election.Register(election.Algorithm{
		Name: lowestWinsName, Title: "min-ID flooding that claims bully-max (test only, deliberately broken)", Topology: "complete",
		New:           toyelection.NewMinID,
		ElectionTypes: []string{"ELECTION"},
		Claims: func(q election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
		},
	})
}

// brokenEnv selects, in a re-executed test binary, the run of the suite on
// the broken algorithm. The suite failing is the point, so it must not fail
// the parent's run: it happens in a child process whose failure the parent
// asserts.
const brokenEnv = "RINGLEADER_ELECTIONTEST_RUN_BROKEN"

func TestSuiteFailsAnAlgorithmThatElectsTheLowestIDButClaimsBullyMax(t *testing.T) {
	if os.Getenv(brokenEnv) == "1" {
		a, err := election.Lookup(lowestWinsName)
		if err != nil {
			t.Fatal(err)
		}
		conformance.RunWith(t, a, conformance.Options{Schedules: 20})
		return
	}

	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("the suite passed an algorithm that elects the lowest ID while claiming bully-max (err %v):\n%s", err, out.String())
	}
	text := out.String()
	// Each part of the suite that judges who wins catches the lie, and
	// says which property failed.
	for _, want := range []string{
		"--- FAIL: " + t.Name() + "/no-quorum/FaultFreeElectionAgrees",
		"claims bully-max",
		"--- FAIL: " + t.Name() + "/no-quorum/LeaderCrashIsReplaced",
		"want the highest live ID",
		"--- FAIL: " + t.Name() + "/no-quorum/RandomFaultSchedules",
		"bully-max: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the failing suite's output does not contain %q:\n%s", want, text)
		}
	}
	// The properties it does have are not blamed.
	for _, notWant := range []string{"agreement: ", "liveness: "} {
		if strings.Contains(text, notWant) {
			t.Errorf("the suite blamed a property the algorithm has (%q):\n%s", notWant, text)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("the suite rejected %s as it should", lowestWinsName)
}
