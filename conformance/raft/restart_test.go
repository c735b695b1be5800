package raft_test

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// agreedLeader is the leader every live node views, when they agree on a
// live one that holds role leader.
func agreedLeader(st chaos.State) (election.NodeID, bool) {
	l := st.CommonLeader(five)
	if l == election.None || !st.Live(l) || st.Views[l].Role != election.Leader {
		return election.None, false
	}
	for _, id := range five {
		if st.Live(id) && st.Views[id].Leader != l {
			return election.None, false
		}
	}
	return l, true
}

// TestRestartRejoinsFromDurableState keeps node 1 down while the others
// elect a hundred leaders (killing each in turn and bringing it back), so
// that every log is compacted far past what node 1 holds; node 1 then
// restarts from its durable blob with its term and vote, and must rejoin
// through a snapshot from the leader, without raft panicking on a lost
// log. The same holds for every node that was killed and restarted on the
// way.
func TestRestartRejoinsFromDurableState(t *testing.T) {
	sm, err := sim.New(sim.Options{Algorithm: "raft", Members: five, Seed: 11}, nil)
	must(t, err)
	bound := check.DefaultLivenessBound(sm.Timing())
	sm.Start()
	if !sm.RunUntil(bound, func(st chaos.State) bool { _, ok := agreedLeader(st); return ok }) {
		t.Fatalf("no first leader: %s", sm.State().Describe(five))
	}
	first, _ := agreedLeader(sm.State())
	down := election.NodeID(1)
	if first == down {
		down = 2
	}
	downEpoch := sm.State().Views[down].Epoch
	must(t, sm.Kill(down))
	for i := range 100 {
		old, _ := agreedLeader(sm.State())
		must(t, sm.Kill(old))
		if !sm.RunUntil(bound, func(st chaos.State) bool { l, ok := agreedLeader(st); return ok && l != old }) {
			t.Fatalf("round %d: leader %d killed, no successor: %s", i, old, sm.State().Describe(five))
		}
		must(t, sm.Restart(old))
		if !sm.RunUntil(bound, func(st chaos.State) bool { return st.Views[old].Leader != election.None }) {
			t.Fatalf("round %d: restarted %d never learns a leader: %s", i, old, sm.State().Describe(five))
		}
	}
	must(t, sm.Restart(down))
	if got := sm.State().Views[down].Epoch; got < downEpoch {
		t.Fatalf("node %d restarted in epoch %d, below the %d it had persisted", down, got, downEpoch)
	}
	if !sm.RunUntil(bound, func(st chaos.State) bool {
		_, ok := agreedLeader(st)
		return ok && st.Live(down) && st.Views[down].Leader != election.None
	}) {
		t.Fatalf("node %d restarted after 100 elections: no agreement: %s", down, sm.State().Describe(five))
	}
	if err := sm.Err(); err != nil {
		t.Fatal(err)
	}
	sm.RunFor(2 * time.Second)
	if _, ok := agreedLeader(sm.State()); !ok {
		t.Fatalf("agreement did not last: %s", sm.State().Describe(five))
	}
	if snaps := sm.Counts().ByType["MsgSnap"]; snaps == 0 {
		t.Fatalf("no leader sent a snapshot: the logs were never compacted past node %d (by type %v)", down, sm.Counts().ByType)
	}
}
