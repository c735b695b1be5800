package program_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// python3 is the interpreter's path. Without one the test is skipped,
// unless CI=true: there a missing interpreter is a failure, as a missing
// Docker engine is for the container tests.
//
// The path is the interpreter itself (sys.executable), not what PATH
// finds first: a version manager's shim (pyenv's) is a shell script that
// forks a dozen processes before Python starts, which a schedule of five
// nodes pays five times, and under a loaded suite that made a node's first
// answer miss its 20 s.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 not found, and CI=true: the Python example must be tested (%v)", err)
		}
		t.Skipf("python3 not found (%v); CI=true makes this a failure", err)
	}
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if real := strings.TrimSpace(string(out)); err == nil && real != "" {
		return real
	}
	return p
}

// TestPythonBullyPassesItsClaims explores fault schedules against the
// Python example (examples/bully-python/bully.py), judging the claims its
// start answer made: every one holds in every schedule.
func TestPythonBullyPassesItsClaims(t *testing.T) {
	dockertest.CPUBound(t)
	name := register(t, []string{python3(t), "../examples/bully-python/bully.py"}, election.NoQuorum)
	alg, err := election.Lookup(name)
	must(t, err)
	if got := alg.Claims(election.NoQuorum); len(got) != 3 {
		t.Fatalf("claims %v, want the three of plain Bully", got)
	}
	res, err := explore.Run(explore.Options{Algorithm: name, N: 5, Schedules: 150, Seed: 20})
	must(t, err)
	if len(res.Claimed) != 4 || res.Claimed[3] != check.NoProgramFailure {
		t.Fatalf("judged %v, want the three claims and no-program-failure", res.Claimed)
	}
	if res.Failed() {
		t.Fatalf("%d of %d schedules broke a claim %v; first: %+v\nreplay: %v", res.FailedSchedules, res.Schedules, res.Failures, res.Failing[0], res.Replay[0])
	}
	if res.SplitBrainSchedules == 0 {
		t.Errorf("no split brain in %d schedules: plain Bully has it under partitions, so the faults did not reach the program", res.Schedules)
	}
}
