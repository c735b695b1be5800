// Package clock is the one model of a faulted node clock, shared by the
// simulator (virtual time) and the node runtime (real time): what the
// election machine reads as Event.Now, and when its timers fire.
//
// A node's clock reads offset + rate × true elapsed time, piecewise: a
// clock fault changes the rate from now on, or jumps the reading by a
// signed amount. Timers are deadlines on the node's clock, so a timer set
// for d fires after d/rate of true time, a rate change re-times every armed
// timer, and a forward jump fires at once every timer whose deadline it
// passes (a backward one postpones them).
//
// Only the machine's view of time is faulted. Histories keep true time, so
// the checkers compare real instants.
package clock

import (
	"fmt"
	"math"
	"time"
)

// Rate bounds: a clock may run from a thousandth to a thousand times real
// speed. Outside that a fault stops being a drift and becomes a stopped or
// runaway clock, which timers at d/rate cannot express.
const (
	MinRate = 0.001
	MaxRate = 1000.0
	// MaxJump bounds one jump either way (a day), so that a reading stays
	// far from time.Duration's range.
	MaxJump = 24 * time.Hour
)

// CheckRate refuses a rate outside (0, ∞) and the bounds above.
func CheckRate(r float64) error {
	if math.IsNaN(r) || math.IsInf(r, 0) || r < MinRate || r > MaxRate {
		return fmt.Errorf("clock rate %v: want a factor from %g to %g (1 is real speed, 0.5 half speed)", r, MinRate, MaxRate)
	}
	return nil
}

// CheckJump refuses a jump beyond MaxJump either way.
func CheckJump(d time.Duration) error {
	if d > MaxJump || d < -MaxJump {
		return fmt.Errorf("clock jump %v: at most %v either way", d, MaxJump)
	}
	return nil
}

// Clock maps true elapsed time (from a fixed origin: the simulator's
// start, the node process's start) to the node's reading. The zero value
// is not usable; New gives a clock at real speed.
type Clock struct {
	// The clock read base at true instant since, and runs at rate.
	since time.Duration
	base  time.Duration
	rate  float64
}

// New is a clock at real speed that reads true elapsed time.
func New() Clock { return Clock{rate: 1} }

// Rate is the clock's current rate.
func (c Clock) Rate() float64 { return c.rate }

// Skewed reports whether the clock differs from true time in any way.
func (c Clock) Skewed() bool { return c.rate != 1 || c.base != c.since }

// Read is the node's reading at true elapsed time t (t ≥ the last change).
func (c Clock) Read(t time.Duration) time.Duration {
	return c.base + scale(t-c.since, c.rate)
}

// SetRate changes the rate from true instant t on; the reading is
// continuous.
func (c *Clock) SetRate(t time.Duration, rate float64) {
	c.base, c.since, c.rate = c.Read(t), t, rate
}

// Jump moves the reading by d at true instant t.
func (c *Clock) Jump(t time.Duration, d time.Duration) {
	c.base, c.since = c.Read(t)+d, t
}

// Until is the true time from t until the clock reads deadline: zero when
// it already does.
func (c Clock) Until(t time.Duration, deadline time.Duration) time.Duration {
	left := deadline - c.Read(t)
	if left <= 0 {
		return 0
	}
	d := time.Duration(math.Ceil(float64(left) / c.rate))
	if d < 1 {
		d = 1
	}
	return d
}

// scale is d × rate, exact for rate 1 (the common case keeps every
// reading byte-identical to true time).
func scale(d time.Duration, rate float64) time.Duration {
	if rate == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) * rate))
}
