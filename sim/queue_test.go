package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestQueuePopsInTimeThenScheduleOrder mixes lane and heap pushes with
// pops: whichever way an event came in, events come out by time and, at
// one instant, in the order they were scheduled.
func TestQueuePopsInTimeThenScheduleOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q eventQueue
	var seq uint64
	var now time.Duration
	var want []event
	var got []event
	for round := 0; round < 20000; round++ {
		switch r.IntN(3) {
		case 0, 1:
			seq++
			e := event{at: now + time.Duration(r.IntN(5))*time.Millisecond, seq: seq}
			if r.IntN(2) == 0 {
				q.pushLane(e)
			} else {
				q.push(e)
			}
			want = append(want, e)
		case 2:
			if q.len() > 0 && q.next() < now {
				t.Fatalf("next %v before now %v", q.next(), now)
			}
			if r.IntN(2) == 0 { // popDue: the least event when it is due by end
				end := now + time.Duration(r.IntN(3))*time.Millisecond
				due := q.len() > 0 && q.next() <= end
				e := q.popDue(end)
				if (e != nil) != due {
					t.Fatalf("popDue(%v) = %v with an event due: %v", end, e, due)
				}
				if e != nil {
					now = e.at
					got = append(got, *e)
				}
			} else if q.len() > 0 {
				e := *q.pop()
				now = e.at
				got = append(got, e)
			}
		}
	}
	for q.len() > 0 {
		got = append(got, *q.pop())
	}
	// Every pop took the least pending event, so the popped sequence,
	// read as (at, seq), never goes down.
	for i := 1; i < len(got); i++ {
		if less(qkey{at: got[i].at, seq: got[i].seq}, qkey{at: got[i-1].at, seq: got[i-1].seq}) {
			t.Fatalf("pop %d: (%v, %d) after (%v, %d)", i, got[i].at, got[i].seq, got[i-1].at, got[i-1].seq)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("popped %d events, pushed %d", len(got), len(want))
	}
	slices.SortFunc(got, func(a, b event) int { return int(a.seq) - int(b.seq) })
	for i := range want {
		if got[i].seq != want[i].seq {
			t.Fatalf("event %d lost or doubled", want[i].seq)
		}
	}
}
