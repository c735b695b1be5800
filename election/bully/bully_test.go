package bully

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

func ids(xs ...int) []election.NodeID {
	out := make([]election.NodeID, len(xs))
	for i, x := range xs {
		out[i] = election.NodeID(x)
	}
	return out
}

func TestBullyHighestIDWinsWithExactCounts(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10} {
		w := newNet(t, n, election.NoQuorum)
		w.start()
		w.run(time.Second)
		w.requireAgreed(election.NodeID(n), w.ids...)
		if got, want := w.counts[TypeElection]+w.counts[TypeOK], PlainCount(n); got != want {
			t.Errorf("n=%d: ELECTION+OK = %d (%v), want (n−1)² = %d", n, got, w.counts, want)
		}
		if got, want := w.counts[TypeCoordinator], 2*(n-1); got != want {
			t.Errorf("n=%d: COORDINATOR = %d, want 2(n−1) = %d (n−1 announcements and n−1 answers to ELECTIONs)", n, got, want)
		}
	}
}

func TestBullyRecoveredHigherNodeBulliesLowerLeader(t *testing.T) {
	w := newNet(t, 5, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.kill(5)
	w.run(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	old := w.view(4).Epoch
	w.boot(5)
	w.run(time.Second)
	w.requireAgreed(5, w.ids...)
	if e := w.view(1).Epoch; e <= old {
		t.Fatalf("the recovered leader's epoch %d is not above the replaced leader's %d", e, old)
	}
}

func TestBullyLowerCoordinatorIsBullied(t *testing.T) {
	// Node 2 was cut off alone, elected itself, and is heard again.
	w := newNet(t, 4, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.partition(ids(2), ids(1, 3, 4))
	w.run(2 * time.Second)
	if v := w.view(2); v.Role != election.Leader {
		t.Fatalf("isolated node 2 should lead itself without a quorum, has %v", v)
	}
	w.heal()
	w.run(2 * time.Second)
	w.requireAgreed(4, w.ids...)
}

func TestBullyOKWithoutCoordinatorRestartsElection(t *testing.T) {
	w := newNet(t, 3, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.run(2 * time.Millisecond) // nothing from 3 in flight
	w.resetCounts()
	w.kill(3)
	w.hint(1, 3)   // node 1 sends ELECTION to 2 and 3
	w.run(2500000) // 2.5 ms: node 2 has answered OK and started its election
	w.kill(2)      // ... and dies before it can announce
	if v := w.view(1); v.Role != election.Candidate {
		t.Fatalf("node 1 should wait for a COORDINATOR after the OK, has %v", v)
	}
	w.run(time.Second)
	w.requireAgreed(1, 1)
	var rounds []uint64
	for _, m := range w.sent {
		if m.From == 1 && m.Type == TypeElection && !slices.Contains(rounds, m.Seq) {
			rounds = append(rounds, m.Seq)
		}
	}
	if len(rounds) != 2 {
		t.Fatalf("node 1 ran %d election rounds (%v), want 2: the first stalled after the OK, the second won", len(rounds), rounds)
	}
}

func TestBullyPeerDownHintStartsElectionAtOnce(t *testing.T) {
	for _, n := range []int{5, 10} {
		w := newNet(t, n, election.NoQuorum)
		w.start()
		w.run(time.Second + 2*time.Millisecond) // the 1 s heartbeat has arrived
		w.resetCounts()
		w.kill(election.NodeID(n))
		w.hint(1, election.NodeID(n))
		// Well inside the others' suspicion timeout: only the hint
		// can have started this election.
		w.run(w.timing.Answer + 10*time.Millisecond)
		live := w.ids[:n-1]
		w.requireAgreed(election.NodeID(n-1), live...)
		want := map[string]int{TypeElection: n * (n - 1) / 2, TypeOK: (n - 1) * (n - 2) / 2, TypeCoordinator: n - 2}
		for typ, c := range want {
			if w.counts[typ] != c {
				t.Errorf("n=%d, node 1 hinted: %s = %d, want %d (all %v)", n, typ, w.counts[typ], c, w.counts)
			}
		}
	}
}

func TestBullyHintedHighestLiveTakesOverWithoutAnswerWait(t *testing.T) {
	w := newNet(t, 5, election.NoQuorum)
	w.start()
	w.run(time.Second + 2*time.Millisecond)
	w.requireAgreed(5, w.ids...)
	w.kill(5)
	w.hint(4, 5) // the runtime saw 5's inbox vanish
	// Node 4 has nobody higher alive: it must not sit out the answer
	// timeout waiting for an OK that cannot come.
	if v := w.view(4); v.Role != election.Leader || v.Leader != 4 {
		t.Fatalf("node 4, told its only higher peer is gone, should lead at once; has %v", v)
	}
	w.run(w.timing.Answer / 2)
	w.requireAgreed(4, 1, 2, 3, 4)
	// Once 5 is heard from again the hint is void, and 5 bullies.
	w.boot(5)
	w.run(time.Second)
	w.requireAgreed(5, w.ids...)
}

func TestQuorumWrongPeerDownHintKeepsLeader(t *testing.T) {
	w := newNet(t, 5, election.Majority)
	w.start()
	w.run(time.Second)
	w.requireAgreed(5, w.ids...)
	w.hint(1, 5) // wrong: 5 is alive
	w.run(2 * time.Second)
	w.requireAgreed(5, w.ids...)
	if iv := w.leaderIntervals()[5]; len(iv) != 1 {
		t.Fatalf("a wrong hint to one follower interrupted the leader: intervals %v", iv)
	}
}

func TestBullyStaleHeartbeatIsIgnored(t *testing.T) {
	w := newNet(t, 3, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.kill(3)
	w.run(2 * time.Second)
	w.requireAgreed(2, 1, 2)
	before := w.view(1)
	// A heartbeat from the old leader's term, delivered late.
	w.step(1, election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeHeartbeat, From: 3, To: 1, Epoch: before.Epoch - 1}})
	if v := w.view(1); v != before {
		t.Fatalf("a stale heartbeat (epoch %d < %d) changed node 1's view to %v", before.Epoch-1, before.Epoch, v)
	}
}

func TestBullySplitBrainWithoutQuorumHealsToHighest(t *testing.T) {
	w := newNet(t, 5, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.partition(ids(1, 2, 3), ids(4, 5))
	w.run(2 * time.Second)
	w.requireAgreed(3, 1, 2, 3)
	w.requireAgreed(5, 4, 5)
	w.heal()
	w.run(2 * time.Second)
	w.requireAgreed(5, w.ids...)
}

// --- majority --------------------------------------------------------------

func TestQuorumHighestIDWinsWithExactCounts(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10} {
		w := newNet(t, n, election.Majority)
		w.start()
		w.run(time.Second)
		w.requireAgreed(election.NodeID(n), w.ids...)
		got := w.counts[TypeElection] + w.counts[TypeOK] + w.counts[TypePrevote] + w.counts[TypePrevoteAck] + w.counts[TypeVote]
		if want := QuorumCount(n); got != want {
			t.Errorf("n=%d: ELECTION+OK+PREVOTE+PREVOTE_ACK+VOTE = %d (%v), want (n−1)(n+4) = %d", n, got, w.counts, want)
		}
		if w.counts[TypeRelease] != 0 {
			t.Errorf("n=%d: %d RELEASEs in a start where nobody led before", n, w.counts[TypeRelease])
		}
		if got := w.counts[TypeCoordinator]; got != n-1 {
			t.Errorf("n=%d: COORDINATOR = %d, want n−1", n, got)
		}
		if e := w.view(1).Epoch; e != 1 {
			t.Errorf("n=%d: first election ended in epoch %d, want 1", n, e)
		}
	}
}

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

func TestQuorumLeaderStepsDownWhenItCannotRenewLease(t *testing.T) {
	w := newNet(t, 5, election.Majority)
	w.start()
	w.run(time.Second)
	w.requireAgreed(5, w.ids...)
	cutAt := w.now
	w.partition(ids(5), ids(1, 2, 3, 4))
	w.run(Lease(w.timing) + w.timing.Heartbeat)
	if v := w.view(5); v.Role == election.Leader {
		t.Fatalf("node 5 still leads %v after losing its majority at %v", v, cutAt)
	}
	w.run(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	w.requireNoSplitBrain()
	w.requireEpochSafety()
	// The step-down came no later than a lease after the last round
	// that could have been acknowledged.
	iv := w.leaderIntervals()[5]
	if end := iv[len(iv)-1][1]; end > cutAt+Lease(w.timing) {
		t.Fatalf("node 5 stepped down at %v, more than a lease (%v) after the cut at %v", end, Lease(w.timing), cutAt)
	}
}

func TestQuorumMinoritySideNeverElects(t *testing.T) {
	w := newNet(t, 5, election.Majority)
	w.start()
	w.run(time.Second)
	cutAt := w.now
	w.partition(ids(4, 5), ids(1, 2, 3))
	w.run(5 * time.Second)
	w.requireAgreed(3, 1, 2, 3)
	for _, id := range ids(4, 5) {
		if v := w.view(id); v.Leader != election.None {
			t.Errorf("minority node %d views %v, want no leader", id, v)
		}
		for _, x := range w.leaderIntervals()[id] {
			if x[1] > cutAt+Lease(w.timing) {
				t.Fatalf("minority node %d led until %v, past the lease after the cut at %v", id, x[1], cutAt)
			}
		}
	}
	w.heal()
	w.run(3 * time.Second)
	w.requireAgreed(5, w.ids...)
	w.requireNoSplitBrain()
	w.requireEpochSafety()
}

func TestQuorumRecoveredHighestTakesOverWithoutOverlap(t *testing.T) {
	w := newNet(t, 5, election.Majority)
	w.start()
	w.run(time.Second)
	w.kill(5)
	w.run(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	w.boot(5)
	w.run(3 * time.Second)
	w.requireAgreed(5, w.ids...)
	w.requireNoSplitBrain()
	w.requireEpochSafety()
}

// TestQuorumRandomFaultsKeepSafety throws kills, restarts, partitions and
// heals at a majority cluster and checks the two safety properties over the
// whole run, then that the highest node leads after everything heals.
func TestQuorumRandomFaultsKeepSafety(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() {
		seeds = 10
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		w := newNet(t, 5, election.Majority)
		w.seed = seed
		w.jr = rand.New(rand.NewPCG(seed, 5))
		w.jitter = time.Duration(seed%4) * 20 * time.Millisecond
		r := rand.New(rand.NewPCG(seed, 99))
		w.start()
		for range 30 {
			w.run(time.Duration(r.IntN(600)) * time.Millisecond)
			id := election.NodeID(1 + r.IntN(5))
			switch r.IntN(5) {
			case 0:
				if w.nodes[id].up {
					w.kill(id)
				}
			case 1:
				if !w.nodes[id].up {
					w.boot(id)
				}
			case 2:
				perm := r.Perm(5)
				k := 1 + r.IntN(4)
				var a, b []election.NodeID
				for i, p := range perm {
					if i < k {
						a = append(a, election.NodeID(p+1))
					} else {
						b = append(b, election.NodeID(p+1))
					}
				}
				w.partition(a, b)
			case 3:
				w.cut[[2]election.NodeID{id, election.NodeID(1 + r.IntN(5))}] = true
			default:
				w.heal()
			}
		}
		w.heal()
		for _, id := range w.ids {
			if !w.nodes[id].up {
				w.boot(id)
			}
		}
		w.run(5 * time.Second)
		w.requireNoSplitBrain()
		w.requireEpochSafety()
		if !w.agreed(5, w.ids...) {
			t.Fatalf("seed %d: after healing, want every node to follow 5; views: %s", seed, w.describe())
		}
	}
}

func TestMachineIgnoresForeignAndMalformedMessages(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		w := newNet(t, 3, q)
		w.start()
		w.run(time.Second)
		before := w.view(1)
		for _, m := range []election.Message{
			{Type: "NONSENSE", From: 2, Epoch: 99},
			{Type: TypeCoordinator, From: 42, Epoch: 99},    // not a member
			{Type: TypeCoordinator, From: 1, Epoch: 99},     // from itself
			{Type: TypeCoordinator, From: -3, Epoch: 99},    // not an ID
			{Type: TypeVote, From: 2, Epoch: 99, Seq: 7},    // a vote nobody asked for
			{Type: TypeOK, From: 3, Seq: 12345},             // an answer to no probe
			{Type: TypeHeartbeatAck, From: 2, Seq: 1 << 40}, // an ack to no round
		} {
			w.step(1, election.Event{Kind: election.EventReceive, Msg: m})
			if v := w.view(1); v != before {
				t.Fatalf("quorum %q: %+v changed node 1's view from %v to %v", q, m, before, v)
			}
		}
		w.step(1, election.Event{Kind: election.EventTimer, Timer: "lease/not-a-number"})
		w.step(1, election.Event{Kind: election.EventTimer, Timer: "no-such-timer"})
		w.step(1, election.Event{Kind: election.EventPeerDown, Peer: 2}) // not the leader
		if v := w.view(1); v != before {
			t.Fatalf("quorum %q: stray timers or hints changed node 1's view to %v", q, v)
		}
	}
}

// TestPlainBullyFailsOverFromASilentLeaderAtTheSuspicionTimeout: a leader
// that goes silent (cut off, or frozen) is replaced one suspicion timeout
// after its last heartbeat, not that plus an answer timeout: a node that
// suspects its leader does not wait for an OK the leader has had a whole
// suspicion timeout to send, and neither does a node a lower one's probe
// drew into the election first. Jittered links make the nodes' suspicions
// fire in every order.
func TestPlainBullyFailsOverFromASilentLeaderAtTheSuspicionTimeout(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		w := newNet(t, 5, election.NoQuorum)
		w.seed = seed
		w.jr = rand.New(rand.NewPCG(seed, 11))
		w.jitter = 5 * time.Millisecond
		w.start()
		w.run(time.Second)
		w.requireAgreed(5, 1, 2, 3, 4, 5)
		w.partition([]election.NodeID{5}, []election.NodeID{1, 2, 3, 4})
		silent := w.now
		for !w.agreed(4, 1, 2, 3, 4) && w.now-silent < 5*time.Second {
			w.run(time.Millisecond)
		}
		w.requireAgreed(4, 1, 2, 3, 4)
		// The last heartbeat left up to one heartbeat interval before
		// the cut; a few message delays settle the election.
		if took, bound := w.now-silent, w.timing.Suspicion+w.timing.Answer/4; took > bound {
			t.Errorf("seed %d: 1–4 agreed on 4 %v after the leader went silent; want at most %v (suspicion %v, answer %v)", seed, took, bound, w.timing.Suspicion, w.timing.Answer)
		}
	}
}
