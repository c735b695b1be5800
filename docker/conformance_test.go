package docker

import (
	"context"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos/chaostest"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestBackendConformance runs the conformance suite every chaos.Backend
// passes (package chaostest) on real containers: every fault and its
// edges, with the outcomes the simulator gives them too; every kind is
// carried out but clock, which is refused as unsupported. It runs alone:
// the delay case measures the latency it adds.
func TestBackendConformance(t *testing.T) {
	dockertest.Alone(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	run := runID(t)
	// Registered before the suite's Close, so it runs after it.
	t.Cleanup(func() {
		left, err := Leftovers(context.Background(), run)
		if err != nil {
			t.Errorf("list leftovers: %v", err)
		}
		if len(left) > 0 {
			t.Errorf("after Close, still labelled with run %s: %v", run, left)
		}
	})
	// Clock faults wait for the harness→node control channel: until
	// then containers refuse them, explicitly.
	chaostest.Run(t, New(WithImage(testImage), WithBuild(false), WithProgress(testWriter{t})), run, 20*time.Second)
}
