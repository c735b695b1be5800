//go:build !nodeimage

package main

import (
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

func TestWatchRefusesAnAddressBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8090", ":8090", "10.1.2.3:8090"} {
		args := []string{"watch", "--http", addr}
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, "--http", addr, "loopback only (127.0.0.0/8 or ::1)")
	}
}

// TestWatchOfARunWithNoContainersSaysSo asks the engine (read-only) for a
// run nobody started.
func TestWatchOfARunWithNoContainersSaysSo(t *testing.T) {
	dockertest.Require(t) // starts no cluster: needs neither a slot nor the lock
	args := []string{"watch", "--run", "no-such-run-for-watch-test", "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	if !strings.Contains(r.stderr, "no node containers") {
		t.Fatalf("stderr: %s", r.stderr)
	}
	if r.stdout != "" {
		t.Fatalf("stdout: %q", r.stdout)
	}
}
