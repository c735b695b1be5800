package ring_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ring"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

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
