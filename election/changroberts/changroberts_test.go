package changroberts_test

import (
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/changroberts"
)

func TestChangRobertsHopSumByHand(t *testing.T) {
	// 3 → 1 → 4 → 2 → back to 3: 3 travels 2 hops (to 4), 1 one hop,
	// 4 all four, 2 one hop (to 3).
	if got := changroberts.HopSum([]election.NodeID{3, 1, 4, 2}); got != 8 {
		t.Fatalf("hop sum of 3,1,4,2 = %d, want 8", got)
	}
}
