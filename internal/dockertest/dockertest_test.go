package dockertest

import (
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
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireWithoutEngine$", "-test.v")
		cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "DOCKER_HOST=unix:///nonexistent/docker.sock", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: child failed=%v (%v), want %v\n%s", tc.ci, failed, err, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "REQUIRE PASSED") {
			t.Errorf("CI=%q: child output lacks %q or passed:\n%s", tc.ci, tc.want, out)
		}
	}
}
