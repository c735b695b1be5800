package bully_test

// Bully's behaviour in a small deterministic world: the step driver on the
// simulator (step), with a constant 1 ms message delay, no failure
// hints but those a test gives, and the checkers of package check judging
// safety over the recorded history.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
	"github.com/ringleader-dev/ringleader/step"
)

// world is a bully cluster under a test's hand.
type world struct {
	*step.Driver
	t *testing.T
}

func newWorld(t *testing.T, n int, q election.QuorumMode) *world {
	t.Helper()
	return newWorldWith(t, sim.Options{Members: election.FirstIDs(n), Quorum: q})
}

func newWorldWith(t *testing.T, opts sim.Options) *world {
	t.Helper()
	opts.Algorithm = "bully"
	d, err := step.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &world{Driver: d, t: t}
}

func ids(xs ...int) []election.NodeID {
	out := make([]election.NodeID, len(xs))
	for i, x := range xs {
		out[i] = election.NodeID(x)
	}
	return out
}

// fault applies a fault in the words of ringleader fault, or stops the test.
func (w *world) fault(words ...any) {
	w.t.Helper()
	s := make([]string, len(words))
	for i, x := range words {
		s[i] = fmt.Sprint(x)
	}
	if _, err := w.Fault(s...); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) hint(to, peer election.NodeID) {
	w.t.Helper()
	if err := w.Hint(to, peer); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) receive(to election.NodeID, m election.Message) {
	w.t.Helper()
	if err := w.Receive(to, m); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) requireAgreed(leader election.NodeID, ids ...election.NodeID) {
	w.t.Helper()
	if !w.Agreed(leader, ids...) {
		w.t.Fatalf("at %v: want every node of %v to agree on leader %d; views: %s", w.Now(), ids, leader, w.describe())
	}
}

func (w *world) describe() string {
	s := ""
	for _, id := range w.Members() {
		s += fmt.Sprintf(" %d=%v", id, w.View(id))
	}
	return s
}

// requireSafe runs the real no-split-brain and epoch-safety checkers over
// the history so far.
func (w *world) requireSafe() {
	w.t.Helper()
	for _, v := range w.CheckNow(check.NoSplitBrain, check.EpochSafety) {
		if !v.Pass {
			w.t.Fatalf("%s: %s", v.Checker, v.Summary)
		}
	}
}

// leaderIntervals are node id's leader intervals, as the checkers read
// the history.
func (w *world) leaderIntervals(id election.NodeID) []check.LeaderInterval {
	var out []check.LeaderInterval
	for _, iv := range w.LeaderIntervals() {
		if iv.Node == id {
			out = append(out, iv)
		}
	}
	return out
}

// since is when a leader interval ended, as virtual time.
func (w *world) since(iv check.LeaderInterval) time.Duration {
	return iv.End.Sub(history.SimOrigin)
}

func TestBullyHighestIDWinsWithExactCounts(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10} {
		w := newWorld(t, n, election.NoQuorum)
		w.RunFor(time.Second)
		w.requireAgreed(election.NodeID(n), w.Members()...)
		c := w.Counts()
		if got, want := c[bully.TypeElection]+c[bully.TypeOK], bully.PlainCount(n); got != want {
			t.Errorf("n=%d: ELECTION+OK = %d (%v), want (n−1)² = %d", n, got, c, want)
		}
		if got, want := c[bully.TypeCoordinator], 2*(n-1); got != want {
			t.Errorf("n=%d: COORDINATOR = %d, want 2(n−1) = %d (n−1 announcements and n−1 answers to ELECTIONs)", n, got, want)
		}
	}
}

func TestBullyRecoveredHigherNodeBulliesLowerLeader(t *testing.T) {
	w := newWorld(t, 5, election.NoQuorum)
	w.RunFor(time.Second)
	w.fault("kill", 5)
	w.RunFor(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	old := w.View(4).Epoch
	w.fault("restart", 5)
	w.RunFor(time.Second)
	w.requireAgreed(5, w.Members()...)
	if e := w.View(1).Epoch; e <= old {
		t.Fatalf("the recovered leader's epoch %d is not above the replaced leader's %d", e, old)
	}
}

func TestBullyLowerCoordinatorIsBullied(t *testing.T) {
	// Node 2 was cut off alone, elected itself, and is heard again.
	w := newWorld(t, 4, election.NoQuorum)
	w.RunFor(time.Second)
	w.fault("partition", "2", "1,3,4")
	w.RunFor(2 * time.Second)
	if v := w.View(2); v.Role != election.Leader {
		t.Fatalf("isolated node 2 should lead itself without a quorum, has %v", v)
	}
	w.fault("heal")
	w.RunFor(2 * time.Second)
	w.requireAgreed(4, w.Members()...)
}

func TestBullyOKWithoutCoordinatorRestartsElection(t *testing.T) {
	w := newWorld(t, 3, election.NoQuorum)
	w.RunFor(time.Second)
	w.RunFor(2 * time.Millisecond) // nothing from 3 in flight
	w.ResetCounts()
	w.fault("kill", 3)
	w.hint(1, 3)                      // node 1 sends ELECTION to 2 and 3
	w.RunFor(2500 * time.Microsecond) // node 2 has answered OK and started its election
	w.fault("kill", 2)                // ... and dies before it can announce
	if v := w.View(1); v.Role != election.Candidate {
		t.Fatalf("node 1 should wait for a COORDINATOR after the OK, has %v", v)
	}
	w.RunFor(time.Second)
	w.requireAgreed(1, 1)
	var rounds []uint64
	for _, m := range w.Sent() {
		if m.From == 1 && m.Type == bully.TypeElection && !slices.Contains(rounds, m.Seq) {
			rounds = append(rounds, m.Seq)
		}
	}
	if len(rounds) != 2 {
		t.Fatalf("node 1 ran %d election rounds (%v), want 2: the first stalled after the OK, the second won", len(rounds), rounds)
	}
}

func TestBullyPeerDownHintStartsElectionAtOnce(t *testing.T) {
	for _, n := range []int{5, 10} {
		w := newWorld(t, n, election.NoQuorum)
		w.RunFor(time.Second + 2*time.Millisecond) // the 1 s heartbeat has arrived
		w.ResetCounts()
		w.fault("kill", n)
		w.hint(1, election.NodeID(n))
		// Well inside the others' suspicion timeout: only the hint
		// can have started this election.
		w.RunFor(w.Timing().Answer + 10*time.Millisecond)
		live := w.Members()[:n-1]
		w.requireAgreed(election.NodeID(n-1), live...)
		c := w.Counts()
		want := map[string]int{bully.TypeElection: n * (n - 1) / 2, bully.TypeOK: (n - 1) * (n - 2) / 2, bully.TypeCoordinator: n - 2}
		for typ, k := range want {
			if c[typ] != k {
				t.Errorf("n=%d, node 1 hinted: %s = %d, want %d (all %v)", n, typ, c[typ], k, c)
			}
		}
	}
}

func TestBullyHintedHighestLiveTakesOverWithoutAnswerWait(t *testing.T) {
	w := newWorld(t, 5, election.NoQuorum)
	w.RunFor(time.Second + 2*time.Millisecond)
	w.requireAgreed(5, w.Members()...)
	w.fault("kill", 5)
	w.hint(4, 5) // the runtime saw 5's inbox vanish
	// Node 4 has nobody higher alive: it must not sit out the answer
	// timeout waiting for an OK that cannot come.
	if v := w.View(4); v.Role != election.Leader || v.Leader != 4 {
		t.Fatalf("node 4, told its only higher peer is gone, should lead at once; has %v", v)
	}
	w.RunFor(w.Timing().Answer / 2)
	w.requireAgreed(4, 1, 2, 3, 4)
	// Once 5 is heard from again the hint is void, and 5 bullies.
	w.fault("restart", 5)
	w.RunFor(time.Second)
	w.requireAgreed(5, w.Members()...)
}

func TestQuorumWrongPeerDownHintKeepsLeader(t *testing.T) {
	w := newWorld(t, 5, election.Majority)
	w.RunFor(time.Second)
	w.requireAgreed(5, w.Members()...)
	w.hint(1, 5) // wrong: 5 is alive
	w.RunFor(2 * time.Second)
	w.requireAgreed(5, w.Members()...)
	if iv := w.leaderIntervals(5); len(iv) != 1 {
		t.Fatalf("a wrong hint to one follower interrupted the leader: intervals %v", iv)
	}
}

func TestBullyStaleHeartbeatIsIgnored(t *testing.T) {
	w := newWorld(t, 3, election.NoQuorum)
	w.RunFor(time.Second)
	w.fault("kill", 3)
	w.RunFor(2 * time.Second)
	w.requireAgreed(2, 1, 2)
	before := w.View(1)
	// A heartbeat from the old leader's term, delivered late.
	w.receive(1, election.Message{Type: bully.TypeHeartbeat, From: 3, Epoch: before.Epoch - 1})
	if v := w.View(1); v != before {
		t.Fatalf("a stale heartbeat (epoch %d < %d) changed node 1's view to %v", before.Epoch-1, before.Epoch, v)
	}
}

func TestBullySplitBrainWithoutQuorumHealsToHighest(t *testing.T) {
	w := newWorld(t, 5, election.NoQuorum)
	w.RunFor(time.Second)
	w.fault("partition", "1,2,3", "4,5")
	w.RunFor(2 * time.Second)
	w.requireAgreed(3, 1, 2, 3)
	w.requireAgreed(5, 4, 5)
	w.fault("heal")
	w.RunFor(2 * time.Second)
	w.requireAgreed(5, w.Members()...)
}

func TestQuorumHighestIDWinsWithExactCounts(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10} {
		w := newWorld(t, n, election.Majority)
		w.RunFor(time.Second)
		w.requireAgreed(election.NodeID(n), w.Members()...)
		c := w.Counts()
		got := c[bully.TypeElection] + c[bully.TypeOK] + c[bully.TypePrevote] + c[bully.TypePrevoteAck] + c[bully.TypeVote]
		if want := bully.QuorumCount(n); got != want {
			t.Errorf("n=%d: ELECTION+OK+PREVOTE+PREVOTE_ACK+VOTE = %d (%v), want (n−1)(n+4) = %d", n, got, c, want)
		}
		if c[bully.TypeRelease] != 0 {
			t.Errorf("n=%d: %d RELEASEs in a start where nobody led before", n, c[bully.TypeRelease])
		}
		if got := c[bully.TypeCoordinator]; got != n-1 {
			t.Errorf("n=%d: COORDINATOR = %d, want n−1", n, got)
		}
		if e := w.View(1).Epoch; e != 1 {
			t.Errorf("n=%d: first election ended in epoch %d, want 1", n, e)
		}
	}
}

func TestQuorumLeaderStepsDownWhenItCannotRenewLease(t *testing.T) {
	w := newWorld(t, 5, election.Majority)
	w.RunFor(time.Second)
	w.requireAgreed(5, w.Members()...)
	cutAt := w.Now()
	w.fault("partition", "5", "1,2,3,4")
	w.RunFor(bully.Lease(w.Timing()) + w.Timing().Heartbeat)
	if v := w.View(5); v.Role == election.Leader {
		t.Fatalf("node 5 still leads %v after losing its majority at %v", v, cutAt)
	}
	w.RunFor(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	w.requireSafe()
	// The step-down came no later than a lease after the last round
	// that could have been acknowledged.
	iv := w.leaderIntervals(5)
	if end := w.since(iv[len(iv)-1]); end > cutAt+bully.Lease(w.Timing()) {
		t.Fatalf("node 5 stepped down at %v, more than a lease (%v) after the cut at %v", end, bully.Lease(w.Timing()), cutAt)
	}
}

func TestQuorumMinoritySideNeverElects(t *testing.T) {
	w := newWorld(t, 5, election.Majority)
	w.RunFor(time.Second)
	cutAt := w.Now()
	w.fault("partition", "4,5", "1,2,3")
	w.RunFor(5 * time.Second)
	w.requireAgreed(3, 1, 2, 3)
	for _, id := range ids(4, 5) {
		if v := w.View(id); v.Leader != election.None {
			t.Errorf("minority node %d views %v, want no leader", id, v)
		}
		for _, x := range w.leaderIntervals(id) {
			if end := w.since(x); end > cutAt+bully.Lease(w.Timing()) {
				t.Fatalf("minority node %d led until %v, past the lease after the cut at %v", id, end, cutAt)
			}
		}
	}
	w.fault("heal")
	w.RunFor(3 * time.Second)
	w.requireAgreed(5, w.Members()...)
	w.requireSafe()
}

func TestQuorumRecoveredHighestTakesOverWithoutOverlap(t *testing.T) {
	w := newWorld(t, 5, election.Majority)
	w.RunFor(time.Second)
	w.fault("kill", 5)
	w.RunFor(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	w.fault("restart", 5)
	w.RunFor(3 * time.Second)
	w.requireAgreed(5, w.Members()...)
	w.requireSafe()
}

// TestQuorumRandomFaultsKeepSafety throws kills, restarts, partitions,
// one-way cuts and heals at a majority cluster and checks the two safety
// properties over the whole run, then that the highest node leads after
// everything heals.
func TestQuorumRandomFaultsKeepSafety(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() {
		seeds = 10
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		delay := sim.Constant(time.Millisecond)
		if j := time.Duration(seed%4) * 20 * time.Millisecond; j > 0 {
			delay = sim.Uniform(time.Millisecond, time.Millisecond+j) // links stay FIFO
		}
		w := newWorldWith(t, sim.Options{Members: election.FirstIDs(5), Quorum: election.Majority, Seed: int64(seed), Delay: delay})
		r := rand.New(rand.NewPCG(seed, 99))
		for range 30 {
			w.RunFor(time.Duration(r.IntN(600)) * time.Millisecond)
			id := election.NodeID(1 + r.IntN(5))
			switch r.IntN(5) {
			case 0:
				if w.Sim.Up(id) {
					w.fault("kill", id)
				}
			case 1:
				if !w.Sim.Up(id) {
					w.fault("restart", id)
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
				w.fault("partition", idsWord(a), idsWord(b))
			case 3:
				if to := election.NodeID(1 + r.IntN(5)); to != id {
					w.fault("cut", id, to, "--one-way")
				}
			default:
				w.fault("heal")
			}
		}
		w.fault("heal")
		if _, err := w.Fault("restart", "down"); err != nil && slices.ContainsFunc(w.Members(), func(id election.NodeID) bool { return !w.Sim.Up(id) }) {
			t.Fatal(err)
		}
		w.RunFor(5 * time.Second)
		w.requireSafe()
		if !w.Agreed(5, w.Members()...) {
			t.Fatalf("seed %d: after healing, want every node to follow 5; views: %s", seed, w.describe())
		}
	}
}

func idsWord(ids []election.NodeID) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(id)
	}
	return s
}

func TestMachineIgnoresForeignAndMalformedMessages(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		w := newWorld(t, 3, q)
		w.RunFor(time.Second)
		before := w.View(1)
		for _, m := range []election.Message{
			{Type: "NONSENSE", From: 2, Epoch: 99},
			{Type: bully.TypeCoordinator, From: 42, Epoch: 99},    // not a member
			{Type: bully.TypeCoordinator, From: 1, Epoch: 99},     // from itself
			{Type: bully.TypeCoordinator, From: -3, Epoch: 99},    // not an ID
			{Type: bully.TypeVote, From: 2, Epoch: 99, Seq: 7},    // a vote nobody asked for
			{Type: bully.TypeOK, From: 3, Seq: 12345},             // an answer to no probe
			{Type: bully.TypeHeartbeatAck, From: 2, Seq: 1 << 40}, // an ack to no round
		} {
			w.receive(1, m)
			if v := w.View(1); v != before {
				t.Fatalf("quorum %q: %+v changed node 1's view from %v to %v", q, m, before, v)
			}
		}
		for _, ev := range []election.Event{
			{Kind: election.EventTimer, Timer: "lease/not-a-number"},
			{Kind: election.EventTimer, Timer: "no-such-timer"},
			{Kind: election.EventPeerDown, Peer: 2}, // not the leader
		} {
			if err := w.Sim.Inject(1, ev); err != nil {
				t.Fatal(err)
			}
		}
		if v := w.View(1); v != before {
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
	for seed := int64(1); seed <= 20; seed++ {
		w := newWorldWith(t, sim.Options{Members: election.FirstIDs(5), Seed: seed, Delay: sim.Uniform(time.Millisecond, 6*time.Millisecond)})
		w.RunFor(time.Second)
		w.requireAgreed(5, 1, 2, 3, 4, 5)
		w.fault("partition", "5", "1,2,3,4")
		silent := w.Now()
		for !w.Agreed(4, 1, 2, 3, 4) && w.Now()-silent < 5*time.Second {
			w.RunFor(time.Millisecond)
		}
		w.requireAgreed(4, 1, 2, 3, 4)
		// The last heartbeat left up to one heartbeat interval before
		// the cut; a few message delays settle the election.
		tm := w.Timing()
		if took, bound := w.Now()-silent, tm.Suspicion+tm.Answer/4; took > bound {
			t.Errorf("seed %d: 1–4 agreed on 4 %v after the leader went silent; want at most %v (suspicion %v, answer %v)", seed, took, bound, tm.Suspicion, tm.Answer)
		}
	}
}

// TestEpochArithmeticNeverWrapsInACluster: a forged HEARTBEAT with the
// largest epoch there is, from a lower node. A plain leader bullies it "in
// the next epoch", which must not be 0; a majority node would campaign
// for the next epoch, and must neither propose 0 nor ask for votes in an
// epoch it cannot take.
func TestEpochArithmeticNeverWrapsInACluster(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		w := newWorld(t, 3, q)
		w.RunFor(time.Second)
		w.ResetCounts()
		w.receive(3, election.Message{Type: bully.TypeHeartbeat, From: 1, Epoch: math.MaxUint64, Seq: 1})
		w.RunFor(2 * time.Second)
		proposals := 0
		sent := w.Sent()
		for _, m := range sent {
			if m.From != 3 {
				continue
			}
			switch {
			case q == election.NoQuorum && m.Epoch != math.MaxUint64:
				t.Fatalf("plain: after an epoch of 2^64−1, node 3 sent %s in epoch %d: the epoch wrapped", m.Type, m.Epoch)
			case m.Type == bully.TypePrevote:
				proposals++
				if m.Epoch != math.MaxUint64 {
					t.Fatalf("majority: after an epoch of 2^64−1, node 3 proposed epoch %d", m.Epoch)
				}
			case m.Type == bully.TypeElection && m.To < 3:
				t.Fatalf("majority: node 3 asked for votes in epoch %d with the epochs used up", m.Epoch)
			}
		}
		if q == election.Majority && proposals == 0 {
			t.Fatalf("majority: node 3 never campaigned after the forged heartbeat; sent %v", sent)
		}
	}
}

// startWithout5 is a majority cluster of five in which node 5 never
// starts: it is cut off from the start, killed at once, and the cut healed.
func startWithout5(t *testing.T) *world {
	t.Helper()
	d, err := step.Build(sim.Options{Algorithm: "bully", Members: election.FirstIDs(5), Quorum: election.Majority})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{Driver: d, t: t}
	w.fault("isolate", 5)
	w.Start()
	w.fault("kill", 5)
	w.fault("heal")
	w.RunFor(2 * time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	return w
}

// TestQuorumLeaderStepsDownThenReleases: a leader asked for its vote by a
// higher candidate records the view that gives up leadership first, then
// sends the RELEASE of its epoch, then the vote.
func TestQuorumLeaderStepsDownThenReleases(t *testing.T) {
	w := startWithout5(t)
	term := w.View(4).Epoch
	mark := len(w.Records())
	w.receive(4, election.Message{Type: bully.TypeElection, From: 5, Epoch: term + 1, Seq: 1, Candidate: 5})
	var order []string
	for _, r := range w.Records()[mark:] {
		switch {
		case r.Kind == history.KindView && len(order) == 0:
			order = append(order, "step-down") // the first view; a later one shows the new epoch
		case r.Kind == history.KindSend && r.Msg.Type == bully.TypeRelease:
			if r.Msg.Epoch != term {
				t.Fatalf("RELEASE for epoch %d, want the term given up, %d", r.Msg.Epoch, term)
			}
			if order[len(order)-1] != "release" {
				order = append(order, "release") // one broadcast, a record per peer
			}
		case r.Kind == history.KindSend && r.Msg.Type == bully.TypeVote:
			order = append(order, "vote")
		}
	}
	if !slices.Equal(order, []string{"step-down", "release", "vote"}) {
		t.Fatalf("leader 4 asked by 5: %v, want step-down, release, vote", order)
	}
}

// TestQuorumLeaderAnswersPrevoteWithoutSteppingDown: a leader asked by a
// higher node whether it would vote says yes and keeps leading; only the
// vote request makes it step down and hand over. Node 5 never starts: it
// is cut off from the start and killed at once.
func TestQuorumLeaderAnswersPrevoteWithoutSteppingDown(t *testing.T) {
	w := startWithout5(t)
	before := w.View(4)
	w.ResetCounts()
	w.receive(4, election.Message{Type: bully.TypePrevote, From: 5, Epoch: before.Epoch + 1, Seq: 1, Candidate: 5})
	if got := w.Sent(); len(got) != 1 || got[0].Type != bully.TypePrevoteAck || got[0].Candidate != 5 || got[0].Epoch != before.Epoch+1 {
		t.Fatalf("leader 4 answered a PREVOTE from 5 with %v, want one granting PREVOTE_ACK for epoch %d", got, before.Epoch+1)
	}
	w.RunFor(time.Second)
	w.requireAgreed(4, ids(1, 2, 3, 4)...)
	if iv := w.leaderIntervals(4); len(iv) != 1 || w.View(4).Epoch != before.Epoch {
		t.Fatalf("the PREVOTE interrupted leader 4: intervals %v, view %v (was %v)", iv, w.View(4), before)
	}
}
