package bully

import (
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func release(from election.NodeID, epoch uint64) election.Event {
	return receive(election.Message{Type: TypeRelease, From: from, Epoch: epoch})
}

// follower4 returns node 1 of 5 following 4 in epoch 3, its barrier armed
// by that acknowledgement.
func follower4(t *testing.T) election.Machine {
	t.Helper()
	m := machineFor(t, 1, 5, election.Durable{})
	m.Step(election.Event{Kind: election.EventStart})
	m.Step(claim(TypeCoordinator, 4, 2, 1))
	m.Step(claim(TypeCoordinator, 4, 3, 1)) // 4 lost its lease and won epoch 3
	if v := m.View(); v.Leader != 4 || v.Epoch != 3 {
		t.Fatalf("node 1 should follow 4 in epoch 3, has %v", v)
	}
	return m
}

// TestQuorumReleaseSendsThePledgedVoteAtOnce: node 1 follows 4 and
// promised its vote to 5, to leave when its barrier passes. 4 steps down
// for 5 and says so: the barrier guarded only 4's lease, so the vote
// leaves now.
func TestQuorumReleaseSendsThePledgedVoteAtOnce(t *testing.T) {
	m := follower4(t)
	if v := votes(m.Step(request(5, 4))); len(v) != 0 {
		t.Fatalf("voted for 5 inside the barrier armed by 4's heartbeat: %v", v)
	}
	v := votes(m.Step(release(4, 3)))
	if len(v) != 1 || v[0].To != 5 || v[0].Epoch != 4 {
		t.Fatalf("after 4 released epoch 3, want the pledged vote for 5 in epoch 4, sent %v", v)
	}
	// The vote re-arms the barrier (it acknowledges 5): the promise is
	// kept once, not again when the timer fires.
	if v := votes(m.Step(election.Event{Kind: election.EventTimer, Timer: timerSuspect})); len(v) != 0 {
		t.Fatalf("the vote for 5 left a second time: %v", v)
	}
}

// TestQuorumReleasedFollowerBecomesUndecidedAndVotesAtOnce: the RELEASE
// arrives before the new candidate's request. The follower's leader is
// gone, so it shows no leader; it keeps a suspicion timeout to campaign
// itself, and grants the request without waiting.
func TestQuorumReleasedFollowerBecomesUndecidedAndVotesAtOnce(t *testing.T) {
	m := follower4(t)
	effs := m.Step(release(4, 3))
	if v := m.View(); v.Leader != election.None || v.Role != election.Undecided {
		t.Fatalf("after its leader 4 released epoch 3, node 1 views %v, want undecided", v)
	}
	rearmed := false
	for _, e := range effs {
		rearmed = rearmed || (e.Kind == election.EffectSetTimer && e.Timer == timerSuspect)
	}
	if !rearmed {
		t.Fatalf("the released follower set no suspicion timer, so it would never campaign: %v", effs)
	}
	v := votes(m.Step(request(5, 4)))
	if len(v) != 1 || v[0].To != 5 {
		t.Fatalf("a released follower should vote for 5 at once, sent %v", v)
	}
}

// TestQuorumStaleReleaseIsIgnored: a RELEASE names the leader and the
// epoch it gives up, and only the acknowledgement of exactly that term may
// be dropped. Node 1 acknowledged 4 in epoch 2 and then in epoch 3, and
// pledged to 5: a RELEASE of epoch 2 (late), of epoch 4 (never led), or
// from 3 (never acknowledged) must not let its vote out early; the RELEASE
// of epoch 3 does.
func TestQuorumStaleReleaseIsIgnored(t *testing.T) {
	m := follower4(t)
	m.Step(request(5, 4))
	for _, ev := range []election.Event{release(4, 2), release(4, 4), release(3, 3), release(2, 3)} {
		before := m.View()
		if effs := m.Step(ev); len(effs) != 0 {
			t.Fatalf("RELEASE %d from %d, not the term node 1 acknowledged last, caused %v", ev.Msg.Epoch, ev.Msg.From, effs)
		}
		if m.View() != before {
			t.Fatalf("a stale RELEASE changed the view to %v", m.View())
		}
	}
	if v := votes(m.Step(release(4, 3))); len(v) != 1 {
		t.Fatalf("the RELEASE of the acknowledged term should send the pledged vote, sent %v", v)
	}

	// A later acknowledgement re-arms the barrier: a follower that heard
	// 4 again in a newer epoch ignores the RELEASE of the old one.
	f := follower4(t)
	f.Step(claim(TypeHeartbeat, 4, 5, 1)) // 4 now leads epoch 5
	if effs := f.Step(release(4, 3)); len(effs) != 0 || f.View().Leader != 4 {
		t.Fatalf("a RELEASE of epoch 3 after acknowledging 4 in epoch 5 caused %v, view %v", effs, f.View())
	}
}
