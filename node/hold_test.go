package node

import (
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/wire"
)

func holdNode(t *testing.T) (*Node, *recorder) {
	t.Helper()
	r := &recorder{}
	n := bareNode(r)
	n.cfg.Cluster = "hold"
	n.members = []election.NodeID{1, 2, 3}
	return n, r
}

func arrive(t *testing.T, n *Node, from election.NodeID, epoch uint64) {
	t.Helper()
	b, err := wire.Encode(n.cfg.Cluster, election.Message{Type: "HEARTBEAT", From: from, To: 1, Epoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	n.receive(b)
}

func received(r *recorder) [][2]uint64 {
	var out [][2]uint64
	for _, ev := range r.events {
		if ev.Kind == election.EventReceive {
			out = append(out, [2]uint64{uint64(ev.Msg.From), ev.Msg.Epoch})
		}
	}
	return out
}

// TestHoldSetHoldsThenDeliversInOrder: messages from a held sender reach
// the machine only when the set stops naming it, then all of them, in the
// order they arrived; others pass meanwhile.
func TestHoldSetHoldsThenDeliversInOrder(t *testing.T) {
	n, r := holdNode(t)
	n.controlNow(t, control.HoldFrom(2, 3))
	for i := uint64(1); i <= 3; i++ {
		arrive(t, n, 2, i)
		arrive(t, n, 3, 10+i)
	}
	if got := received(r); len(got) != 0 {
		t.Fatalf("the machine received %v while 2 and 3 were held", got)
	}
	if st := n.Status(); st.Counters.Received != 0 {
		t.Fatalf("counted %d received while held", st.Counters.Received)
	}
	n.controlNow(t, control.HoldFrom(3))
	if got, want := received(r), [][2]uint64{{2, 1}, {2, 2}, {2, 3}}; !equalPairs(got, want) {
		t.Fatalf("after releasing 2, received %v; want %v", got, want)
	}
	arrive(t, n, 2, 4) // no longer held
	n.controlNow(t, control.HoldFrom())
	want := [][2]uint64{{2, 1}, {2, 2}, {2, 3}, {2, 4}, {3, 11}, {3, 12}, {3, 13}}
	if got := received(r); !equalPairs(got, want) {
		t.Fatalf("after releasing all, received %v; want %v", got, want)
	}
	if len(n.hold.queue) != 0 {
		t.Fatalf("still holds %d", len(n.hold.queue))
	}
}

// TestHoldSetBoundCountsTheOverflow: past control.MaxHeld a held sender's
// messages are dropped and counted; what was held is still delivered.
func TestHoldSetBoundCountsTheOverflow(t *testing.T) {
	n, r := holdNode(t)
	n.controlNow(t, control.HoldFrom(2))
	for i := range uint64(control.MaxHeld + 5) {
		arrive(t, n, 2, i+1)
	}
	if got := n.Status().Counters.Dropped[DropHeldOver]; got != 5 {
		t.Fatalf("dropped %d over the bound, want 5", got)
	}
	n.controlNow(t, control.HoldFrom())
	if got := received(r); len(got) != control.MaxHeld || got[0][1] != 1 || got[control.MaxHeld-1][1] != control.MaxHeld {
		t.Fatalf("released %d messages (first %v), want the first %d in order", len(got), got[:1], control.MaxHeld)
	}
}

// TestHoldFromIsChecked: a hold set may not name the node itself, a
// non-member, or anyone twice.
func TestHoldFromIsChecked(t *testing.T) {
	for _, c := range []control.Request{control.HoldFrom(1), control.HoldFrom(9), control.HoldFrom(2, 2)} {
		b, err := control.Encode(c)
		if err == nil {
			_, err = control.Decode(b, 1, []election.NodeID{1, 2, 3})
		}
		if err == nil {
			t.Errorf("%s accepted", c)
		}
	}
}

func equalPairs(a, b [][2]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
