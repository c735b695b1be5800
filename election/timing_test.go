package election

import (
	"testing"
	"time"
)

func TestDefaultTimingStretchesOnlyPastSixteenNodes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want Timing
	}{
		{0, DefaultTiming},
		{5, DefaultTiming},
		{TimingPeersPerBase + 1, DefaultTiming},
		{64, Timing{Heartbeat: 420 * time.Millisecond, Suspicion: 2100 * time.Millisecond, Answer: 840 * time.Millisecond}},
	} {
		got := DefaultTimingFor(c.n)
		if got != c.want {
			t.Errorf("DefaultTimingFor(%d) = %+v, want %+v", c.n, got, c.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("DefaultTimingFor(%d) invalid: %v", c.n, err)
		}
	}
}

// A leader's heartbeats per second stay at most what 16 nodes send, and a
// follower waits as many heartbeats before it suspects, whatever the size.
func TestDefaultTimingKeepsTheLeadersLoadAndTheSuspicionInHeartbeats(t *testing.T) {
	base := DefaultTiming
	limit := float64(TimingPeersPerBase) / base.Heartbeat.Seconds()
	for n := 2; n <= 1000; n++ {
		d := DefaultTimingFor(n)
		if load := float64(n-1) / d.Heartbeat.Seconds(); load > limit*1.01 {
			t.Fatalf("%d nodes: %.0f heartbeats/s from the leader, over %.0f", n, load, limit)
		}
		if ratio := float64(d.Suspicion) / float64(d.Heartbeat); ratio < 4.9 || ratio > 5.1 {
			t.Fatalf("%d nodes: suspicion %v is %.2f heartbeats of %v, want 5", n, d.Suspicion, ratio, d.Heartbeat)
		}
	}
}

func TestGivenTimingFieldsAreKeptWhateverTheSize(t *testing.T) {
	got := Timing{Suspicion: time.Second}.WithDefaultsFor(64)
	if got.Suspicion != time.Second || got.Heartbeat != 420*time.Millisecond {
		t.Fatalf("WithDefaultsFor(64) of a given suspicion: %+v", got)
	}
}
