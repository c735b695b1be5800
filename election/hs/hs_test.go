package hs_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/hs"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

func elect(t testing.TB, ring []election.NodeID) *ringnet.Net {
	t.Helper()
	return ringnet.ElectHighest(t, "hs", ring)
}

func TestHirschbergSinclairStaysWithinBoundAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(1980, 1))
	for _, n := range []int{1, 2, 3, 5, 7, 16, 64, 100, 257, 1000} {
		bound := 8 * n * (1 + hs.CeilLog2(n))
		if f := hs.Formula(ringnet.Increasing(n)); f.Exact || int(f.Value) != bound {
			t.Fatalf("n=%d: formula %+v, want bound %d", n, f, bound)
		}
		for name, ring := range map[string][]election.NodeID{
			"increasing":   ringnet.Increasing(n),
			"decreasing":   ringnet.Decreasing(n),
			"bit-reversed": ringnet.BitReversed(n),
			"random":       ringnet.Shuffled(n, r),
		} {
			net := elect(t, ring)
			got := net.ElectionMessages()
			if got > bound {
				t.Errorf("n=%d %s: %d probes and replies, bound 8n(1+⌈log₂ n⌉) = %d", n, name, got, bound)
			}
			if n == 1000 {
				t.Logf("n=%d %s: %d messages (bound %d)", n, name, got, bound)
			}
		}
	}
}

func TestHirschbergSinclairPhaseZeroCostsFourNOnAnIncreasingRing(t *testing.T) {
	// On 1, 2, …, n only the largest survives phase 0 (every other node
	// has a larger neighbour clockwise); phase 0 alone is 2n probes and
	// at most 2n replies. The total is bounded well below the worst case.
	const n = 8
	net := elect(t, ringnet.Increasing(n))
	if net.Sent[hs.TypeElection] < 2*n || net.Sent[hs.TypeReply] < 2 {
		t.Fatalf("probes %d, replies %d: phase 0 did not run on every node", net.Sent[hs.TypeElection], net.Sent[hs.TypeReply])
	}
}

func TestHirschbergSinclairElectsAfterLeaderCrashBySkippingIt(t *testing.T) {
	ring := []election.NodeID{3, 7, 1, 6, 2, 5, 4}
	net := elect(t, ring)
	net.Kill(7)
	for _, id := range ring {
		net.Fire(id, ringnet.TimerSuspect)
	}
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	if leader, ok := net.Agreed(); !ok || leader != 6 {
		t.Fatalf("after 7 crashed: agreed=%v leader %d, want 6; views %v", ok, leader, net.Views)
	}
}
