package conformance_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all" // every real algorithm
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// expected are the algorithms the project ships. The count assertion below
// is what makes "every algorithm passes the suite" mean something: an
// algorithm that forgets to register in election/all would otherwise pass
// by not being run.
var expected = []string{"bully", "changroberts", "hs", "peterson", "raft", "ring", "variable-time"}

// shipped are the registered algorithms minus this test binary's own fakes
// (named "test-...", registered by suite_test.go).
func shipped() []election.Algorithm {
	var out []election.Algorithm
	for _, a := range election.Algorithms() {
		if !strings.HasPrefix(a.Name, "test-") {
			out = append(out, a)
		}
	}
	return out
}

func TestEveryExpectedAlgorithmIsRegistered(t *testing.T) {
	var names []string
	for _, a := range shipped() {
		names = append(names, a.Name)
	}
	// COUNT ASSERTION: at least the seven shipped algorithms are registered.
	for _, want := range expected {
		if !slices.Contains(names, want) {
			t.Errorf("algorithm %q is not registered (registered: %v); import its package in election/all", want, names)
		}
	}
	if len(names) < len(expected) {
		t.Errorf("%d algorithms registered, want at least %d", len(names), len(expected))
	}
}

func TestEveryAlgorithmConforms(t *testing.T) {
	dockertest.CPUBound(t)
	for _, a := range shipped() {
		t.Run(a.Name, func(t *testing.T) {
			conformance.Run(t, a)
		})
	}
}
