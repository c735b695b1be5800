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
