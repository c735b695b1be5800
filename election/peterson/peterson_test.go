package peterson_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/peterson"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

func elect(t testing.TB, ring []election.NodeID) *ringnet.Net {
	t.Helper()
	return ringnet.ElectHighest(t, "peterson", ring)
}

func TestPetersonStaysWithinBoundAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(1982, 1))
	for _, n := range []int{1, 2, 3, 5, 7, 16, 64, 100, 257, 1000} {
		bound := 2*n*peterson.FloorLog2(n) + n
		if f := peterson.Formula(ringnet.Increasing(n)); f.Exact || int(f.Value) != bound {
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
				t.Errorf("n=%d %s: %d messages, bound 2n⌊log₂ n⌋+n = %d", n, name, got, bound)
			}
			if n > 1 && net.AnnounceMessages() != n {
				t.Errorf("n=%d %s: %d ELECTED messages, want one round (%d)", n, name, net.AnnounceMessages(), n)
			}
			if n == 1000 {
				t.Logf("n=%d %s: %d messages (bound %d)", n, name, got, bound)
			}
		}
	}
}

func TestPetersonLastActiveNodeNeedNotBeTheHighestYetTheHighestLeads(t *testing.T) {
	// Clockwise 1, 2, 3: in phase 0 node 1 learns ntid 3 (from node 3, its
	// predecessor) and nntid 2; 3 > 1 and 3 > 2, so node 1 survives holding
	// tid 3 while node 3 becomes a relay. Node 1 ends the election and
	// announces 3.
	net := elect(t, []election.NodeID{1, 2, 3})
	if v := net.Views[3]; v.Role != election.Leader {
		t.Fatalf("node 3's view %v, want leader", v)
	}
	if v := net.Views[1]; v.Role != election.Follower || v.Leader != 3 {
		t.Fatalf("node 1's view %v, want follower of 3", v)
	}
}

func TestPetersonElectsAfterLeaderCrashBySkippingIt(t *testing.T) {
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
