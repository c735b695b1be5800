package bully

import (
	"math"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func TestEpochArithmeticNeverWraps(t *testing.T) {
	for _, c := range []struct{ e, want uint64 }{
		{0, 1}, {41, 42}, {election.MaxEpoch - 1, election.MaxEpoch}, {election.MaxEpoch, election.MaxEpoch}, {math.MaxUint64, math.MaxUint64},
	} {
		if got := election.NextEpoch(c.e); got != c.want {
			t.Errorf("election.NextEpoch(%d) = %d, want %d", c.e, got, c.want)
		}
	}
	// In a cluster: conformance/bully, TestEpochArithmeticNeverWrapsInACluster.
}
