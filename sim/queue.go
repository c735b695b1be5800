package sim

import (
	"math"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

type eventKind uint8

const (
	evDeliver eventKind = iota + 1
	evTimer
	evHint // a failure hint (hints.go): from is the peer it is about
)

// event is one thing that will happen at a virtual instant. Events are kept
// by value in the heap so that a run of a hundred thousand messages does not
// allocate one object per message, and they are kept small (80 bytes): a
// million-node ring has a million of them in flight at once, and the queue
// copies one on every push.
type event struct {
	at  time.Duration
	seq uint64 // tie-break: events at the same instant run in the order they were scheduled
	// node is the index of the recipient (deliver) or the timer's owner.
	node int32
	from int32
	// boot and gen identify the timer incarnation; a stale one is ignored.
	// A timer event names its timer by gen alone (armed.queuedAt): the
	// node's armed list has the name.
	boot uint32
	kind eventKind
	// arrived marks a message that already crossed the network and was
	// held by a paused node; on resume it is delivered whatever the links
	// say now, as packets buffered in a frozen process's socket are.
	arrived bool
	// counted: an election or announce message (RunUntilQuiet waits
	// for these to land).
	counted bool
	// hint is what a hint event stands for (hints.go).
	hint hintCause
	gen  uint64
	// msg is the message of a delivery, without what the event already
	// says (its sender and recipient) or keeps elsewhere (its type's name
	// and its reference fields): Sim.message rebuilds it.
	msg packedMsg
}

// packedMsg is an election.Message on the queue. From and To are the
// event's from and node; Type is an index into Sim.names; Members and
// Payload, which few messages carry, sit out of line in Sim.refs.
type packedMsg struct {
	epoch     uint64
	seq       uint64
	candidate election.NodeID
	phase     int32
	hop       int32
	typ       uint16
	dir       election.Dir
	reply     bool
	// refs is the index + 1 of the message's Members and Payload in
	// Sim.refs; 0: it has neither.
	refs int32
}

// eventQueue orders events by (at, seq). Most events are messages
// scheduled a constant delay ahead: their times never go down, so they
// join a FIFO lane in O(1). Everything else (timers, hints, messages with
// varying delays that would land before every lane's last event) goes to
// a binary min-heap. pop takes the earliest of the heads, so the order is
// exactly (at, seq) whichever way an event came in. The lane is what makes
// a million-node election linear: a heap of a million messages costs
// twenty cache-missing levels per pop.
//
// A second lane takes a message that would land before the first lane's
// last one: with delays drawn from a range (the explorer's 0.5–5 ms),
// about half the messages missed the one lane, and a message through the
// heap cost six times one through a lane.
type eventQueue struct {
	heap []qkey
	slab []event
	free []int32
	// lane holds events in (at, seq) order from lane[head] on; lane2
	// and head2 are the second lane.
	lane  []event
	head  int
	lane2 []event
	head2 int
	// timers holds the heap's timer events by what they are beyond
	// their key (timerFree: the unused entries): every node of a
	// million-node ring has a timer queued all the time, and 16 bytes
	// here and a key is what each costs, not a slab slot of 80.
	timers    []timerRef
	timerFree []int32
	// timer is the timer event popHeap last made from its entry.
	timer event
}

// The heap holds small keys; the events themselves sit in a slab (or,
// timers, in timers) with a free list, so a sift moves 24 bytes rather
// than a whole message, and a run of a million messages reuses the same
// few slots instead of allocating.
type qkey struct {
	at  time.Duration
	seq uint64
	// slot is the event's place in the slab; a timer's is ^i for
	// timers[i].
	slot int32
}

// timerRef is a queued timer event beyond its key.
type timerRef struct {
	gen  uint64
	node int32
	boot uint32
}

// event is the event k stands for: in the slab, or a timer's made from
// its entry into *scratch.
func (q *eventQueue) event(k qkey, scratch *event) *event {
	if k.slot >= 0 {
		return &q.slab[k.slot]
	}
	t := &q.timers[^k.slot]
	*scratch = event{at: k.at, seq: k.seq, node: t.node, boot: t.boot, kind: evTimer, gen: t.gen}
	return scratch
}

func (q *eventQueue) len() int {
	return len(q.heap) + len(q.lane) - q.head + len(q.lane2) - q.head2
}

// next is the time of the earliest event; only valid when len() > 0.
func (q *eventQueue) next() time.Duration {
	k, _ := q.first()
	return k.at
}

// Where the earliest event is (popDue).
const (
	inHeap = iota
	inLane
	inLane2
)

// first is the key of the earliest event; false when the queue is empty.
func (q *eventQueue) first() (k qkey, ok bool) {
	if len(q.heap) > 0 {
		k, ok = q.heap[0], true
	}
	if q.head < len(q.lane) {
		if l := q.lane[q.head].key(); !ok || less(l, k) {
			k, ok = l, true
		}
	}
	if q.head2 < len(q.lane2) {
		if l := q.lane2[q.head2].key(); !ok || less(l, k) {
			k, ok = l, true
		}
	}
	return k, ok
}

// key is e's place in the order.
func (e *event) key() qkey { return qkey{at: e.at, seq: e.seq} }

func less(a, b qkey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// pushLane queues a message event: on a lane when it keeps that lane in
// order (it is no earlier than the lane's last event; its seq is the
// newest), else on the heap.
func (q *eventQueue) pushLane(e event) { *q.placeLane(e.at, e.seq) = e }

// push queues an event on the heap.
func (q *eventQueue) push(e event) {
	if e.kind == evTimer {
		q.pushTimer(e.at, e.seq, e.node, e.boot, e.gen)
		return
	}
	*q.place(e.at, e.seq) = e
}

// pushTimer queues a timer event on the heap.
func (q *eventQueue) pushTimer(at time.Duration, seq uint64, node int32, boot uint32, gen uint64) {
	t := timerRef{gen: gen, node: node, boot: boot}
	var i int32
	if n := len(q.timerFree); n > 0 {
		i = q.timerFree[n-1]
		q.timerFree = q.timerFree[:n-1]
		q.timers[i] = t
	} else {
		i = int32(len(q.timers))
		q.timers = append(grown(q.timers), t)
	}
	q.pushKey(qkey{at: at, seq: seq, slot: ^i})
}

// placeLane makes room for a message event due at at with seq seq, where
// pushLane would put it, and returns it zeroed but for at and seq, for the
// caller to fill in before the next push or pop. A message is built in its
// place rather than built, passed and copied in: the explorer queues some
// 700 messages a schedule.
func (q *eventQueue) placeLane(at time.Duration, seq uint64) *event {
	if q.head == len(q.lane) || q.lane[len(q.lane)-1].at <= at {
		return placeOn(&q.lane, &q.head, at, seq)
	}
	if q.head2 == len(q.lane2) || q.lane2[len(q.lane2)-1].at <= at {
		return placeOn(&q.lane2, &q.head2, at, seq)
	}
	return q.place(at, seq)
}

// placeOn appends an event to the lane whose live part is (*lane)[*head:],
// as placeLane returns it.
func placeOn(lane *[]event, head *int, at time.Duration, seq uint64) *event {
	if *head == len(*lane) {
		*lane, *head = (*lane)[:0], 0
	}
	if len(*lane) == cap(*lane) {
		roomOnLane(lane, head)
	}
	// Into place rather than by append, which built the event aside
	// and copied it in.
	n := len(*lane)
	*lane = (*lane)[:n+1]
	e := &(*lane)[n]
	*e = event{at: at, seq: seq}
	return e
}

// roomOnLane makes room on a full lane: it moves the live part down when
// at least a quarter of the lane is spent, else doubles the lane (an
// empty lane with no room gets room for 64). The
// lane of a million-node ring holds a million messages at a time: grown
// by append a quarter at a time, it left four times its size in old
// arrays for the collector, which is what the process's resident set
// came to.
func roomOnLane(lane *[]event, head *int) {
	live := (*lane)[*head:]
	if *head > 0 && *head*4 >= len(*lane) {
		n := copy(*lane, live)
		*lane, *head = (*lane)[:n], 0
		return
	}
	l := make([]event, len(live), max(2*cap(*lane), 64))
	copy(l, live)
	*lane, *head = l, 0
}

// grown is s with room for one more element: doubled when full, where
// append grows large slices by a quarter and leaves more behind.
func grown[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	g := make([]T, len(s), max(2*cap(s), 16))
	copy(g, s)
	return g
}

// place makes room on the heap for an event due at at with seq seq, and
// returns it as placeLane does. Not for timers: pushTimer.
func (q *eventQueue) place(at time.Duration, seq uint64) *event {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = event{at: at, seq: seq}
	} else {
		slot = int32(len(q.slab))
		q.slab = append(grown(q.slab), event{at: at, seq: seq})
	}
	q.pushKey(qkey{at: at, seq: seq, slot: slot})
	return &q.slab[slot]
}

// pushKey puts k on the heap.
func (q *eventQueue) pushKey(k qkey) {
	h := append(grown(q.heap), k)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(k, h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = k
	q.heap = h
}

// popDue is pop when the earliest event is due no later than end, else
// nil: the simulator's run loops asked len, next and pop in turn, and each
// compared the lanes' heads with the heap's.
func (q *eventQueue) popDue(end time.Duration) *event {
	// first, written out: this is the run loops' every event.
	var k qkey
	from, ok := inHeap, len(q.heap) > 0
	if ok {
		k = q.heap[0]
	}
	if q.head < len(q.lane) {
		if l := &q.lane[q.head]; !ok || l.at < k.at || l.at == k.at && l.seq < k.seq {
			k.at, k.seq, from, ok = l.at, l.seq, inLane, true
		}
	}
	if q.head2 < len(q.lane2) {
		if l := &q.lane2[q.head2]; !ok || l.at < k.at || l.at == k.at && l.seq < k.seq {
			k.at, k.seq, from, ok = l.at, l.seq, inLane2, true
		}
	}
	if !ok || k.at > end {
		return nil
	}
	switch from {
	case inLane:
		q.head++
		return &q.lane[q.head-1]
	case inLane2:
		q.head2++
		return &q.lane2[q.head2-1]
	}
	return q.popHeap()
}

// pop removes the earliest event and returns it in place, without a copy
// (popping was a tenth of the explorer's time):
// the pointer is valid until the next push, which may reuse its slot.
func (q *eventQueue) pop() *event { return q.popDue(math.MaxInt64) }

// popHeap removes the heap's earliest event and returns it in place.
func (q *eventQueue) popHeap() *event {
	h := q.heap
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	if len(h) > 0 {
		i := 0
		for {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				m = r
			}
			if !less(h[m], last) {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = last
	}
	q.heap = h
	if top.slot < 0 {
		q.timerFree = append(q.timerFree, ^top.slot)
		return q.event(top, &q.timer)
	}
	q.free = append(q.free, top.slot)
	return &q.slab[top.slot]
}

// reset empties the queue and keeps its memory.
func (q *eventQueue) reset() {
	q.heap = q.heap[:0]
	q.slab = q.slab[:0]
	q.free = q.free[:0]
	q.timers, q.timerFree = q.timers[:0], q.timerFree[:0]
	q.lane, q.head = q.lane[:0], 0
	q.lane2, q.head2 = q.lane2[:0], 0
}
