package node

import (
	"io"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/sirupsen/logrus"
)

// recorder is a machine that records the events it is stepped with.
type recorder struct{ events []election.Event }

func (r *recorder) Step(ev election.Event) []election.Effect {
	r.events = append(r.events, ev)
	return nil
}
func (r *recorder) View() election.View { return election.View{} }

// bareNode is a node without transport whose loop the test drives by hand.
func bareNode(m election.Machine) *Node {
	n := &Node{
		cfg:      Config{ID: 1, Peers: []Peer{{ID: 1, Host: "x", Port: 1}}},
		members:  []election.NodeID{1},
		m:        m,
		timers:   map[string]*armedTimer{},
		down:     map[election.NodeID]bool{},
		in:       make(chan input, 16),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		stats:    newStats(),
		log:      logrus.New(),
		drops:    newDropLog(),
		clk:      clock.New(),
		started:  time.Now(),
		dropFrom: map[election.NodeID]bool{},
	}
	n.log.Out = io.Discard
	return n
}

func setTimer(name string) election.Effect {
	return election.Effect{Kind: election.EffectSetTimer, Timer: name, After: 0}
}

// TestCancelledOrReplacedTimerNeverFiresStale: a firing already queued for
// the loop is discarded when the timer was cancelled or re-armed after it,
// and a current firing is delivered exactly once.
func TestCancelledOrReplacedTimerNeverFiresStale(t *testing.T) {
	r := &recorder{}
	n := bareNode(r)

	// Cancelled after its firing was queued.
	n.apply([]election.Effect{setTimer("x")})
	fired := <-n.in
	n.apply([]election.Effect{{Kind: election.EffectCancelTimer, Timer: "x"}})
	n.handle(fired)
	if len(r.events) != 0 {
		t.Fatalf("a cancelled timer fired: %+v", r.events)
	}

	// Replaced (by a far-off arming) after its firing was queued.
	n.apply([]election.Effect{setTimer("x")})
	fired = <-n.in
	n.apply([]election.Effect{{Kind: election.EffectSetTimer, Timer: "x", After: 1 << 62}})
	n.handle(fired)
	if len(r.events) != 0 {
		t.Fatalf("a replaced timer fired: %+v", r.events)
	}

	// Re-armed to fire now: fires once, and a duplicate is ignored.
	n.apply([]election.Effect{setTimer("x")})
	fired = <-n.in
	n.handle(fired)
	n.handle(fired)
	if len(r.events) != 1 || r.events[0].Kind != election.EventTimer || r.events[0].Timer != "x" {
		t.Fatalf("events %+v, want one timer x", r.events)
	}
	for _, at := range n.timers {
		at.t.Stop()
	}
}

// TestPeerDownHintIsDeliveredOncePerOutage: repeated hints for a peer reach
// the machine once, until the peer is seen again.
func TestPeerDownHintIsDeliveredOncePerOutage(t *testing.T) {
	r := &recorder{}
	n := bareNode(r)
	down := input{kind: inPeerDown, peer: 2, source: "no-responders"}
	n.handle(down)
	n.handle(down)
	if len(r.events) != 1 || r.events[0].Kind != election.EventPeerDown || r.events[0].Peer != 2 {
		t.Fatalf("events %+v, want one peer-down for 2", r.events)
	}
	n.handle(input{kind: inPeerUp, peer: 2})
	n.handle(down)
	if len(r.events) != 2 {
		t.Fatalf("events %+v, want a second peer-down after the peer came back", r.events)
	}
	n.handle(input{kind: inPeerDown, peer: 1})
	if len(r.events) != 2 {
		t.Fatalf("a hint about the node itself reached the machine: %+v", r.events)
	}
}
