package rings_test

import (
	"errors"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// TestFaultFreeRunsCountTheSameElection: a complexity run without the
// failure detector (Options.FaultFree, the default of `sim complexity`)
// sends exactly the election and announce messages of a run with it, on
// every ring algorithm and arrangement, and nothing else.
func TestFaultFreeRunsCountTheSameElection(t *testing.T) {
	for _, name := range ringAlgorithms {
		for _, arr := range []string{"best", "worst", "random"} {
			for _, n := range []int{1, 2, 7, 64} {
				ids, err := sim.Arrange(arr, n, 3)
				if err != nil {
					t.Fatal(err)
				}
				with, err := sim.RunComplexity(sim.Options{Algorithm: name, Seed: 3}, ids)
				if err != nil {
					t.Fatal(err)
				}
				without, err := sim.RunComplexity(sim.Options{Algorithm: name, Seed: 3, FaultFree: true}, ids)
				if err != nil {
					t.Fatal(err)
				}
				if with.Messages != without.Messages || with.AnnounceMessages != without.AnnounceMessages || with.Leader != without.Leader || !without.Agreed || !without.Quiet {
					t.Errorf("%s %s n=%d: with the failure detector %d election, %d announce, leader %d; without %d, %d, leader %d (agreed %v, quiet %v)",
						name, arr, n, with.Messages, with.AnnounceMessages, with.Leader, without.Messages, without.AnnounceMessages, without.Leader, without.Agreed, without.Quiet)
				}
				if without.MaintenanceMessages != 0 {
					t.Errorf("%s %s n=%d: %d maintenance messages without the failure detector (%v)", name, arr, n, without.MaintenanceMessages, without.ByType)
				}
			}
		}
	}
}

// TestComplexityCapsStopARunAndSaySo: a run that reaches its message or
// virtual-time cap returns the counts so far and a CapError naming the cap.
func TestComplexityCapsStopARunAndSaySo(t *testing.T) {
	ids, _ := sim.Arrange("worst", 300, 1)
	c, err := sim.RunComplexityWithin(sim.Options{Algorithm: "changroberts", Seed: 1, FaultFree: true}, ids, sim.Limits{MaxMessages: 1000})
	var capped *sim.CapError
	if !errors.As(err, &capped) || capped.Cap != "messages" || c.Quiet || c.Messages < 1000 {
		t.Fatalf("message cap: err %v, quiet %v, %d messages; want a messages CapError after at least 1000", err, c.Quiet, c.Messages)
	}
	_, err = sim.RunComplexityWithin(sim.Options{Algorithm: "changroberts", Seed: 1, FaultFree: true}, ids, sim.Limits{MaxTime: 20 * 1e6})
	if !errors.As(err, &capped) || capped.Cap != "time" {
		t.Fatalf("time cap: err %v, want a time CapError", err)
	}
	var calls int
	_, err = sim.RunComplexityWithin(sim.Options{Algorithm: "changroberts", Seed: 1, FaultFree: true}, ids, sim.Limits{Progress: func(sim.Progress) { calls++ }, ProgressEvery: 1})
	if err != nil || calls == 0 {
		t.Fatalf("progress: err %v, %d calls; want calls and no error", err, calls)
	}
}

// TestFaultFreeClusterRefusesFaults: with no failure detector a fault
// would go unnoticed for ever, so the simulator refuses it.
func TestFaultFreeClusterRefusesFaults(t *testing.T) {
	s, err := sim.New(sim.Options{Algorithm: "changroberts", Members: []election.NodeID{1, 2, 3}, FaultFree: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if err := s.Kill(3); err == nil {
		t.Fatal("a kill in a fault-free cluster was carried out")
	}
}
