package chaos

import (
	"maps"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// TestInForceReplaysToTheWorldAsFound: the faults InForce lists, applied
// to a world where every member runs, give back every part of the fault
// state: down, paused, one-way cuts, loss, delay and skewed clocks.
func TestInForceReplaysToTheWorldAsFound(t *testing.T) {
	members := []election.NodeID{1, 2, 3, 4, 5}
	allUp := func() State {
		s := NewState()
		for _, m := range members {
			s.Up[m] = true
		}
		return s
	}
	found := allUp()
	for _, f := range []Fault{
		{Op: Kill, Nodes: []election.NodeID{5}},
		{Op: Pause, Nodes: []election.NodeID{4}},
		{Op: Partition, Links: [][2]election.NodeID{{1, 3}, {3, 2}}},
		{Op: Loss, Nodes: []election.NodeID{1}, Params: ParamsOf(LossPercent.Of(0.3))},
		{Op: Delay, Nodes: []election.NodeID{2}, Params: ParamsOf(DelayMS.OfDur(20*time.Millisecond), DelayJitter.OfDur(5*time.Millisecond))},
		{Op: Clock, Nodes: []election.NodeID{2}, Params: ParamsOf(ClockRate.Of(0.5))},
		{Op: Clock, Nodes: []election.NodeID{2}, Params: ParamsOf(ClockJump.OfDur(300 * time.Millisecond))},
		{Op: Clock, Nodes: []election.NodeID{3}, Params: ParamsOf(ClockJump.OfDur(-time.Second))},
	} {
		found.Apply(f, members)
	}
	replayed := allUp()
	for _, f := range found.InForce(members) {
		replayed.Apply(f, members)
	}
	if !maps.Equal(replayed.Up, found.Up) || !maps.Equal(replayed.Paused, found.Paused) || !maps.Equal(replayed.Cut, found.Cut) ||
		!maps.EqualFunc(replayed.Net, found.Net, Params.Equal) || !maps.Equal(replayed.Clocks, found.Clocks) {
		t.Fatalf("replaying %+v gives\n%+v\nwant\n%+v", found.InForce(members), replayed, found)
	}
	if got := allUp().InForce(members); len(got) != 0 {
		t.Errorf("a world with nothing in force lists %+v", got)
	}
}
