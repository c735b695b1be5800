package ringnet_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/changroberts"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

func node(t *testing.T, id election.NodeID, members ...election.NodeID) election.Machine {
	t.Helper()
	m, err := election.New("changroberts", election.Config{ID: id, Members: members, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func find(effects []election.Effect, kind election.EffectKind, match func(election.Effect) bool) *election.Effect {
	for i := range effects {
		if effects[i].Kind == kind && (match == nil || match(effects[i])) {
			return &effects[i]
		}
	}
	return nil
}

func TestStartWaitsOneSuspicionTimeoutBeforeElecting(t *testing.T) {
	m := node(t, 2, 1, 2, 3)
	out := m.Step(election.Event{Kind: election.EventStart})
	if find(out, election.EffectSend, nil) != nil {
		t.Fatal("a node sent a message on start; it must first wait for a heartbeat")
	}
	tm := find(out, election.EffectSetTimer, func(e election.Effect) bool { return e.Timer == ringnet.TimerSuspect })
	if tm == nil || tm.After != election.DefaultTiming.Suspicion {
		t.Fatalf("start armed %+v, want the suspicion timer at %v", tm, election.DefaultTiming.Suspicion)
	}
	if v := m.View(); v.Role != election.Undecided || v.Epoch != 0 {
		t.Fatalf("view after start %v, want undecided in epoch 0", v)
	}
}

func TestEveryHopIsAcknowledgedAndAMissingAckSkipsTheSuccessor(t *testing.T) {
	m := node(t, 2, 1, 2, 3, 4)
	m.Step(election.Event{Kind: election.EventStart})
	out := m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect})
	first := find(out, election.EffectSend, nil)
	if first == nil || first.Msg.To != 3 || first.Msg.Seq == 0 || first.Msg.Epoch != 1 {
		t.Fatalf("first hop %+v, want a numbered epoch-1 message to successor 3", first)
	}
	ack := find(out, election.EffectSetTimer, func(e election.Effect) bool { return e.After == election.DefaultTiming.Answer })
	if ack == nil {
		t.Fatal("no acknowledgement timer armed for the hop")
	}
	// No ACK: the timer fires and the message goes to 4 instead.
	out = m.Step(election.Event{Kind: election.EventTimer, Timer: ack.Timer})
	again := find(out, election.EffectSend, nil)
	if again == nil || again.Msg.To != 4 || again.Msg.Candidate != first.Msg.Candidate {
		t.Fatalf("after the ack timeout sent %+v, want the same ELECTION to 4", again)
	}
	// 4 acknowledges: its timer is cancelled.
	ack2 := find(out, election.EffectSetTimer, nil)
	out = m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: ringnet.TypeAck, From: 4, To: 2, Epoch: 1, Seq: again.Msg.Seq}})
	if find(out, election.EffectCancelTimer, func(e election.Effect) bool { return e.Timer == ack2.Timer }) == nil {
		t.Fatalf("ACK from 4 did not cancel %s: %+v", ack2.Timer, out)
	}
}

func TestReceiverAcknowledgesEvenStaleHops(t *testing.T) {
	m := node(t, 3, 1, 2, 3)
	m.Step(election.Event{Kind: election.EventStart})
	m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect})
	m.Step(election.Event{Kind: election.EventTimer, Timer: ringnet.TimerSuspect}) // epoch 2
	stale := election.Message{Type: "ELECTION", From: 2, To: 3, Epoch: 1, Seq: 9, Candidate: 2}
	out := m.Step(election.Event{Kind: election.EventReceive, Msg: stale})
	if a := find(out, election.EffectSend, nil); a == nil || a.Msg.Type != ringnet.TypeAck || a.Msg.To != 2 || a.Msg.Seq != 9 {
		t.Fatalf("stale hop answered with %+v, want ACK seq 9 to 2", a)
	}
	if len(out) != 1 || m.View().Epoch != 2 {
		t.Fatalf("stale hop changed state: effects %+v view %v", out, m.View())
	}
}

func TestHeartbeatFromLowerLeaderMakesHigherNodeCallAnElection(t *testing.T) {
	m := node(t, 5, 1, 5, 3)
	m.Step(election.Event{Kind: election.EventStart})
	out := m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: ringnet.TypeHeartbeat, From: 3, To: 5, Epoch: 4, Candidate: 3}})
	if v := m.View(); v.Role != election.Candidate || v.Epoch != 5 {
		t.Fatalf("view %v, want candidate in epoch 5 (above the lower leader's 4)", v)
	}
	if s := find(out, election.EffectSend, nil); s == nil || s.Msg.Epoch != 5 || s.Msg.Candidate != 5 {
		t.Fatalf("sent %+v, want ELECTION for 5 in epoch 5", s)
	}
	// A heartbeat from a higher leader is followed.
	m2 := node(t, 1, 1, 5, 3)
	m2.Step(election.Event{Kind: election.EventStart})
	m2.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: ringnet.TypeHeartbeat, From: 5, To: 1, Epoch: 4, Candidate: 5}})
	if v := m2.View(); v.Role != election.Follower || v.Leader != 5 || v.Epoch != 4 {
		t.Fatalf("view %v, want follower of 5 in epoch 4", v)
	}
}

func TestArrangementsArePermutations(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64, 1000} {
		for name, ids := range map[string][]election.NodeID{
			"increasing": ringnet.Increasing(n), "decreasing": ringnet.Decreasing(n),
			"bit-reversed": ringnet.BitReversed(n), "shuffled": ringnet.Shuffled(n, rand.New(rand.NewPCG(1, 2))),
		} {
			seen := make([]bool, n+1)
			for _, id := range ids {
				if id < 1 || int(id) > n || seen[id] {
					t.Fatalf("%s(%d) is not a permutation of 1..n: %v", name, n, ids)
				}
				seen[id] = true
			}
		}
	}
}
