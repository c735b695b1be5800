package ring_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/changroberts"
	"github.com/ringleader-dev/ringleader/election/ring"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

func elect(t testing.TB, ring []election.NodeID) *ringnet.Net {
	t.Helper()
	return ringnet.ElectHighest(t, "ring", ring)
}

func TestRingConcurrentInitiatorsCostTheHopSumAndOneCoordinator(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 5, 17, 64, 300} {
		for _, ids := range [][]election.NodeID{ringnet.Increasing(n), ringnet.Decreasing(n), ringnet.Shuffled(n, r)} {
			net := elect(t, ids)
			want := changroberts.HopSum(ids)
			if got := net.ElectionMessages(); got != want {
				t.Errorf("n=%d %v: %d ELECTION messages, want the hop sum %d", n, ids[:min(n, 8)], got, want)
			}
			if f := ring.Formula(ids); !f.Exact || int(f.Value) != want {
				t.Errorf("n=%d: formula %+v, want exact %d", n, f, want)
			}
			if n > 1 && net.AnnounceMessages() != n {
				t.Errorf("n=%d: %d COORDINATOR messages, want exactly one round (%d)", n, net.AnnounceMessages(), n)
			}
		}
	}
}

func TestRingCoordinatorCarriesEveryLiveMember(t *testing.T) {
	ids := []election.NodeID{4, 9, 2, 7, 5}
	m, err := election.New("ring", election.Config{ID: 9, Members: ids, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m.Step(election.Event{Kind: election.EventStart})
	m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect})
	// Its list comes back having collected every node it passed.
	back := election.Message{Type: ring.TypeElection, From: 4, To: 9, Epoch: 1, Seq: 1, Candidate: 9, Members: []election.NodeID{9, 2, 7, 5, 4}}
	var coord *election.Message
	for _, ef := range m.Step(election.Event{Kind: election.EventReceive, Msg: back}) {
		if ef.Kind == election.EffectSend && ef.Msg.Type == ring.TypeCoordinator {
			coord = &ef.Msg
		}
	}
	if coord == nil || coord.Candidate != 9 || !slices.Equal(coord.Members, []election.NodeID{9, 2, 7, 5, 4}) {
		t.Fatalf("COORDINATOR %+v, want leader 9 with members [9 2 7 5 4]", coord)
	}
	if v := m.View(); v.Role != election.Leader || v.Leader != 9 {
		t.Fatalf("view %v, want leader 9", v)
	}
}

func TestRingSkipsDeadNodesAndLeavesThemOffTheList(t *testing.T) {
	ids := []election.NodeID{4, 9, 2, 7, 5}
	net := elect(t, ids)
	net.Kill(9)
	net.Kill(2)
	net.Fire(4, ringnet.TimerSuspect)
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	if leader, ok := net.Agreed(); !ok || leader != 7 {
		t.Fatalf("after 9 and 2 crashed: agreed=%v leader %d, want 7; views %v", ok, leader, net.Views)
	}
	if net.Sent[ringnet.TypeAck] == 0 {
		t.Fatal("no hop was acknowledged")
	}
}
