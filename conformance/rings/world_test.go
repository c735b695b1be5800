package rings_test

// The ring algorithms' elections counted against their formulas, and their
// recovery from crashes step by step: the simulator with one constant
// message delay (so every message keeps its sending order, as on the
// textbooks' FIFO rings) and the step driver (step).

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/changroberts"
	"github.com/ringleader-dev/ringleader/election/hs"
	"github.com/ringleader-dev/ringleader/election/peterson"
	"github.com/ringleader-dev/ringleader/election/ring"
	"github.com/ringleader-dev/ringleader/election/ringnet"
	"github.com/ringleader-dev/ringleader/election/variabletime"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/sim"
	"github.com/ringleader-dev/ringleader/step"
)

// elect runs the all-start-at-once election the formulas describe and
// stops t unless every node agrees on the highest ID.
func elect(t testing.TB, alg string, ids []election.NodeID) sim.Complexity {
	t.Helper()
	c, err := sim.RunComplexity(sim.Options{Algorithm: alg, Seed: 1}, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Agreed || c.Leader != slices.Max(ids) {
		t.Fatalf("%s, n=%d, ring %v…: agreed=%v leader %d, want %d", alg, len(ids), ids[:min(len(ids), 12)], c.Agreed, c.Leader, slices.Max(ids))
	}
	return c
}

// elected is a cluster of alg on ids, stepped until its first election is
// over, every node agreeing on the highest ID.
func elected(t *testing.T, alg string, ids []election.NodeID) *step.Driver {
	t.Helper()
	d, err := step.New(sim.Options{Algorithm: alg, Members: ids})
	if err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, slices.Max(ids))
	return d
}

// agreed stops t unless every running node follows leader.
func agreed(t *testing.T, d *step.Driver, leader election.NodeID) {
	t.Helper()
	var live []election.NodeID
	for _, id := range d.Members() {
		if d.Sim.Up(id) {
			live = append(live, id)
		}
	}
	if !d.Agreed(leader, live...) {
		views := map[election.NodeID]election.View{}
		for _, id := range d.Members() {
			views[id] = d.View(id)
		}
		t.Fatalf("at %v: want %v to agree on %d; views %v", d.Now(), live, leader, views)
	}
}

func fault(t *testing.T, d *step.Driver, words ...string) {
	t.Helper()
	if _, err := d.Fault(words...); err != nil {
		t.Fatal(err)
	}
}

func short(ring []election.NodeID) []election.NodeID { return ring[:min(len(ring), 12)] }

// --- the textbook ring -----------------------------------------------------

func TestRingConcurrentInitiatorsCostTheHopSumAndOneCoordinator(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 5, 17, 64, 300} {
		for _, ids := range [][]election.NodeID{ringnet.Increasing(n), ringnet.Decreasing(n), ringnet.Shuffled(n, r)} {
			c := elect(t, "ring", ids)
			want := changroberts.HopSum(ids)
			if c.Messages != want {
				t.Errorf("n=%d %v: %d ELECTION messages, want the hop sum %d", n, short(ids), c.Messages, want)
			}
			if f := ring.Formula(ids); !f.Exact || int(f.Value) != want {
				t.Errorf("n=%d: formula %+v, want exact %d", n, f, want)
			}
			if n > 1 && c.AnnounceMessages != n {
				t.Errorf("n=%d: %d COORDINATOR messages, want exactly one round (%d)", n, c.AnnounceMessages, n)
			}
		}
	}
}

func TestRingSkipsDeadNodesAndLeavesThemOffTheList(t *testing.T) {
	d := elected(t, "ring", []election.NodeID{4, 9, 2, 7, 5})
	d.ResetCounts()
	fault(t, d, "kill", "9,2")
	if err := d.Fire(4, ringnet.TimerSuspect); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 7)
	if d.Counts()[ringnet.TypeAck] == 0 {
		t.Fatal("no hop was acknowledged")
	}
}

// --- Chang and Roberts -----------------------------------------------------

func TestChangRobertsMessagesEqualHopSumForAnyArrangement(t *testing.T) {
	r := rand.New(rand.NewPCG(1979, 1))
	for _, n := range []int{1, 2, 3, 5, 8, 13, 64} {
		for range 20 {
			ids := ringnet.Shuffled(n, r)
			c := elect(t, "changroberts", ids)
			if want := changroberts.HopSum(ids); c.Messages != want {
				t.Errorf("ring %v: %d ELECTION messages, hop sum %d", short(ids), c.Messages, want)
			}
			if n > 1 && c.AnnounceMessages != n {
				t.Errorf("ring %v: %d ELECTED messages, want one round (%d)", short(ids), c.AnnounceMessages, n)
			}
		}
	}
}

func TestChangRobertsWorstIsTriangularBestIsTwoNMinusOne(t *testing.T) {
	dockertest.CPUBound(t)
	for _, n := range []int{5, 64, 1000} {
		// Clockwise decreasing: every ID but the largest travels to the
		// largest, i.e. as far as possible.
		if worst, want := elect(t, "changroberts", ringnet.Decreasing(n)).Messages, n*(n+1)/2; worst != want {
			t.Errorf("n=%d decreasing: %d messages, want n(n+1)/2 = %d", n, worst, want)
		}
		if best, want := elect(t, "changroberts", ringnet.Increasing(n)).Messages, 2*n-1; best != want {
			t.Errorf("n=%d increasing: %d messages, want 2n−1 = %d", n, best, want)
		}
		if f := changroberts.Formula(ringnet.Decreasing(n)); !f.Exact || int(f.Value) != n*(n+1)/2 {
			t.Errorf("n=%d: formula for decreasing is %+v", n, f)
		}
	}
}

func TestChangRobertsMeanOverRandomArrangementsIsNHn(t *testing.T) {
	dockertest.CPUBound(t)
	const n, trials = 64, 1000
	r := rand.New(rand.NewPCG(64, 1000))
	total := 0
	for range trials {
		total += elect(t, "changroberts", ringnet.Shuffled(n, r)).Messages
	}
	mean := float64(total) / trials
	hn := 0.0
	for k := 1; k <= n; k++ {
		hn += 1 / float64(k)
	}
	want := n * hn
	if math.Abs(mean-want)/want > 0.02 {
		t.Fatalf("mean over %d arrangements of %d nodes: %.1f messages, n·H_n = %.1f (off by more than 2%%)", trials, n, mean, want)
	}
	t.Logf("n=%d: mean %.2f ELECTION messages over %d random rings, n·H_n = %.2f", n, mean, trials, want)
}

func TestChangRobertsElectsAfterLeaderCrashBySkippingIt(t *testing.T) {
	d := elected(t, "changroberts", []election.NodeID{2, 5, 1, 4, 3})
	fault(t, d, "kill", "5")
	// Node 2 (5's predecessor) suspects first; its ELECTION reaches the
	// dead node, the ACK never comes, and the hop is retried past it.
	if err := d.Fire(2, ringnet.TimerSuspect); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 4)
	if e := d.View(4).Epoch; e != 2 {
		t.Fatalf("new leader's epoch %d, want 2", e)
	}
}

func TestChangRobertsRestartedHigherNodeTakesOver(t *testing.T) {
	d := elected(t, "changroberts", []election.NodeID{2, 5, 1, 4, 3})
	fault(t, d, "kill", "5")
	if err := d.Fire(1, ringnet.TimerSuspect); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 4)
	fault(t, d, "restart", "5")
	if v := d.View(5); v.Role != election.Undecided {
		t.Fatalf("restarted node's view %v, want undecided until it hears a heartbeat", v)
	}
	// The leader's heartbeat tells 5 of leader 4 in epoch 2: 4 < 5, so 5
	// calls an election in epoch 3 and wins it.
	if err := d.Fire(4, ringnet.TimerHeartbeat); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 5)
	if e := d.View(5).Epoch; e != 3 {
		t.Fatalf("after 5 restarted: epoch %d, want 3", e)
	}
}

func BenchmarkChangRobertsElection10000(b *testing.B) {
	ids := ringnet.Shuffled(10000, rand.New(rand.NewPCG(10000, 1)))
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		msgs = elect(b, "changroberts", ids).Messages
	}
	b.ReportMetric(float64(msgs), "election-msgs")
}

// --- Hirschberg and Sinclair, Peterson ------------------------------------

// arrangements are the rings of n the bound tests elect on.
func arrangements(n int, r *rand.Rand) map[string][]election.NodeID {
	return map[string][]election.NodeID{
		"increasing":   ringnet.Increasing(n),
		"decreasing":   ringnet.Decreasing(n),
		"bit-reversed": ringnet.BitReversed(n),
		"random":       ringnet.Shuffled(n, r),
	}
}

func TestHirschbergSinclairStaysWithinBoundAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(1980, 1))
	for _, n := range []int{1, 2, 3, 5, 7, 16, 64, 100, 257, 1000} {
		bound := 8 * n * (1 + hs.CeilLog2(n))
		if f := hs.Formula(ringnet.Increasing(n)); f.Exact || int(f.Value) != bound {
			t.Fatalf("n=%d: formula %+v, want bound %d", n, f, bound)
		}
		for name, ids := range arrangements(n, r) {
			if got := elect(t, "hs", ids).Messages; got > bound {
				t.Errorf("n=%d %s: %d probes and replies, bound 8n(1+⌈log₂ n⌉) = %d", n, name, got, bound)
			}
		}
	}
}

func TestHirschbergSinclairPhaseZeroCostsFourNOnAnIncreasingRing(t *testing.T) {
	// On 1, 2, …, n only the largest survives phase 0 (every other node
	// has a larger neighbour clockwise); phase 0 alone is 2n probes and
	// at most 2n replies. The total is bounded well below the worst case.
	const n = 8
	c := elect(t, "hs", ringnet.Increasing(n))
	if c.ByType[hs.TypeElection] < 2*n || c.ByType[hs.TypeReply] < 2 {
		t.Fatalf("probes %d, replies %d: phase 0 did not run on every node", c.ByType[hs.TypeElection], c.ByType[hs.TypeReply])
	}
}

func TestPetersonStaysWithinBoundAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(1982, 1))
	for _, n := range []int{1, 2, 3, 5, 7, 16, 64, 100, 257, 1000} {
		bound := 2*n*peterson.FloorLog2(n) + n
		if f := peterson.Formula(ringnet.Increasing(n)); f.Exact || int(f.Value) != bound {
			t.Fatalf("n=%d: formula %+v, want bound %d", n, f, bound)
		}
		for name, ids := range arrangements(n, r) {
			c := elect(t, "peterson", ids)
			if c.Messages > bound {
				t.Errorf("n=%d %s: %d messages, bound 2n⌊log₂ n⌋+n = %d", n, name, c.Messages, bound)
			}
			if n > 1 && c.AnnounceMessages != n {
				t.Errorf("n=%d %s: %d ELECTED messages, want one round (%d)", n, name, c.AnnounceMessages, n)
			}
		}
	}
}

func TestPetersonLastActiveNodeNeedNotBeTheHighestYetTheHighestLeads(t *testing.T) {
	// Clockwise 1, 2, 3: in phase 0 node 1 learns ntid 3 (from node 3, its
	// predecessor) and nntid 2; 3 > 1 and 3 > 2, so node 1 survives holding
	// tid 3 while node 3 becomes a relay. Node 1 ends the election and
	// announces 3.
	d := elected(t, "peterson", []election.NodeID{1, 2, 3})
	if v := d.View(3); v.Role != election.Leader {
		t.Fatalf("node 3's view %v, want leader", v)
	}
	if v := d.View(1); v.Role != election.Follower || v.Leader != 3 {
		t.Fatalf("node 1's view %v, want follower of 3", v)
	}
}

// Both bidirectional algorithms recover from a crashed leader when every
// follower suspects it at once.
func TestHSAndPetersonElectAfterLeaderCrashBySkippingIt(t *testing.T) {
	for _, alg := range []string{"hs", "peterson"} {
		d := elected(t, alg, []election.NodeID{3, 7, 1, 6, 2, 5, 4})
		fault(t, d, "kill", "7")
		d.FireAll(ringnet.TimerSuspect)
		d.Stabilize(time.Minute)
		agreed(t, d, 6)
	}
}

// --- variable-time ---------------------------------------------------------

func TestVariableTimeCostsExactlyNMessagesAndHighestWins(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{1, 2, 5, 64, 1000} {
		ids := ringnet.Shuffled(n, r)
		d := elected(t, "variable-time", ids)
		want := int(variabletime.Formula(ids).Value)
		if got := d.ElectionMessages(); got != want || (n > 1 && got != n) {
			t.Errorf("n=%d: %d messages, want exactly %d", n, got, want)
		}
		for _, id := range ids {
			if d.Armed(id, variabletime.TimerSlot) {
				t.Fatalf("n=%d: node %d still waits for its slot after the token passed", n, id)
			}
		}
	}
}

func TestVariableTimeNextSlotWinsWhenTheHighestIsDead(t *testing.T) {
	d := elected(t, "variable-time", []election.NodeID{3, 5, 1, 4, 2})
	fault(t, d, "kill", "5")
	d.FireAll(ringnet.TimerSuspect)
	// Everything up to the first slot: slot 0 belonged to dead 5, so
	// nothing is sent; slot 1 is 4's.
	for {
		p := d.Sim.Pending()
		if len(p) == 0 || p[0].Timer == variabletime.TimerSlot {
			break
		}
		d.Next()
	}
	if d.Agreed(4, 1, 2, 3, 4) {
		t.Fatal("a leader before any live node's slot opened")
	}
	for _, id := range []election.NodeID{3, 1, 2} {
		if !d.Armed(id, variabletime.TimerSlot) {
			t.Fatalf("node %d has no slot timer", id)
		}
	}
	if err := d.Fire(4, variabletime.TimerSlot); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 4)
	for _, id := range []election.NodeID{3, 1, 2} {
		if d.Armed(id, variabletime.TimerSlot) {
			t.Fatalf("node %d still waits for its slot after 4's token passed", id)
		}
	}
}

// --- what every ring shares (package ringnet) ------------------------------

func TestFollowerSuspectsSilentLeaderAndHeartbeatsKeepItQuiet(t *testing.T) {
	d := elected(t, "changroberts", []election.NodeID{1, 2, 3})
	if !d.Armed(1, ringnet.TimerSuspect) || !d.Armed(3, ringnet.TimerHeartbeat) || d.Armed(3, ringnet.TimerSuspect) {
		t.Fatal("want followers watching the leader and the leader sending heartbeats")
	}
	d.ResetCounts()
	if err := d.Fire(3, ringnet.TimerHeartbeat); err != nil {
		t.Fatal(err)
	}
	if c := d.Counts(); c[ringnet.TypeHeartbeat] != 2 || d.ElectionMessages() != 0 {
		t.Fatalf("heartbeat round: %d heartbeats, %d election messages; want 2 and 0", c[ringnet.TypeHeartbeat], d.ElectionMessages())
	}
	if !d.Armed(3, ringnet.TimerHeartbeat) {
		t.Fatal("the leader stopped its heartbeat")
	}
	// The leader crashes; a follower's suspicion fires: a new epoch.
	fault(t, d, "kill", "3")
	if err := d.Fire(1, ringnet.TimerSuspect); err != nil {
		t.Fatal(err)
	}
	d.Stabilize(time.Minute)
	agreed(t, d, 2)
	if e := d.View(2).Epoch; e != 2 {
		t.Fatalf("leader 2 in epoch %d, want 2", e)
	}
}

// since lists the history records of the given kinds after mark.
func since(d *step.Driver, mark int, kinds ...history.Kind) []history.Record {
	var out []history.Record
	for _, r := range d.Records()[mark:] {
		if slices.Contains(kinds, r.Kind) {
			out = append(out, r)
		}
	}
	return out
}

func TestPeerDownForTheLeaderStartsAnElection(t *testing.T) {
	d := elected(t, "changroberts", []election.NodeID{1, 2, 3})
	mark := len(d.Records())
	if err := d.Hint(1, 2); err != nil {
		t.Fatal(err)
	}
	if rs := since(d, mark, history.KindSend, history.KindView); len(rs) != 0 {
		t.Fatalf("peer-down for a follower caused %+v", rs)
	}
	if err := d.Hint(1, 3); err != nil {
		t.Fatal(err)
	}
	if v := d.View(1); v.Role != election.Candidate || v.Epoch != 2 {
		t.Fatalf("view after peer-down for the leader %v, want candidate in epoch 2", v)
	}
	if len(since(d, mark, history.KindSend)) == 0 {
		t.Fatal("no election message after peer-down for the leader")
	}
}

func TestViewIsEmittedOnlyOnChange(t *testing.T) {
	d := elected(t, "changroberts", []election.NodeID{1, 2, 3})
	mark := len(d.Records())
	hb := election.Message{Type: ringnet.TypeHeartbeat, From: 3, Epoch: 1, Candidate: 3}
	for range 3 {
		if err := d.Receive(1, hb); err != nil {
			t.Fatal(err)
		}
	}
	if vs := since(d, mark, history.KindView); len(vs) != 0 {
		t.Fatalf("a heartbeat from the known leader emitted views %v", vs)
	}
}
