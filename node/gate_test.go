package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/node/control"
)

// gatedNode is a node as its loop leaves one that booted gated: the
// machine not started.
func gatedNode(t *testing.T) (*Node, *recorder) {
	t.Helper()
	n, r := holdNode(t)
	n.cfg.Gated = true
	n.gate.closed = true
	return n, r
}

// TestGatedMachineStartsOnRequestThenHearsWhatCameInOrder: a gated node's
// machine sees nothing — no message, no hint — until a start request;
// then its start event, and what came meanwhile in arrival order; a
// second start request starts nothing again.
func TestGatedMachineStartsOnRequestThenHearsWhatCameInOrder(t *testing.T) {
	n, r := gatedNode(t)
	arrive(t, n, 2, 1)
	n.handle(input{kind: inPeerDown, peer: 3, source: "route"})
	arrive(t, n, 3, 7)
	arrive(t, n, 2, 2)
	if len(r.events) != 0 {
		t.Fatalf("the gated machine saw %v before its start", r.events)
	}
	if got := n.Status().Counters.Received; got != 0 {
		t.Fatalf("counted %d received before the start", got)
	}
	n.controlNow(t, control.Start())
	if n.gate.closed {
		t.Fatalf("the gate is closed after the start")
	}
	want := []string{"start", "recv 2/1", "down 3", "recv 3/7", "recv 2/2"}
	if got := eventList(r); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the machine saw %v; want %v", got, want)
	}
	if got := n.Status().Counters.Received; got != 3 {
		t.Fatalf("counted %d received after the start, want 3", got)
	}
	n.controlNow(t, control.Start())
	arrive(t, n, 2, 3)
	if got := eventList(r); len(got) != len(want)+1 || got[len(got)-1] != "recv 2/3" {
		t.Fatalf("after a second start and a message, the machine saw %v; want one start and the message delivered at once", got)
	}
}

// TestGatedStartComesAfterTheRestOfItsRequest: a start sent with a drop
// set starts the machine with the drop set in place, so a kept message
// from a peer it now drops is still delivered (it came before the cut),
// and one after it is dropped.
func TestGatedStartComesAfterTheRestOfItsRequest(t *testing.T) {
	n, r := gatedNode(t)
	arrive(t, n, 2, 1)
	req := control.DropFrom(2)
	req.Start = true
	n.controlNow(t, req)
	arrive(t, n, 2, 2)
	if got, want := eventList(r), []string{"start", "recv 2/1"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Fatalf("the machine saw %v; want %v", got, want)
	}
	if got := n.Status().Counters.Dropped[DropCut]; got != 1 {
		t.Fatalf("dropped %d as cut after the start, want 1", got)
	}
}

// TestGatedQueueIsBounded: past control.MaxHeld a gated node drops and
// counts what arrives; what it kept is delivered at the start.
func TestGatedQueueIsBounded(t *testing.T) {
	n, r := gatedNode(t)
	for i := range uint64(control.MaxHeld + 3) {
		arrive(t, n, 2, i+1)
	}
	if got := n.Status().Counters.Dropped[DropGatedOver]; got != 3 {
		t.Fatalf("dropped %d over the bound, want 3", got)
	}
	n.controlNow(t, control.Start())
	if got := received(r); len(got) != control.MaxHeld || got[0][1] != 1 || got[len(got)-1][1] != control.MaxHeld {
		t.Fatalf("delivered %d at the start, want the first %d in order", len(got), control.MaxHeld)
	}
}

// TestStartAloneIsARequest: {"start":true} is a whole request; a request
// that changes nothing is still refused.
func TestStartAloneIsARequest(t *testing.T) {
	b, err := control.Encode(control.Start())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control.Decode(b, 1, []election.NodeID{1, 2}); err != nil {
		t.Fatalf("start refused: %v", err)
	}
	if _, err := control.Decode([]byte(`{"v":1,"start":false}`), 1, []election.NodeID{1, 2}); err == nil {
		t.Fatal(`{"start":false} accepted: it changes nothing`)
	}
}

// TestGatedClusterElectsOnlyWhatWasStarted: three gated nodes over real
// NATS; 1 and 2 started agree on 2 for several heartbeats while 3, booted
// first, neither sends nor views; once started, 3 hears what 1 and 2 sent
// it meanwhile, and every node follows 3.
func TestGatedClusterElectsOnlyWhatWasStarted(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.gated = true
	c.start(3)
	c.start(1, 2)
	for _, id := range []election.NodeID{1, 2, 3} {
		c.awaitLog("every node logs that it booted gated", func(l logLine) bool { return l.node == id && isEvent(l, EventGated) })
	}
	c.control(1, control.Start())
	c.control(2, control.Start())
	// Several of 2's heartbeats at 1, and none of 3's anywhere: 3's
	// machine has not started, though its process has run all along.
	var last time.Time
	for range 5 {
		l := c.awaitLog("node 1 hears 2 again", func(l logLine) bool {
			return l.node == 1 && isMsg(l, history.KindRecv, 2, 1) && l.at.After(last)
		})
		last = l.at
	}
	for _, l := range c.allLines() {
		if l.node == 3 && l.ok && (l.rec.Kind == history.KindSend || l.rec.Kind == history.KindView || l.rec.Kind == history.KindRecv) {
			t.Fatalf("gated node 3 acted before its start: %s", l.raw)
		}
		if l.node != 3 && isMsg(l, history.KindRecv, 3, l.node) {
			t.Fatalf("a message from gated node 3 arrived: %s", l.raw)
		}
	}
	if v := c.node(1).View(); v.Leader != 2 {
		t.Fatalf("node 1 views %d with 3 gated, want 2", v.Leader)
	}
	if rep := c.control(3, control.DropFrom()); !rep.Gated {
		t.Fatal("node 3 answered not gated before its start")
	}
	rep := c.control(3, control.Start())
	if rep.Gated {
		t.Fatal("node 3 answered gated after its start")
	}
	c.awaitLeader(3)
	open := c.awaitLog("node 3 logs its gate opening", func(l logLine) bool { return l.node == 3 && isEvent(l, EventGateOpen) })
	if strings.Contains(open.raw, `"released":0`) {
		t.Fatalf("node 3 kept nothing of its peers' heartbeats: %s", open.raw)
	}
}

// eventList is what the recorder's machine saw, in words.
func eventList(r *recorder) []string {
	var out []string
	for _, ev := range r.events {
		switch ev.Kind {
		case election.EventStart:
			out = append(out, "start")
		case election.EventPeerDown:
			out = append(out, fmt.Sprintf("down %d", ev.Peer))
		case election.EventReceive:
			out = append(out, fmt.Sprintf("recv %d/%d", ev.Msg.From, ev.Msg.Epoch))
		}
	}
	return out
}
