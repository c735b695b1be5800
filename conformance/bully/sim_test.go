package bully_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// failover runs a plain n-node cluster to its first leader (n), then makes
// only detector notice n's death first: it cuts n→detector right after a
// heartbeat, and kills n just before detector's suspicion timeout runs out,
// when every other follower heard n a heartbeat ago and still trusts it for
// most of a suspicion timeout. It returns the messages sent from the kill
// until the cluster is quiet, and the final state.
func failover(t *testing.T, n int, detector election.NodeID) (sim.Counts, chaos.State) {
	t.Helper()
	timing := election.DefaultTiming
	// No failure hints: the analysis counts the messages of one detector
	// noticing first by its own timer, which a hint to every survivor at
	// once would preempt.
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(n), Timing: timing, Seed: 1, Hints: sim.Hints{Off: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	// The leader n leads from t=0 and sends a HEARTBEAT every 100 ms; at
	// 1 s one has just left, and it arrives 1 ms later.
	s.RunFor(time.Second + 2*time.Millisecond)
	leader := election.NodeID(n)
	if v := s.View(1); v.Leader != leader {
		t.Fatalf("n=%d: node 1 follows %v, want %d", n, v, leader)
	}
	if err := s.Cut(leader, detector); err != nil {
		t.Fatal(err)
	}
	// detector last heard n at 1.001 s and suspects at 1.501 s; the
	// others heard the 1.4 s heartbeat and would suspect at 1.901 s.
	s.RunFor(timing.Suspicion - 4*time.Millisecond)
	before := s.Counts()
	if err := s.Kill(leader); err != nil {
		t.Fatal(err)
	}
	if err := s.Heal(); err != nil {
		t.Fatal(err)
	}
	// RunUntilQuiet would return at once: a kill is not election
	// traffic. Three seconds hold every timeout this protocol has.
	s.RunFor(3 * time.Second)
	after := s.Counts()
	d := sim.Counts{ByType: map[string]int{}}
	for k, v := range after.ByType {
		if dv := v - before.ByType[k]; dv != 0 {
			d.ByType[k] = dv
		}
	}
	d.Election, d.Announce = after.Election-before.Election, after.Announce-before.Announce
	return d, s.State()
}

// TestBullyFailoverCountsLowestAndSecondHighestDetector checks the worst
// and best cases of the Bully analysis after the leader n crashes. Counting
// convention: every message sent counts, including the ELECTIONs addressed
// to the dead leader (the sender paid for them); heartbeats are not counted.
//
// Worst case, node 1 notices first: every live node i < n sends ELECTION to
// each higher ID (n(n−1)/2, n−1 of them to the dead n), every live j answers
// OK to each lower live ID ((n−1)(n−2)/2), and n−1 announces to the n−2
// lower IDs.
//
// Best case, node n−1 notices first: one ELECTION (to the dead n), no OK,
// n−2 COORDINATORs.
func TestBullyFailoverCountsLowestAndSecondHighestDetector(t *testing.T) {
	for _, n := range []int{5, 10} {
		for _, c := range []struct {
			name     string
			detector election.NodeID
			election int
			ok       int
		}{
			{"lowest-detects", 1, n * (n - 1) / 2, (n - 1) * (n - 2) / 2},
			{"second-highest-detects", election.NodeID(n - 1), 1, 0},
		} {
			t.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(t *testing.T) {
				got, st := failover(t, n, c.detector)
				want := map[string]int{bully.TypeElection: c.election, bully.TypeCoordinator: n - 2}
				if c.ok > 0 {
					want[bully.TypeOK] = c.ok
				}
				for _, typ := range []string{bully.TypeElection, bully.TypeOK, bully.TypeCoordinator} {
					if got.ByType[typ] != want[typ] {
						t.Errorf("%s: %d, want %d (all: %v)", typ, got.ByType[typ], want[typ], got.ByType)
					}
				}
				next := election.NodeID(n - 1)
				for id := election.NodeID(1); id < election.NodeID(n); id++ {
					if v := st.Views[id]; v.Leader != next {
						t.Errorf("node %d views %v, want leader %d", id, v, next)
					}
				}
			})
		}
	}
}

// TestBullyFirstElectionCountsInSim checks the fault-free counts of both
// modes in the simulator against PlainCount and QuorumCount.
func TestBullyFirstElectionCountsInSim(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		for _, n := range []int{3, 5, 10} {
			s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(n), Quorum: q, Seed: 3}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Start()
			if !s.RunUntilQuiet(10 * time.Second) {
				t.Fatalf("%q n=%d: no quiet", q, n)
			}
			want := bully.PlainCount(n)
			if q == election.Majority {
				want = bully.QuorumCount(n)
			}
			if c := s.Counts(); c.Election != want {
				t.Errorf("%q n=%d: %d election messages (%v), want %d", q, n, c.Election, c.ByType, want)
			}
			if v := s.View(1); v.Leader != election.NodeID(n) {
				t.Errorf("%q n=%d: node 1 views %v, want leader %d", q, n, v, n)
			}
		}
	}
}

// TestQuorumLeaseNotGrantedByAcksThatOutlivedIt freezes the winner of a
// majority election before its first round's acknowledgements arrive. They
// queue, and on thaw they must not make it leader: the lease they would
// grant ran out while it was frozen.
func TestQuorumLeaseNotGrantedByAcksThatOutlivedIt(t *testing.T) {
	mem := &history.Memory{}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(5), Quorum: election.Majority, Timing: election.DefaultTiming, Seed: 3}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	// Node 1 follows 5 the instant 5's COORDINATOR arrives, before 5
	// has counted the acknowledgements that make it leader.
	if !s.RunUntil(5*time.Second, func(st chaos.State) bool { return st.Views[1].Leader == 5 }) {
		t.Fatalf("no coordinator: node 1 views %v", s.View(1))
	}
	if v := s.View(5); v.Role == election.Leader {
		t.Fatalf("precondition: 5 already holds a lease (%v)", v)
	}
	if err := s.Pause(5); err != nil {
		t.Fatal(err)
	}
	s.RunFor(3 * time.Second)
	thaw := s.Time()
	if err := s.Resume(5); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Millisecond / 2) // less than a message delay: only what was queued
	for _, r := range mem.Records() {
		if r.Node == 5 && !r.Time.Before(thaw) && r.Kind == history.KindView && r.View.Role == election.Leader {
			t.Fatalf("node 5 took the lead on thaw at %v from acknowledgements that outlived their lease", r.Time.Sub(thaw))
		}
	}
}

// TestQuorumThawedLeaderStepsDownBeforeActing pauses a majority leader far
// past its lease while the others elect a new one, then thaws it. Every
// overdue timer of the frozen node fires at once on thaw, the heartbeat
// timer's first; the stale leader must step down before it sends anything,
// so its first record after the thaw is the view that gives leadership up.
func TestQuorumThawedLeaderStepsDownBeforeActing(t *testing.T) {
	mem := &history.Memory{}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(5), Quorum: election.Majority, Timing: election.DefaultTiming, Seed: 3}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.RunUntil(5*time.Second, func(st chaos.State) bool { return st.Views[5].Role == election.Leader }) {
		t.Fatalf("no first leader with a lease: node 5 views %v", s.View(5))
	}
	if err := s.Pause(5); err != nil {
		t.Fatal(err)
	}
	if !s.RunUntil(5*time.Second, func(st chaos.State) bool { return st.Views[1].Leader == 4 && st.Views[1].Role == election.Follower }) {
		t.Fatalf("no new leader while 5 was frozen: node 1 views %v", s.View(1))
	}
	s.RunFor(time.Second)
	thaw := s.Time()
	if err := s.Resume(5); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	var first *history.Record
	for _, r := range mem.Records() {
		if r.Node == 5 && !r.Time.Before(thaw) && (r.Kind == history.KindSend || r.Kind == history.KindView) {
			first = &r
			break
		}
	}
	if first == nil {
		t.Fatal("node 5 did nothing after it thawed")
	}
	if first.Kind != history.KindView || first.View.Role == election.Leader {
		t.Fatalf("node 5's first act after thawing with an expired lease was %s %+v %+v, want a view giving up leadership", first.Kind, first.Msg, first.View)
	}
}

// TestKilledLeaderIsReplacedOnTheRuntimesHintAPausedOneAfterSuspicion: the
// simulator models the node runtime's failure hints (sim.DefaultHints), so
// a killed leader's peers, told by its closing routes, elect within tens of
// milliseconds of virtual time, as in containers; a paused leader closes
// nothing, and is replaced only after the suspicion timeout.
func TestKilledLeaderIsReplacedOnTheRuntimesHintAPausedOneAfterSuspicion(t *testing.T) {
	timing := election.Timing{}.WithDefaults()
	for _, c := range []struct {
		fault       chaos.Op
		least, most time.Duration
	}{
		{chaos.Kill, 0, 100 * time.Millisecond},
		{chaos.Pause, timing.Suspicion, 3 * timing.Suspicion},
	} {
		s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(5), Seed: 7}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		s.RunFor(2 * time.Second)
		if err := s.Apply(chaos.Fault{Op: c.fault, Nodes: []election.NodeID{5}}, ""); err != nil {
			t.Fatal(err)
		}
		at := s.Now()
		if !s.RunUntil(5*time.Second, func(st chaos.State) bool {
			for id := election.NodeID(1); id <= 4; id++ {
				if st.Views[id].Leader != 4 {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("%s of leader 5: nodes 1-4 never agreed on 4", c.fault)
		}
		if took := s.Now() - at; took < c.least || took > c.most {
			t.Errorf("%s of leader 5: 1-4 agreed on 4 after %v, want between %v and %v", c.fault, took, c.least, c.most)
		}
	}
}
