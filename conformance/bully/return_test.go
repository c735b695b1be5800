package bully_test

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// These tests cut one node of a five-node majority cluster off for ten
// seconds of virtual time and let it back in. They are the three promises
// of the pre-vote and the hand-over (docs/bully.md, "Pre-vote" and
// "Hand-over"):
//
//   - cut off, a node asks whether it could win and, hearing nobody, never
//     takes a newer epoch, so it has none to push on the others when it
//     returns;
//   - a returning node that is not the highest finds the majority's leader
//     and follows it: nobody in the majority notices;
//   - a returning highest node takes over as fast as in plain Bully,
//     because the old leader hands its followers over instead of making
//     them wait out their vote barriers (a suspicion timeout).

// isolation is one run: a cluster settles, node cut is cut off from the
// others for away, and the network heals.
type isolation struct {
	quorum election.QuorumMode
	cut    election.NodeID
	away   time.Duration
	seed   int64
}

// isolated is what the run left: the simulator (stopped just after the
// heal), its history, and when the cut and the heal happened.
type isolated struct {
	s         *sim.Sim
	mem       *history.Memory
	cutAt     time.Duration
	healAt    time.Duration
	lastEpoch uint64 // the highest epoch in any message the cut node sent before the cut
}

func (c isolation) run(t *testing.T) isolated {
	t.Helper()
	mem := &history.Memory{}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(5), Quorum: c.quorum, Seed: c.seed}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(2 * time.Second)
	for id := election.NodeID(1); id <= 5; id++ {
		if v := s.View(id); v.Leader != 5 {
			t.Fatalf("%s: before the cut node %d views %v, want leader 5", c.quorum, id, v)
		}
	}
	r := isolated{s: s, mem: mem, cutAt: s.Now()}
	for _, e := range r.sent(c.cut, 0, r.cutAt) {
		r.lastEpoch = max(r.lastEpoch, e.Epoch)
	}
	var rest []election.NodeID
	for id := election.NodeID(1); id <= 5; id++ {
		if id != c.cut {
			rest = append(rest, id)
		}
	}
	if err := s.Partition([]election.NodeID{c.cut}, rest); err != nil {
		t.Fatal(err)
	}
	s.RunFor(c.away)
	if err := s.Heal(); err != nil {
		t.Fatal(err)
	}
	r.healAt = s.Now()
	return r
}

// sent lists the messages node id sent in [from, to).
func (r isolated) sent(id election.NodeID, from, to time.Duration) []election.Message {
	var out []election.Message
	for _, rec := range r.mem.Records() {
		at := rec.Time.Sub(history.SimOrigin)
		if rec.Kind == history.KindSend && rec.Node == id && at >= from && at < to {
			out = append(out, *rec.Msg)
		}
	}
	return out
}

// allOn runs until every node views leader and leader holds role leader,
// and returns how long that took; it fails the test after limit.
func (r isolated) allOn(t *testing.T, leader election.NodeID, limit time.Duration) time.Duration {
	t.Helper()
	start := r.s.Now()
	ok := r.s.RunUntil(limit, func(st chaos.State) bool {
		for id, v := range st.Views {
			if v.Leader != leader || (id == leader && v.Role != election.Leader) {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("not every node views %d within %v of the heal: %v", leader, limit, r.s.State().Views)
	}
	return r.s.Now() - start
}

func TestQuorumIsolatedNodeDoesNotRaiseItsEpoch(t *testing.T) {
	r := isolation{quorum: election.Majority, cut: 5, away: 10 * time.Second, seed: 1}.run(t)
	// While cut off, 5 only proposes the next epoch and commits to none.
	durable := r.s.Durable(5).Epoch
	away := r.sent(5, r.cutAt, r.healAt)
	prevotes := 0
	for _, m := range away {
		if m.Epoch > r.lastEpoch+1 {
			t.Fatalf("cut off, node 5 sent %s in epoch %d; it led in %d and may only propose %d", m.Type, m.Epoch, r.lastEpoch, r.lastEpoch+1)
		}
		if m.Type == bully.TypePrevote {
			prevotes++
		}
		if m.Type == bully.TypeElection {
			t.Fatalf("cut off, node 5 asked for votes (%+v): no majority ever said it would grant them", m)
		}
	}
	if prevotes == 0 {
		t.Fatalf("cut off for 10 s, node 5 never asked whether it could win (sent %d messages)", len(away))
	}
	if durable > r.lastEpoch {
		t.Fatalf("cut off, node 5 persisted epoch %d, above the %d it led in", durable, r.lastEpoch)
	}
	// After the heal it takes over in the epoch after the one the
	// majority's leader (4) took meanwhile: two above its own.
	r.allOn(t, 5, 5*time.Second)
	r.s.RunFor(2 * time.Second)
	highest := uint64(0)
	for _, m := range r.sent(5, r.cutAt, r.s.Now()) {
		highest = max(highest, m.Epoch)
	}
	if highest > r.lastEpoch+2 {
		t.Fatalf("over the isolation and the heal node 5's epoch rose from %d to %d, want at most 2", r.lastEpoch, highest)
	}
	t.Logf("node 5 led in epoch %d; cut off for 10 s it sent %d PREVOTEs, all in epoch ≤ %d; after the heal it leads in %d", r.lastEpoch, prevotes, r.lastEpoch+1, highest)
}

func TestQuorumReturningHighestNodeTakesOverWithoutWaitingForBarriers(t *testing.T) {
	// The heal lands at ten points of the majority leader's heartbeat
	// cycle: the returning node hears the leader's next heartbeat, asks
	// at once, and the leader hands its followers over. Nothing waits for
	// a suspicion timeout, so the bound is one heartbeat interval plus a
	// handful of message delays (1 ms each).
	timing := election.DefaultTiming
	bound := timing.Heartbeat + 10*time.Millisecond
	mean := map[election.QuorumMode]time.Duration{}
	each := map[election.QuorumMode][]time.Duration{}
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		var sum time.Duration
		for k := range 10 {
			away := 10*time.Second + time.Duration(k)*timing.Heartbeat/10
			r := isolation{quorum: q, cut: 5, away: away, seed: int64(k + 1)}.run(t)
			if v := r.s.View(1); v.Leader != 4 {
				t.Fatalf("%s, heal %d: while 5 was away node 1 views %v, want 4", q, k, v)
			}
			took := r.allOn(t, 5, 5*time.Second)
			if q == election.Majority && took > bound {
				t.Errorf("%s, heal %d: every node views 5 after %v, want at most %v (a heartbeat and a few messages)", q, k, took, bound)
			}
			sum += took
			each[q] = append(each[q], took.Round(time.Millisecond))
		}
		mean[q] = sum / 10
	}
	t.Logf("returning highest node, all on 5 after the heal: plain mean %v %v, majority mean %v %v (Suspicion %v)",
		mean[election.NoQuorum].Round(time.Millisecond), each[election.NoQuorum], mean[election.Majority].Round(time.Millisecond), each[election.Majority], timing.Suspicion)
	if mean[election.Majority] > mean[election.NoQuorum]+10*time.Millisecond {
		t.Errorf("majority mode takes %v on average, plain %v: the returning node should take over about as fast", mean[election.Majority], mean[election.NoQuorum])
	}
}

func TestQuorumReturningLowerNodeDoesNotDisrupt(t *testing.T) {
	for _, cut := range []election.NodeID{1, 4} {
		r := isolation{quorum: election.Majority, cut: cut, away: 10 * time.Second, seed: 1}.run(t)
		r.s.RunFor(3 * time.Second)
		for id := election.NodeID(1); id <= 5; id++ {
			if v := r.s.View(id); v.Leader != 5 {
				t.Fatalf("node %d came back: node %d views %v, want 5", cut, id, v)
			}
		}
		// Neither the cut nor the return changed any view of the
		// majority: 5 kept its lease and everyone else followed it.
		for _, rec := range r.mem.Records() {
			at := rec.Time.Sub(history.SimOrigin)
			if rec.Kind == history.KindView && rec.Node != cut && at >= r.cutAt {
				t.Errorf("node %d away and back: node %d's view changed to %v at %v (cut at %v, heal at %v)", cut, rec.Node, *rec.View, at, r.cutAt, r.healAt)
			}
		}
		if e := r.s.View(cut).Epoch; e != r.lastEpoch {
			t.Errorf("node %d came back in epoch %d, want the leader's unchanged %d", cut, e, r.lastEpoch)
		}
	}
}
