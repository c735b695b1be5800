package conformance_test

import (
	"testing"

	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/toyelection"
)

// Test-only algorithms. They are registered in this test binary alone; the
// real algorithms live in their own packages.

func init() {
	election.Register(election.Algorithm{
		Name: "test-maxid", Title: "max-ID flooding with heartbeats (test only)", Topology: "complete",
		New:           toyelection.NewMaxID,
		ElectionTypes: []string{"ELECTION"},
		Claims: func(q election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
		},
	})
}

// TestSuitePassesAHonestAlgorithm runs the suite on the test algorithm, so
// the suite itself is exercised before (and apart from) the real ones.
func TestSuitePassesAHonestAlgorithm(t *testing.T) {
	a, err := election.Lookup("test-maxid")
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunWith(t, a, conformance.Options{Schedules: 100})
}
