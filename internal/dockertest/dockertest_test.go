package dockertest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRequireWithoutEngine runs the test binary again against an engine
// address nobody answers on: without CI it skips, with CI=true it fails
// loudly.
func TestRequireWithoutEngine(t *testing.T) {
	if os.Getenv("DOCKERTEST_CHILD") == "1" {
		Require(t)
		t.Log("REQUIRE PASSED")
		return
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "SKIP"},
		{"true", true, "DOCKER ENGINE REQUIRED"},
		// the named engine, its cause and what named it; no fallback
		{"true", true, "docker engine at unix:///nonexistent/docker.sock: no such file or directory (DOCKER_HOST)"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireWithoutEngine$", "-test.v")
		cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "DOCKER_HOST=unix:///nonexistent/docker.sock", "CI="+tc.ci, NoDockerEnv+"=")
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: child failed=%v (%v), want %v\n%s", tc.ci, failed, err, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "REQUIRE PASSED") {
			t.Errorf("CI=%q: child output lacks %q or passed:\n%s", tc.ci, tc.want, out)
		}
	}
}

// TestOffNeverDials: with RINGLEADER_NO_DOCKER=1 the answer is ErrOff, not
// the dial error an engine address nobody answers on would give, and
// Require skips even in CI.
func TestOffNeverDials(t *testing.T) {
	if os.Getenv("DOCKERTEST_CHILD") == "1" {
		if err := Available(); !errors.Is(err, ErrOff) {
			t.Fatalf("Available() = %v, want ErrOff", err)
		}
		Require(t)
		t.Log("REQUIRE PASSED")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOffNeverDials$", "-test.v")
	cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "DOCKER_HOST=unix:///nonexistent/docker.sock", "CI=true", NoDockerEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SKIP") || strings.Contains(string(out), "REQUIRE PASSED") || strings.Contains(string(out), "nonexistent") {
		t.Errorf("child with %s=1: err=%v, want a skip without dialing:\n%s", NoDockerEnv, err, out)
	}
}
