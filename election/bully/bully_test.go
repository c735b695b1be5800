package bully

import (
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// --- majority --------------------------------------------------------------

// machine builds one machine directly, to feed it events by hand.
func machineFor(t *testing.T, id election.NodeID, n int, d election.Durable) election.Machine {
	t.Helper()
	var members []election.NodeID
	for i := 1; i <= n; i++ {
		members = append(members, election.NodeID(i))
	}
	m, err := election.New("bully", election.Config{ID: id, Members: members, Quorum: election.Majority, Rand: rand.New(rand.NewPCG(1, 2)), Durable: d})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func votes(effs []election.Effect) []election.Message {
	var out []election.Message
	for _, e := range effs {
		if e.Kind == election.EffectSend && e.Msg.Type == TypeVote {
			out = append(out, e.Msg)
		}
	}
	return out
}

func request(from election.NodeID, epoch uint64) election.Event {
	return election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeElection, From: from, Epoch: epoch, Seq: 1, Candidate: from}}
}

func TestQuorumVoterNeverVotesTwiceInOneEpoch(t *testing.T) {
	m := machineFor(t, 1, 5, election.Durable{})
	m.Step(election.Event{Kind: election.EventStart})
	effs := m.Step(request(3, 7))
	v := votes(effs)
	if len(v) != 1 || v[0].To != 3 || v[0].Epoch != 7 {
		t.Fatalf("a fresh voter should grant node 3 epoch 7, sent %v", v)
	}
	persisted := -1
	for i, e := range effs {
		if e.Kind == election.EffectPersist {
			persisted = i
			if e.Durable.VotedEpoch != 7 || e.Durable.VotedFor != 3 {
				t.Fatalf("persisted %+v, want the vote for 3 in epoch 7", e.Durable)
			}
		}
		if e.Kind == election.EffectSend && e.Msg.Type == TypeVote && (persisted < 0 || persisted > i) {
			t.Fatal("the vote was sent before it was persisted")
		}
	}
	if v := votes(m.Step(request(4, 7))); len(v) != 0 {
		t.Fatalf("voted twice in epoch 7: %v", v)
	}

	// After a crash the durable vote binds the new incarnation.
	r := machineFor(t, 1, 5, election.Durable{Epoch: 7, VotedEpoch: 7, VotedFor: 3})
	r.Step(election.Event{Kind: election.EventStart})
	if v := votes(r.Step(request(4, 7))); len(v) != 0 {
		t.Fatalf("after a restart, voted for 4 in epoch 7 already given to 3: %v", v)
	}
	if v := votes(r.Step(request(5, 6))); len(v) != 0 {
		t.Fatalf("after a restart, voted in stale epoch 6: %v", v)
	}
	// A restarted voter may have acknowledged a leader just before it
	// crashed: a new epoch's vote waits for the barrier.
	if v := votes(r.Step(request(4, 8))); len(v) != 0 {
		t.Fatalf("a restarted voter voted at once, inside its barrier: %v", v)
	}
	v = votes(r.Step(election.Event{Kind: election.EventTimer, Timer: timerSuspect}))
	if len(v) != 1 || v[0].To != 4 || v[0].Epoch != 8 {
		t.Fatalf("after the barrier the promised vote for 4 in epoch 8 should leave, sent %v", v)
	}
}

func TestQuorumVoterRefusesWhileHearingHigherLiveLeader(t *testing.T) {
	m := machineFor(t, 1, 5, election.Durable{})
	m.Step(election.Event{Kind: election.EventStart})
	m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeCoordinator, From: 4, Epoch: 2, Seq: 1}})
	if v := m.View(); v.Leader != 4 || v.Role != election.Follower {
		t.Fatalf("node 1 should follow 4, has %v", v)
	}
	if v := votes(m.Step(request(3, 3))); len(v) != 0 {
		t.Fatalf("voted for 3 while its live leader 4 outranks it: %v", v)
	}
	// A higher candidate gets a promise, and the vote once the barrier
	// (a suspicion timeout after the last acknowledgement) has passed.
	if v := votes(m.Step(request(5, 3))); len(v) != 0 {
		t.Fatalf("voted for 5 inside the barrier: %v", v)
	}
	if v := m.View(); v.Role == election.Follower {
		t.Fatalf("node 1 still follows 4 after promising its vote to 5: %v", v)
	}
	v := votes(m.Step(election.Event{Kind: election.EventTimer, Timer: timerSuspect}))
	if len(v) != 1 || v[0].To != 5 {
		t.Fatalf("the promised vote for 5 did not leave after the barrier: %v", v)
	}
}

func TestQuorumStaleEpochMessageIgnored(t *testing.T) {
	m := machineFor(t, 1, 3, election.Durable{})
	m.Step(election.Event{Kind: election.EventStart})
	m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeCoordinator, From: 2, Epoch: 5, Seq: 1}})
	before := m.View()
	effs := m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeHeartbeat, From: 3, Epoch: 4, Seq: 9}})
	for _, e := range effs {
		if e.Kind == election.EffectSend || e.Kind == election.EffectView {
			t.Fatalf("a stale heartbeat (epoch 4 < 5) caused %v", e)
		}
	}
	if m.View() != before {
		t.Fatalf("view changed from %v to %v", before, m.View())
	}
}
