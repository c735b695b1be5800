package sim

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// This file is the simulator's handle for a step-level test driver
// (package step): what is about to happen, one event at a time, and a
// test's own hand on a machine (fire a timer now, hand it an event). The
// physics stay the simulator's: Next processes exactly the event the
// running simulator would process next, with every rule of process.

// PendingKind says what a pending event is.
type PendingKind string

const (
	PendingDeliver PendingKind = "deliver" // a message on the wire
	PendingTimer   PendingKind = "timer"   // an armed timer
	PendingHint    PendingKind = "hint"    // a failure hint (EventPeerDown) on its way
)

// Pending is one event waiting in the queue, as a person reads it.
type Pending struct {
	At   time.Duration
	Kind PendingKind
	// Node is the recipient of a message or hint, or the timer's owner.
	Node election.NodeID
	// From is a message's sender, or the peer a hint is about.
	From  election.NodeID
	Msg   election.Message // deliver only
	Timer string           // timer only
	// Seq is the event's place among the events of its instant; it
	// names the event while it is pending.
	Seq uint64
}

// Outcome says what processing a pending event came to.
type Outcome string

const (
	Delivered Outcome = "delivered" // the recipient's machine took it
	Lost      Outcome = "lost"      // cut, or the recipient is down
	Held      Outcome = "held"      // the recipient is paused: it waits for resume
	Fired     Outcome = "fired"     // a timer or hint reached its machine
)

// Pending lists what the queue holds that will still happen, in the order
// the simulator will process it: messages (including those that will be
// lost on arrival), armed timers at their deadlines, and hints still due.
// Events held by paused nodes are not listed: they wait for a resume.
func (s *Sim) Pending() []Pending {
	var out []Pending
	add := func(e *event) {
		if p, ok := s.pending(e); ok {
			out = append(out, p)
		}
	}
	for i := s.queue.head; i < len(s.queue.lane); i++ {
		add(&s.queue.lane[i])
	}
	for i := s.queue.head2; i < len(s.queue.lane2); i++ {
		add(&s.queue.lane2[i])
	}
	var scratch event
	for _, k := range s.queue.heap {
		add(s.queue.event(k, &scratch))
	}
	slices.SortFunc(out, func(a, b Pending) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Seq, b.Seq))
	})
	return out
}

// pending is e as a Pending, or false for a queued event that will do
// nothing (a disarmed timer, a hint whose cause is over).
func (s *Sim) pending(e *event) (Pending, bool) {
	n := &s.nodes[e.node]
	p := Pending{At: e.at, Node: n.id, Seq: e.seq}
	switch e.kind {
	case evDeliver:
		p.Kind, p.From, p.Msg = PendingDeliver, s.nodes[e.from].id, s.message(e)
		return p, true
	case evHint:
		if !n.up || n.boot != e.boot || !s.hintDue(*e) {
			return p, false
		}
		p.Kind, p.From = PendingHint, s.nodes[e.from].id
		return p, true
	case evTimer:
		if !n.up || n.boot != e.boot {
			return p, false
		}
		t := s.armed[e.node].queuedFor(e.gen)
		if t == nil || t.gen == 0 {
			return p, false
		}
		// A re-armed timer's event carries on to the latest deadline.
		p.Kind, p.Timer, p.At, p.Seq = PendingTimer, t.name, t.at, t.seq
		return p, true
	}
	return p, false
}

// Next processes the next pending event (what Pending lists first),
// advancing the clock to it, and says what it was and what came of it.
// Queued events that would do nothing are processed silently on the way.
// It reports false when nothing is pending.
func (s *Sim) Next() (Pending, Outcome, bool) {
	for s.queue.len() > 0 {
		e := s.queue.pop()
		p, real := s.pending(e)
		if p.Kind == PendingTimer {
			// Due now only at the arming the event was queued for.
			real = real && s.armed[e.node].queuedFor(e.gen).gen == e.gen
		}
		if !real {
			s.process(e) // stale, or a timer moving on to its deadline
			continue
		}
		n := &s.nodes[e.node]
		before := s.counts
		heldBefore := n.heldLen()
		s.process(e)
		out := Fired
		switch {
		case n.heldLen() > heldBefore:
			out = Held
		case p.Kind == PendingDeliver && s.counts.Delivered > before.Delivered:
			out = Delivered
		case p.Kind == PendingDeliver:
			out = Lost
		}
		return p, out, true
	}
	return Pending{}, "", false
}

// Timer is one armed timer of a node.
type Timer struct {
	Name string
	At   time.Duration // when it fires
}

// Timers lists node id's armed timers, soonest first (none for a node that
// is down).
func (s *Sim) Timers(id election.NodeID) []Timer {
	i, ok := s.lookupIndex(id)
	if !ok || !s.nodes[i].up {
		return nil
	}
	var out []Timer
	for _, t := range s.armed[i] {
		if t.gen != 0 {
			out = append(out, Timer{Name: t.name, At: t.at})
		}
	}
	slices.SortFunc(out, func(a, b Timer) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Fire fires node id's armed timer now, ahead of its deadline, as if the
// deadline had come: a test's shortcut past the waiting (etcd raft's tests
// tick a node to its election timeout the same way). The timer is
// disarmed first, so its queued event does nothing.
func (s *Sim) Fire(id election.NodeID, timer string) error {
	n, err := s.running(id)
	if err != nil {
		return err
	}
	t := s.armed[n.idx].find(timer)
	if t == nil || t.gen == 0 {
		return fmt.Errorf("sim: node %d has no armed timer %q (armed: %v)", id, timer, s.Timers(id))
	}
	s.armed[n.idx].disarm(timer)
	s.step(n, election.Event{Kind: election.EventTimer, Timer: timer})
	return nil
}

// Inject hands node id's machine ev now, bypassing the network: a forged
// or stale message, a stray timer, a failure hint the runtime never gave.
// A message is recorded as received, as any message is.
func (s *Sim) Inject(id election.NodeID, ev election.Event) error {
	n, err := s.running(id)
	if err != nil {
		return err
	}
	if ev.Kind == election.EventReceive && s.sink != nil && !s.opts.OmitMessages {
		r := s.nodeRecord(n, history.KindRecv)
		m := ev.Msg.Clone()
		r.Msg = &m
		s.emit(r)
	}
	s.step(n, ev)
	return nil
}

// running is node id when its machine can take an event now.
func (s *Sim) running(id election.NodeID) (*node, error) {
	i, ok := s.lookupIndex(id)
	if !ok {
		return nil, fmt.Errorf("sim: node %d is not a member (members: %s)", id, idsString(s.opts.Members))
	}
	n := &s.nodes[i]
	switch {
	case !s.started:
		return nil, fmt.Errorf("sim: the cluster has not started (call Start first)")
	case !n.up:
		return nil, fmt.Errorf("sim: node %d is down", id)
	case n.paused:
		return nil, fmt.Errorf("sim: node %d is paused", id)
	}
	return n, nil
}
