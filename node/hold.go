package node

import (
	"maps"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/sirupsen/logrus"
)

// The hold set is the receiving end of a jam (chaos.Jam, docs/node.md
// "control"): election messages from the senders it names are held on
// arrival, in arrival order, and delivered through the normal receive path
// — recorded as received at that moment — as soon as a control request
// replaces the set with one that no longer names their sender. Holding at
// the receiver rather than in the network keeps the NATS routes up: a
// route whose pings went unanswered for a second would close, and what it
// held would be lost rather than delivered late.

// The node holds at most control.MaxHeld messages: past it a message from
// a held sender is counted as dropped (reason DropHeldOver) and not held;
// the first such drop of a hold is logged, with how many there were when
// the set releases them.

// Events and keys of the hold set's informational lines (docs/logs.md).
const (
	EventHoldFrom = "hold-from" // the hold set was replaced; released says how many held messages were delivered
	EventHeldOver = "held-over" // the hold queue is full: messages are dropped, not held
	LogHoldFrom   = "hold_from"
	LogReleased   = "released"
	LogHeld       = "held"
	LogOverflow   = "overflow"
)

// DropHeldOver is the reason of a message dropped because the hold queue
// was full.
const DropHeldOver = "held-over"

// holdSet is the senders held, what is held, and the overflow since the
// queue was last below its bound. Owned by the loop goroutine.
type holdSet struct {
	from     map[election.NodeID]bool
	queue    []election.Message
	overflow int
}

// holdMessage holds m, from a sender in the hold set, or drops it when the
// queue is full.
func (n *Node) holdMessage(m election.Message) {
	if len(n.hold.queue) < control.MaxHeld {
		n.hold.queue = append(n.hold.queue, m)
		return
	}
	n.dropOverBound(m, DropHeldOver, &n.hold.overflow, len(n.hold.queue), EventHeldOver,
		"hold queue full: messages from held senders are dropped, not held, until it is released")
}

// dropOverBound drops m, which found a queue of held messages at its bound
// (control.MaxHeld): counted under reason, added to the queue's overflow,
// and logged as event with message msg for the first of a run of them.
func (n *Node) dropOverBound(m election.Message, reason string, overflow *int, held int, event, msg string) {
	n.mu.Lock()
	n.stats.Dropped[reason]++
	n.mu.Unlock()
	*overflow++
	if *overflow == 1 {
		n.note(event).WithFields(logrus.Fields{LogHeld: held, "from": m.From, "type": m.Type}).Warn(msg)
	}
}

// setHold replaces the hold set with ids and delivers, in the order they
// arrived, the held messages whose sender it no longer names.
func (n *Node) setHold(ids []election.NodeID) {
	n.hold.from = make(map[election.NodeID]bool, len(ids))
	for _, id := range ids {
		n.hold.from[id] = true
	}
	var release []election.Message
	kept := n.hold.queue[:0]
	for _, m := range n.hold.queue {
		if n.hold.from[m.From] {
			kept = append(kept, m)
		} else {
			release = append(release, m)
		}
	}
	clear(n.hold.queue[len(kept):])
	n.hold.queue = kept
	f := logrus.Fields{LogHoldFrom: n.holdList(), LogReleased: len(release), LogHeld: len(kept)}
	if n.hold.overflow > 0 && len(release) > 0 {
		f[LogOverflow] = n.hold.overflow
		n.hold.overflow = 0
	}
	n.note(EventHoldFrom).WithFields(f).Info("hold set replaced")
	for _, m := range release {
		n.deliver(m)
	}
}

// holdList is the hold set, ascending (never nil, so it logs as []).
func (n *Node) holdList() []election.NodeID {
	return slices.Sorted(maps.Keys(n.hold.from))
}
