package bully

import (
	"reflect"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func receive(msg election.Message) election.Event {
	return election.Event{Kind: election.EventReceive, Msg: msg}
}

func prevote(from election.NodeID, epoch uint64) election.Event {
	return receive(election.Message{Type: TypePrevote, From: from, Epoch: epoch, Seq: 1, Candidate: from})
}

func claim(typ string, from election.NodeID, epoch, round uint64) election.Event {
	return receive(election.Message{Type: typ, From: from, Epoch: epoch, Seq: round})
}

// sends lists the messages among effs, broadcasts included.
func sends(effs []election.Effect) []election.Message {
	var out []election.Message
	for _, e := range effs {
		if e.Kind == election.EffectSend || e.Kind == election.EffectBroadcast {
			out = append(out, e.Msg)
		}
	}
	return out
}

// TestQuorumPrevoteVoterChangesNoState: answering a PREVOTE is a
// question about the voter, not an act of it. Two copies of one follower
// see the same events, one with PREVOTEs mixed in; the PREVOTEs get one
// answer each and nothing else, and from then on the two copies do exactly
// the same things, down to the epoch they campaign for themselves.
func TestQuorumPrevoteVoterChangesNoState(t *testing.T) {
	asked := machineFor(t, 2, 5, election.Durable{})
	twin := machineFor(t, 2, 5, election.Durable{})
	both := func(ev election.Event) ([]election.Effect, []election.Effect) {
		return asked.Step(ev), twin.Step(ev)
	}
	both(election.Event{Kind: election.EventStart})
	both(claim(TypeCoordinator, 4, 3, 1)) // node 2 follows 4 in epoch 3

	for _, c := range []struct {
		what  string
		ev    election.Event
		grant bool
		epoch uint64 // in the answer
	}{
		{"5 outranks the leader 4, epoch 4 is new", prevote(5, 4), true, 4},
		{"3 is outranked by the live leader 4", prevote(3, 4), false, 3},
		{"a huge proposal from 3, still outranked", prevote(3, 1000), false, 3},
		{"epoch 3 is already committed", prevote(5, 3), false, 3},
		{"a huge proposal from 5", prevote(5, 1000), true, 1000},
	} {
		before := asked.View()
		effs := asked.Step(c.ev)
		if len(effs) != 1 || effs[0].Kind != election.EffectSend {
			t.Fatalf("%s: a PREVOTE caused %v, want one answer and nothing else (no view, timer or persist)", c.what, effs)
		}
		ans := effs[0].Msg
		want := election.Message{Type: TypePrevoteAck, To: c.ev.Msg.From, From: 2, Epoch: c.epoch, Seq: 1}
		if c.grant {
			want.Candidate = c.ev.Msg.From
		}
		if !reflect.DeepEqual(ans, want) {
			t.Fatalf("%s: answered %+v, want %+v", c.what, ans, want)
		}
		if asked.View() != before {
			t.Fatalf("%s: the view changed from %v to %v", c.what, before, asked.View())
		}
	}

	// The two copies now act alike: the leader's heartbeat, the leader
	// falling silent, the campaign it starts (its PREVOTE proposes 4,
	// not 1001), and a vote request.
	for _, ev := range []election.Event{
		claim(TypeHeartbeat, 4, 3, 2),
		{Kind: election.EventTimer, Timer: timerSuspect},
		{Kind: election.EventTimer, Timer: timerAnswer},
		request(5, 4),
		{Kind: election.EventTimer, Timer: timerSuspect},
	} {
		a, b := both(ev)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("after PREVOTEs, %v made the asked node do %v and its twin %v", ev, a, b)
		}
		for _, m := range sends(a) {
			if m.Type == TypePrevote && m.Epoch != 4 {
				t.Fatalf("the asked node proposes epoch %d for itself, want 4: a PREVOTE's epoch is not an epoch anyone took", m.Epoch)
			}
		}
	}
}

func TestQuorumSingleNodeWinsAtOnce(t *testing.T) {
	m := machineFor(t, 1, 1, election.Durable{})
	m.Step(election.Event{Kind: election.EventStart})
	if v := m.View(); v.Leader != 1 || v.Role != election.Leader || v.Epoch != 1 {
		t.Fatalf("a one-node cluster should lead in epoch 1 at start, views %v", v)
	}
}
