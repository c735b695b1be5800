package clock

import (
	"testing"
	"time"
)

const ms = time.Millisecond

func TestRealSpeedReadsTrueTime(t *testing.T) {
	c := New()
	if got := c.Read(1234 * ms); got != 1234*ms {
		t.Fatalf("Read = %v, want 1.234s", got)
	}
	if c.Skewed() {
		t.Fatal("a new clock reports itself skewed")
	}
}

func TestSlowClockFiresTimersLate(t *testing.T) {
	c := New()
	c.SetRate(100*ms, 0.5)
	// At 100 ms the clock reads 100 ms; a 300 ms timer is due at 400 ms on
	// the clock, which a half-speed clock reaches 600 ms of true time later.
	if got := c.Until(100*ms, c.Read(100*ms)+300*ms); got != 600*ms {
		t.Fatalf("Until = %v, want 600ms", got)
	}
	if got := c.Read(700 * ms); got != 400*ms {
		t.Fatalf("Read(700ms) = %v, want 400ms", got)
	}
}

func TestRateChangeIsContinuous(t *testing.T) {
	c := New()
	c.SetRate(0, 2)
	before := c.Read(50 * ms)
	c.SetRate(50*ms, 0.25)
	if after := c.Read(50 * ms); after != before {
		t.Fatalf("reading jumped from %v to %v at a rate change", before, after)
	}
}

func TestJumpForwardMakesDeadlinesDue(t *testing.T) {
	c := New()
	deadline := c.Read(0) + 500*ms
	c.Jump(10*ms, time.Second)
	if got := c.Until(10*ms, deadline); got != 0 {
		t.Fatalf("Until after a 1 s jump = %v, want 0 (due)", got)
	}
	c.Jump(10*ms, -2*time.Second)
	if got := c.Read(10 * ms); got != -990*ms {
		t.Fatalf("Read after jumping back = %v, want -990ms", got)
	}
}

func TestChecks(t *testing.T) {
	for _, r := range []float64{0, -1, MaxRate * 2} {
		if CheckRate(r) == nil {
			t.Errorf("CheckRate(%v) accepted", r)
		}
	}
	if CheckRate(0.4) != nil || CheckJump(-time.Hour) != nil {
		t.Error("a sound rate or jump refused")
	}
	if CheckJump(MaxJump+1) == nil {
		t.Error("CheckJump accepted more than MaxJump")
	}
}
