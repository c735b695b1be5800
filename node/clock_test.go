package node

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
)

// fakeTime drives a bare node's true time and sees the real timers it
// asks for, so clock faults are tested without waiting.
type fakeTime struct {
	now   time.Duration
	armed []armedReal
}

// armedReal is one real timer the node asked for: after d of true time,
// run fire.
type armedReal struct {
	d    time.Duration
	fire func()
}

func clockedNode(t *testing.T, m election.Machine) (*Node, *fakeTime) {
	t.Helper()
	n := bareNode(m)
	ft := &fakeTime{}
	n.elapsed = func() time.Duration { return ft.now }
	n.afterFunc = func(d time.Duration, f func()) *time.Timer {
		ft.armed = append(ft.armed, armedReal{d: d, fire: f})
		stopped := time.AfterFunc(time.Hour, func() {})
		stopped.Stop()
		return stopped
	}
	return n, ft
}

// last is the true delay of the latest real timer asked for.
func (ft *fakeTime) last(t *testing.T) armedReal {
	t.Helper()
	if len(ft.armed) == 0 {
		t.Fatal("no timer was armed")
	}
	return ft.armed[len(ft.armed)-1]
}

func (n *Node) controlNow(t *testing.T, c control.Request) {
	t.Helper()
	b, err := control.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	n.control(b, "")
}

func setTimerAfter(name string, d time.Duration) election.Effect {
	return election.Effect{Kind: election.EffectSetTimer, Timer: name, After: d}
}

// TestMachineReadsTheFaultedClock: Event.Now is true time at rate 1, then
// runs at half speed after a rate of 0.5, and moves by a jump at once.
func TestMachineReadsTheFaultedClock(t *testing.T) {
	r := &recorder{}
	n, ft := clockedNode(t, r)
	step := func() time.Duration {
		n.step(election.Event{Kind: election.EventStart})
		return r.events[len(r.events)-1].Now
	}

	ft.now = 1234567 * time.Microsecond
	if got := step(); got != ft.now {
		t.Fatalf("unfaulted clock read %v at true %v: want true time exactly", got, ft.now)
	}
	ft.now = time.Second
	n.controlNow(t, control.SetRate(0.5))
	ft.now = 3 * time.Second
	if got, want := step(), 2*time.Second; got != want {
		t.Fatalf("after rate 0.5 at 1s, read %v at true 3s; want %v", got, want)
	}
	n.controlNow(t, control.Jump(500*time.Millisecond))
	if got, want := step(), 2500*time.Millisecond; got != want {
		t.Fatalf("after a +500ms jump, read %v; want %v", got, want)
	}
	n.controlNow(t, control.Jump(-2*time.Second))
	ft.now = 4 * time.Second
	if got, want := step(), 1000*time.Millisecond; got != want {
		t.Fatalf("after a -2s jump and 1s more at half speed, read %v; want %v", got, want)
	}
}

// TestTimerFiresAfterDOverRate: at rate 0.5 a timer of d is a real timer
// of 2d; at rate 2, of d/2.
func TestTimerFiresAfterDOverRate(t *testing.T) {
	n, ft := clockedNode(t, &recorder{})
	n.apply([]election.Effect{setTimerAfter("x", 100*time.Millisecond)})
	if got := ft.last(t).d; got != 100*time.Millisecond {
		t.Fatalf("real speed: a 100ms timer waits %v", got)
	}
	n.controlNow(t, control.SetRate(0.5))
	n.apply([]election.Effect{setTimerAfter("y", 100*time.Millisecond)})
	if got := ft.last(t).d; got != 200*time.Millisecond {
		t.Fatalf("rate 0.5: a 100ms timer waits %v, want 200ms", got)
	}
	n.controlNow(t, control.SetRate(2))
	n.apply([]election.Effect{setTimerAfter("z", 100*time.Millisecond)})
	if got := ft.last(t).d; got != 50*time.Millisecond {
		t.Fatalf("rate 2: a 100ms timer waits %v, want 50ms", got)
	}
}

// TestRateChangeRetimesArmedTimers: a timer armed at real speed and
// slowed down halfway waits out the rest at the new rate, and the firing
// of its first arming, already queued, is stale.
func TestRateChangeRetimesArmedTimers(t *testing.T) {
	r := &recorder{}
	n, ft := clockedNode(t, r)
	n.apply([]election.Effect{setTimerAfter("x", 100*time.Millisecond)})
	first := ft.last(t)
	ft.now = 40 * time.Millisecond
	n.controlNow(t, control.SetRate(0.5))
	if got := ft.last(t).d; got != 120*time.Millisecond {
		t.Fatalf("60ms left at half speed: re-armed for %v, want 120ms", got)
	}
	first.fire() // the old real timer had already fired
	n.handle(<-n.in)
	if len(r.events) != 0 {
		t.Fatalf("the first arming's firing reached the machine: %+v", r.events)
	}
	ft.last(t).fire()
	n.handle(<-n.in)
	if len(r.events) != 1 || r.events[0].Timer != "x" {
		t.Fatalf("the re-armed timer did not fire once: %+v", r.events)
	}
}

// TestForwardJumpFiresDueTimers: a jump forward past a deadline makes that
// timer due at once (it fires through the loop); one further out waits
// for the rest; a backward jump postpones.
func TestForwardJumpFiresDueTimers(t *testing.T) {
	r := &recorder{}
	n, ft := clockedNode(t, r)
	n.apply([]election.Effect{setTimerAfter("near", 100*time.Millisecond), setTimerAfter("far", time.Second)})
	ft.armed = nil
	n.controlNow(t, control.Jump(500*time.Millisecond))
	if len(ft.armed) != 2 || ft.armed[0].d != 500*time.Millisecond || ft.armed[1].d != 0 {
		t.Fatalf("after +500ms, far and near re-armed for %v; want [500ms 0s] (far, near: sorted by name)", delays(ft.armed))
	}
	ft.armed[1].fire()
	n.handle(<-n.in)
	if len(r.events) != 1 || r.events[0].Timer != "near" {
		t.Fatalf("the passed timer did not fire at once: %+v", r.events)
	}
	if r.events[0].Now != 500*time.Millisecond {
		t.Fatalf("it fired with Now %v, want the jumped reading 500ms", r.events[0].Now)
	}

	ft.armed = nil
	n.controlNow(t, control.Jump(-300*time.Millisecond))
	if len(ft.armed) != 1 || ft.armed[0].d != 800*time.Millisecond {
		t.Fatalf("after -300ms, far re-armed for %v; want [800ms]", delays(ft.armed))
	}
}

func delays(a []armedReal) []time.Duration {
	var out []time.Duration
	for _, x := range a {
		out = append(out, x.d)
	}
	return out
}
