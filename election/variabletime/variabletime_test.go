package variabletime_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ringnet"
	"github.com/ringleader-dev/ringleader/election/variabletime"
)

func TestVariableTimeSlotsFollowDecreasingIDRank(t *testing.T) {
	ids := []election.NodeID{30, 10, 50, 20, 40}
	round := election.DefaultTiming.Answer
	n := len(ids)
	for _, id := range ids {
		m, err := election.New("variable-time", election.Config{ID: id, Members: ids, Rand: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			t.Fatal(err)
		}
		m.Step(election.Event{Kind: election.EventStart})
		effects := m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect})
		desc := []election.NodeID{50, 40, 30, 20, 10}
		rank := slices.Index(desc, id)
		sent, slot := false, false
		for _, ef := range effects {
			sent = sent || (ef.Kind == election.EffectSend && ef.Msg.Type == variabletime.TypeElection)
			if ef.Kind == election.EffectSetTimer && ef.Timer == variabletime.TimerSlot {
				slot = true
				if want := round * time.Duration(rank*n); ef.After != want {
					t.Errorf("node %d (rank %d): slot after %v, want %v", id, rank, ef.After, want)
				}
			}
		}
		if rank == 0 && (!sent || slot) {
			t.Errorf("highest node: sent=%v slot timer=%v, want it to send at once", sent, slot)
		}
		if rank > 0 && (sent || !slot) {
			t.Errorf("node %d: sent=%v slot timer=%v, want it to wait for its slot", id, sent, slot)
		}
	}
}

func TestVariableTimeSilentCandidateReturnsToALiveHigherLeader(t *testing.T) {
	ids := []election.NodeID{1, 2, 3}
	m, err := election.New("variable-time", election.Config{ID: 1, Members: ids, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	m.Step(election.Event{Kind: election.EventStart})
	hb := election.Message{Type: ringnet.TypeHeartbeat, From: 3, To: 1, Epoch: 1, Candidate: 3}
	m.Step(election.Event{Kind: election.EventReceive, Msg: hb})
	// Cut off from 3 for a while: node 1 suspects and waits for its slot
	// in epoch 2, sending nothing.
	out := m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect})
	for _, ef := range out {
		if ef.Kind == election.EffectSend {
			t.Fatalf("lowest node sent %+v before its slot", ef.Msg)
		}
	}
	if v := m.View(); v.Role != election.Candidate || v.Epoch != 2 {
		t.Fatalf("view %v, want candidate in epoch 2", v)
	}
	// The link heals: 3's heartbeat of epoch 1 shows it alive. Nobody
	// heard of epoch 2, so node 1 goes back to following 3.
	out = m.Step(election.Event{Kind: election.EventReceive, Msg: hb})
	if v := m.View(); v.Role != election.Follower || v.Leader != 3 || v.Epoch != 1 {
		t.Fatalf("view %v, want follower of 3 in epoch 1", v)
	}
	cancelled := false
	for _, ef := range out {
		cancelled = cancelled || (ef.Kind == election.EffectCancelTimer && ef.Timer == variabletime.TimerSlot)
	}
	if !cancelled {
		t.Fatal("the slot timer of the abandoned epoch is still armed")
	}
}
