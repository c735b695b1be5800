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

func TestVariableTimeCostsExactlyNMessagesAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{1, 2, 5, 64, 1000} {
		ids := ringnet.Shuffled(n, r)
		net, err := ringnet.NewNet("variable-time", ids)
		if err != nil {
			t.Fatal(err)
		}
		if err := net.Elect(); err != nil {
			t.Fatal(err)
		}
		if leader, ok := net.Agreed(); !ok || leader != election.NodeID(n) {
			t.Fatalf("n=%d: agreed=%v leader %d, want %d", n, ok, leader, n)
		}
		want := int(variabletime.Formula(ids).Value)
		if got := net.ElectionMessages(); got != want || (n > 1 && got != n) {
			t.Errorf("n=%d: %d messages, want exactly %d", n, got, want)
		}
		for _, id := range ids {
			if net.Armed(id, variabletime.TimerSlot) {
				t.Fatalf("n=%d: node %d still waits for its slot after the token passed", n, id)
			}
		}
	}
}

func TestVariableTimeNextSlotWinsWhenTheHighestIsDead(t *testing.T) {
	ids := []election.NodeID{3, 5, 1, 4, 2}
	net, err := ringnet.NewNet("variable-time", ids)
	if err != nil {
		t.Fatal(err)
	}
	if err := net.Elect(); err != nil {
		t.Fatal(err)
	}
	net.Kill(5)
	for _, id := range ids {
		net.Fire(id, ringnet.TimerSuspect)
	}
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	// Slot 0 belongs to dead 5: nothing is sent. Slot 1 is 4's.
	if _, ok := net.Agreed(); ok {
		t.Fatal("a leader before any live node's slot opened")
	}
	for _, id := range []election.NodeID{3, 1, 2} {
		if !net.Armed(id, variabletime.TimerSlot) {
			t.Fatalf("node %d has no slot timer", id)
		}
	}
	net.Fire(4, variabletime.TimerSlot)
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	if leader, ok := net.Agreed(); !ok || leader != 4 {
		t.Fatalf("agreed=%v leader %d, want 4; views %v", ok, leader, net.Views)
	}
	for _, id := range []election.NodeID{3, 1, 2} {
		if net.Armed(id, variabletime.TimerSlot) {
			t.Fatalf("node %d still waits for its slot after 4's token passed", id)
		}
	}
}

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
