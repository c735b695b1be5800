package sim

import (
	"math"
	"reflect"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/changroberts"
	_ "github.com/ringleader-dev/ringleader/election/peterson"
)

// Asking for the lines of the messages ahead (warmAhead) changes nothing a
// run computes: a ring at the size where it starts counts the same
// messages, elects the same leader at the same virtual instant, with it as
// without it, under a constant delay (every message on the lane: Peterson)
// and a varying one (messages on the lane and in the heap: Chang–Roberts).
func TestWarmingAheadChangesNothing(t *testing.T) {
	n := warmFrom
	ids, err := Arrange("random", n, 3)
	if err != nil {
		t.Fatal(err)
	}
	for alg, delay := range map[string]string{"peterson": "1ms", "changroberts": "uniform:1ms-3ms"} {
		d, err := ParseDist(delay)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Algorithm: alg, Seed: 3, FaultFree: true, Delay: d}
		s, err := New(Options{Algorithm: alg, Members: ids, Delay: d}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !s.warm {
			t.Fatalf("a cluster of %d nodes does not warm; the test runs at warmFrom", n)
		}
		warm, err := RunComplexity(opts, ids)
		if err != nil {
			t.Fatal(err)
		}
		cold := func() (Complexity, error) {
			defer func(was int) { warmFrom = was }(warmFrom)
			warmFrom = math.MaxInt
			return RunComplexity(opts, ids)
		}
		c, err := cold()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(warm, c) {
			t.Errorf("%s, delay %s, %d nodes: warmed %+v, not warmed %+v", alg, delay, n, warm, c)
		}
		if !warm.Agreed || warm.Leader != election.NodeID(n) {
			t.Errorf("%s, delay %s: leader %d (agreed %v), want %d", alg, delay, warm.Leader, warm.Agreed, n)
		}
	}
}
