package program_test

import (
	"testing"

	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestExamplesPassTheConformanceSuite runs the algorithm conformance
// suite every built-in algorithm passes (package conformance) on the
// shipped programs: the Go Bully in both quorum modes, the Python Bully
// without a quorum.
func TestExamplesPassTheConformanceSuite(t *testing.T) {
	dockertest.CPUBound(t)
	progs := []struct {
		name string
		argv func(*testing.T) []string
		q    election.QuorumMode
	}{
		{"bully-go", func(*testing.T) []string { return bullyGo() }, election.NoQuorum},
		{"bully-go-majority", func(*testing.T) []string { return bullyGo() }, election.Majority},
		{"bully-python", func(t *testing.T) []string { return []string{python3(t), "../examples/bully-python/bully.py"} }, election.NoQuorum},
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			alg, err := election.Lookup(register(t, p.argv(t), p.q))
			must(t, err)
			conformance.RunWith(t, alg, conformance.Options{Schedules: 60})
		})
	}
}
