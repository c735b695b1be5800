package routes

import (
	"testing"
	"time"
)

func TestPingIntervalGrowsOnlyPastTheBase(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{
		{1, BasePingInterval},
		{5, BasePingInterval},
		{PingPeersPerBase + 1, BasePingInterval},
		{PingPeersPerBase + 2, 320 * time.Millisecond},
		{32, 620 * time.Millisecond},
		{64, 1260 * time.Millisecond},
	} {
		if got := PingInterval(c.n); got != c.want {
			t.Errorf("PingInterval(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// The pings a server sends per second stay at or under what 16 nodes send,
// whatever the size: the point of growing the interval.
func TestPingLoadPerServerIsBounded(t *testing.T) {
	limit := float64(PingPeersPerBase) / BasePingInterval.Seconds()
	for n := 2; n <= 1000; n++ {
		if load := float64(n-1) / PingInterval(n).Seconds(); load > limit*1.01 {
			t.Fatalf("%d nodes: %.1f pings/s per server, over %.1f", n, load, limit)
		}
	}
}

// The calibration the simulator's hints were measured with: 300 ms pings,
// two out, noticed 630-950 ms after the peer went silent.
func TestSilenceWindowOfASmallClusterIsTheCalibratedOne(t *testing.T) {
	lo, hi := SilenceNoticed(5)
	if lo != 630*time.Millisecond || hi != 950*time.Millisecond {
		t.Fatalf("SilenceNoticed(5) = %v..%v, want 630ms..950ms", lo, hi)
	}
}

// The route polls a whole cluster makes per second stay at or under what
// 16 nodes make, whatever the size, as with the pings.
func TestPollLoadPerClusterIsBounded(t *testing.T) {
	limit := float64(PingPeersPerBase+1) / BasePoll.Seconds()
	for n := 2; n <= 256; n++ {
		p := PollInterval(n)
		if p < BasePoll {
			t.Fatalf("PollInterval(%d) = %v, below BasePoll", n, p)
		}
		// Rounding to a millisecond may add up to 0.5 ms of slack per
		// interval: allow the load that rounding gives.
		if got := float64(n) / p.Seconds(); got > limit*1.1 {
			t.Errorf("%d nodes poll %.0f times a second, more than 16 nodes' %.0f", n, got, limit)
		}
	}
	if PollInterval(5) != BasePoll || PollInterval(64) != 21*time.Millisecond || PollInterval(128) != 42*time.Millisecond {
		t.Errorf("PollInterval(5, 64, 128) = %v, %v, %v; want 5ms, 21ms, 42ms", PollInterval(5), PollInterval(64), PollInterval(128))
	}
}
