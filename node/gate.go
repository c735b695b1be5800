package node

import (
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/sirupsen/logrus"
)

// The gate (Config.Gated, chaos.Gate): a node that boots gated joins the
// cluster, subscribes and answers control requests, but its election
// machine has not started — it has no timer and sends nothing — until a
// control request {"start":true}. What peers send it meanwhile, and the
// peer-down hints its routes give, are kept in arrival order and handed to
// the machine when it starts, right after its start event: a message is
// recorded as received then, as the hold set delivers. The harness uses it to put a scenario's opening faults in
// place before the first election, as they are in the simulator.

// Events of the gate's informational lines (docs/logs.md).
const (
	EventGated     = "gated"      // the node booted gated: its machine waits for a start request
	EventGateOpen  = "gate-open"  // the machine started; released says how many kept messages were delivered
	EventGatedOver = "gated-over" // the gate's queue is full: messages are dropped, not kept
)

// DropGatedOver is the reason of a message dropped because a gated node's
// queue was full.
const DropGatedOver = "gated-over"

// gate is a gated node's state: closed until the machine starts, and what
// arrived meanwhile. Owned by the loop goroutine.
type gate struct {
	closed   bool
	queue    []gated
	overflow int
}

// gated is one thing kept for the machine: a message, or (Down set) a
// peer-down hint.
type gated struct {
	m    election.Message
	down election.NodeID
}

// keepHint keeps a peer-down hint that came while the gate was closed. A
// hint past the queue's bound is let go: it is only a hint, and the
// machine's own timeouts find a peer gone.
func (n *Node) keepHint(peer election.NodeID) {
	if len(n.gate.queue) < control.MaxHeld {
		n.gate.queue = append(n.gate.queue, gated{down: peer})
	}
}

// keepGated keeps m, which arrived while the gate was closed, or drops it
// when the queue is full (the hold set's bound, control.MaxHeld).
func (n *Node) keepGated(m election.Message) {
	if len(n.gate.queue) < control.MaxHeld {
		n.gate.queue = append(n.gate.queue, gated{m: m})
		return
	}
	n.dropOverBound(m, DropGatedOver, &n.gate.overflow, len(n.gate.queue), EventGatedOver,
		"gated node's queue full: messages are dropped until its machine starts")
}

// openGate starts the machine of a gated node: the start event, then what
// was kept for it, in arrival order. An open gate stays open.
func (n *Node) openGate() {
	if !n.gate.closed {
		return
	}
	n.gate.closed = false
	kept := n.gate.queue
	n.gate.queue = nil
	f := logrus.Fields{LogReleased: len(kept)}
	if n.gate.overflow > 0 {
		f[LogOverflow] = n.gate.overflow
	}
	n.note(EventGateOpen).WithFields(f).Info("gate opened: the machine starts")
	n.apply(n.step(election.Event{Kind: election.EventStart}))
	for _, g := range kept {
		if g.down != 0 {
			n.apply(n.step(election.Event{Kind: election.EventPeerDown, Peer: g.down}))
			continue
		}
		n.deliver(g.m)
	}
}
