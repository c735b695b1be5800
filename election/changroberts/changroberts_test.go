package changroberts_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/changroberts"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

func elect(t testing.TB, ring []election.NodeID) *ringnet.Net {
	t.Helper()
	return ringnet.ElectHighest(t, "changroberts", ring)
}

func short(ring []election.NodeID) []election.NodeID {
	if len(ring) > 12 {
		return ring[:12]
	}
	return ring
}

func TestChangRobertsMessagesEqualHopSumForAnyArrangement(t *testing.T) {
	r := rand.New(rand.NewPCG(1979, 1))
	for _, n := range []int{1, 2, 3, 5, 8, 13, 64} {
		for trial := 0; trial < 20; trial++ {
			ring := ringnet.Shuffled(n, r)
			net := elect(t, ring)
			want := changroberts.HopSum(ring)
			if got := net.ElectionMessages(); got != want {
				t.Errorf("ring %v: %d ELECTION messages, hop sum %d", short(ring), got, want)
			}
			if n > 1 && net.AnnounceMessages() != n {
				t.Errorf("ring %v: %d ELECTED messages, want one round (%d)", short(ring), net.AnnounceMessages(), n)
			}
		}
	}
}

func TestChangRobertsWorstIsTriangularBestIsTwoNMinusOne(t *testing.T) {
	for _, n := range []int{5, 64, 1000} {
		// Clockwise decreasing: every ID but the largest travels to the
		// largest, i.e. as far as possible.
		worst := elect(t, ringnet.Decreasing(n)).ElectionMessages()
		if want := n * (n + 1) / 2; worst != want {
			t.Errorf("n=%d decreasing: %d messages, want n(n+1)/2 = %d", n, worst, want)
		}
		best := elect(t, ringnet.Increasing(n)).ElectionMessages()
		if want := 2*n - 1; best != want {
			t.Errorf("n=%d increasing: %d messages, want 2n−1 = %d", n, best, want)
		}
		if f := changroberts.Formula(ringnet.Decreasing(n)); !f.Exact || int(f.Value) != n*(n+1)/2 {
			t.Errorf("n=%d: formula for decreasing is %+v", n, f)
		}
	}
}

func TestChangRobertsMeanOverRandomArrangementsIsNHn(t *testing.T) {
	const n, trials = 64, 1000
	r := rand.New(rand.NewPCG(64, 1000))
	total := 0
	for range trials {
		total += elect(t, ringnet.Shuffled(n, r)).ElectionMessages()
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

func TestChangRobertsHopSumByHand(t *testing.T) {
	// 3 → 1 → 4 → 2 → back to 3: 3 travels 2 hops (to 4), 1 one hop,
	// 4 all four, 2 one hop (to 3).
	if got := changroberts.HopSum([]election.NodeID{3, 1, 4, 2}); got != 8 {
		t.Fatalf("hop sum of 3,1,4,2 = %d, want 8", got)
	}
}

func TestChangRobertsElectsAfterLeaderCrashBySkippingIt(t *testing.T) {
	ring := []election.NodeID{2, 5, 1, 4, 3}
	net := elect(t, ring)
	net.Kill(5)
	// Node 2 (5's predecessor) suspects first; its ELECTION reaches the
	// dead node, the ACK never comes, and the hop is retried past it.
	net.Fire(2, ringnet.TimerSuspect)
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	leader, ok := net.Agreed()
	if !ok || leader != 4 {
		t.Fatalf("after 5 crashed: agreed=%v leader %d, want 4; views %v", ok, leader, net.Views)
	}
	if net.Views[4].Epoch != 2 {
		t.Fatalf("new leader's epoch %d, want 2", net.Views[4].Epoch)
	}
}

func TestChangRobertsRestartedHigherNodeTakesOver(t *testing.T) {
	ring := []election.NodeID{2, 5, 1, 4, 3}
	net := elect(t, ring)
	net.Kill(5)
	net.Fire(1, ringnet.TimerSuspect)
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	if err := net.Restart(5); err != nil {
		t.Fatal(err)
	}
	if net.Views[5].Role != election.Undecided {
		t.Fatalf("restarted node's view %v, want undecided until it hears a heartbeat", net.Views[5])
	}
	// The leader's heartbeat tells 5 of leader 4 in epoch 2: 4 < 5, so 5
	// calls an election in epoch 3 and wins it.
	net.Fire(4, ringnet.TimerHeartbeat)
	if err := net.Settle(); err != nil {
		t.Fatal(err)
	}
	leader, ok := net.Agreed()
	if !ok || leader != 5 || net.Views[5].Epoch != 3 {
		t.Fatalf("after 5 restarted: agreed=%v leader %d view %v, want 5 in epoch 3", ok, leader, net.Views[5])
	}
}

func BenchmarkChangRobertsElection10000(b *testing.B) {
	r := rand.New(rand.NewPCG(10000, 1))
	ring := ringnet.Shuffled(10000, r)
	net, err := ringnet.NewNet("changroberts", ring)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		net.Reset()
		if err := net.Elect(); err != nil {
			b.Fatal(err)
		}
		msgs = net.ElectionMessages()
	}
	b.ReportMetric(float64(msgs), "election-msgs")
}
