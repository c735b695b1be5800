package chaos

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
)

// The values fault kinds carry (Kind.Params), each defined once: how a
// scenario file writes it (its YAML key), how `ringleader fault` takes it
// (the first word after the operation, or a flag), how it is read into a
// Spec and written back. The scenario parser, the words of `ringleader
// fault`, the scenario writer and help all go through these.

var (
	percentParam = Param{
		Key: "percent", Required: true,
		Help: "the percentage of packets dropped, 1 to 100 (0 removes loss)",
		parse: func(text string, sp *Spec) error {
			pct, err := strconv.ParseFloat(strings.TrimSuffix(text, "%"), 64)
			if err != nil || math.IsNaN(pct) {
				return fmt.Errorf("%q is not a percentage (10 or 10%%); want 0 (no loss) or 1 to 100", text)
			}
			if pct < 0 || pct > 100 || (pct > 0 && pct < 1) {
				return fmt.Errorf("want 0 (no loss) or a percentage in [1, 100] (the container rules drop whole percents), got %q", text)
			}
			sp.Loss = pct / 100
			return nil
		},
		text: func(sp Spec) string { return strconv.FormatFloat(sp.Loss*100, 'f', -1, 64) },
	}
	msParam = Param{
		Key: "ms", Required: true, Metavar: "DURATION",
		Help: "the added latency in milliseconds, or a duration on the command line (0 removes delay)",
		parse: func(text string, sp *Spec) error {
			d, err := millis(text)
			if err != nil {
				return err
			}
			sp.Delay = d
			return nil
		},
		text: func(sp Spec) string { return strconv.FormatInt(sp.Delay.Milliseconds(), 10) },
	}
	jitterParam = Param{
		Key: "jitter_ms", Flag: "jitter", Metavar: "DURATION",
		Help: "the spread around the delay, in milliseconds or a duration on the command line",
		parse: func(text string, sp *Spec) error {
			d, err := millis(text)
			if err != nil {
				return err
			}
			sp.Jitter = d
			return nil
		},
		text: func(sp Spec) string {
			if sp.Jitter == 0 {
				return ""
			}
			return strconv.FormatInt(sp.Jitter.Milliseconds(), 10)
		},
	}
	rateParam = Param{
		Key: "rate", Flag: "rate", Metavar: "R",
		Help: fmt.Sprintf("the clock runs R times as fast as real time, %g to %g (1 restores it); timers fire after d/R", clock.MinRate, clock.MaxRate),
		parse: func(text string, sp *Spec) error {
			r, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Errorf("want a rate such as 0.5 or 2, got %q", text)
			}
			if err := clock.CheckRate(r); err != nil {
				return err
			}
			sp.Rate = r
			return nil
		},
		text: func(sp Spec) string {
			if sp.Rate == 0 {
				return ""
			}
			return strconv.FormatFloat(sp.Rate, 'f', -1, 64)
		},
	}
	jumpParam = Param{
		Key: "jump", Flag: "jump", Metavar: "D",
		Help: "the clock's reading jumps by D, forward or back (-500ms); a forward jump fires the timers it passes",
		parse: func(text string, sp *Spec) error {
			d, err := time.ParseDuration(text)
			if err != nil || d == 0 {
				return fmt.Errorf("want a non-zero duration with a unit, like 2s or -500ms, got %q", text)
			}
			if err := clock.CheckJump(d); err != nil {
				return err
			}
			sp.Jump = d
			return nil
		},
		text: func(sp Spec) string {
			if sp.Jump == 0 {
				return ""
			}
			return sp.Jump.String()
		},
	}
)

// Param is one value a fault kind carries beyond its target.
type Param struct {
	// Key is the value's key in a scenario step (and in help).
	Key string
	// Flag is its flag in `ringleader fault` (--Flag VALUE); empty when
	// it is the first word after the operation.
	Flag string
	// Required: a step must give it.
	Required bool
	// Metavar names its value in help (DURATION); empty: the key in
	// capitals.
	Metavar string
	Help    string

	parse func(text string, sp *Spec) error
	text  func(sp Spec) string
}

// Name is how help names the value: DURATION, PERCENT.
func (p Param) Name() string {
	if p.Metavar != "" {
		return p.Metavar
	}
	return strings.ToUpper(p.Key)
}

// Parse reads text, as a scenario file or the command line writes it, into
// sp; the error says what would be valid.
func (p Param) Parse(text string, sp *Spec) error { return p.parse(text, sp) }

// Text is sp's value as a scenario file writes it; empty when not given.
func (p Param) Text(sp Spec) string { return p.text(sp) }

// millis reads a whole number of milliseconds (a scenario's ms: 100) or a
// duration (the command line's 100ms), ≥ 0, in whole milliseconds.
func millis(text string) (time.Duration, error) {
	if ms, err := strconv.Atoi(text); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("want a whole number ≥ 0, got %q", text)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (100ms, 1.5s, or a whole number ≥ 0 of milliseconds)", text)
	}
	if d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q: want whole milliseconds", text)
	}
	return d, nil
}

// CheckParams is the static check of a step's values, beyond each one's
// own: what can be known from the file before anything starts.
func (k Kind) CheckParams(sp Spec) error {
	if k.checkParams != nil {
		return k.checkParams(sp)
	}
	return nil
}
