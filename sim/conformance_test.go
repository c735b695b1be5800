package sim_test

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos/chaostest"
	_ "github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/sim"
)

// TestBackendConformance runs the conformance suite every chaos.Backend
// passes (package chaostest) on the simulator; docker runs the same
// suite on containers.
func TestBackendConformance(t *testing.T) {
	chaostest.Run(t, &sim.Backend{}, "sim-conformance", 10*time.Second)
}
