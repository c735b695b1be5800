package bully

import (
	"math"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

func TestEpochArithmeticNeverWraps(t *testing.T) {
	for _, c := range []struct{ e, want uint64 }{
		{0, 1}, {41, 42}, {maxEpoch - 1, maxEpoch}, {maxEpoch, maxEpoch}, {math.MaxUint64, math.MaxUint64},
	} {
		if got := nextEpoch(c.e); got != c.want {
			t.Errorf("nextEpoch(%d) = %d, want %d", c.e, got, c.want)
		}
	}
	// A forged HEARTBEAT with the largest epoch there is, from a lower
	// node: a plain leader bullies it "in the next epoch", which must not
	// be 0.
	w := newNet(t, 3, election.NoQuorum)
	w.start()
	w.run(time.Second)
	w.resetCounts()
	w.step(3, election.Event{Kind: election.EventReceive, Msg: election.Message{Type: TypeHeartbeat, From: 1, Epoch: math.MaxUint64}})
	w.run(2 * time.Second)
	for _, m := range w.sent {
		if m.From == 3 && m.Epoch != math.MaxUint64 {
			t.Fatalf("after an epoch of 2^64−1, node 3 sent %s in epoch %d: the epoch wrapped", m.Type, m.Epoch)
		}
	}
}
