package chaos

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/history"
)

// The values fault kinds carry (Kind.Params), each defined once: how a
// scenario file writes it (its YAML key), how `ringleader fault` takes it
// (the first word after the operation, or a flag), its name in a fault's
// Params and the history, how it is read and written back. The scenario
// parser, the words of `ringleader fault`, the scenario writer, the
// history and help all go through these.

var (
	// LossPercent is loss's value: the fraction of packets dropped, given
	// as a percentage.
	LossPercent = Param{
		Key: "percent", Field: "loss", Required: true,
		Help: "the percentage of packets dropped, 1 to 100 (0 removes loss)",
		parse: func(text string) (Value, error) {
			pct, err := strconv.ParseFloat(strings.TrimSuffix(text, "%"), 64)
			if err != nil || math.IsNaN(pct) {
				return Value{}, fmt.Errorf("%q is not a percentage (10 or 10%%); want 0 (no loss) or 1 to 100", text)
			}
			if pct < 0 || pct > 100 || (pct > 0 && pct < 1) {
				return Value{}, fmt.Errorf("want 0 (no loss) or a percentage in [1, 100] (the container rules drop whole percents), got %q", text)
			}
			return history.Number("loss", pct/100), nil
		},
		text: func(v Value) string { return strconv.FormatFloat(v.Num*100, 'f', -1, 64) },
	}
	// DelayMS is delay's added latency.
	DelayMS = Param{
		Key: "ms", Field: "delay", Required: true, Metavar: "DURATION", Duration: true,
		Help:  "the added latency in milliseconds, or a duration on the command line (0 removes delay)",
		parse: millisParam("delay"),
		text:  func(v Value) string { return strconv.FormatInt(v.Dur.Milliseconds(), 10) },
	}
	// DelayJitter is delay's spread: each message's added latency is
	// uniform in [ms − jitter, ms + jitter], never below zero, in every
	// world (the simulator's extraDelay, the container backend's
	// netfilter.Delayer); chaostest's DelayAddsLatencyAroundItsValue
	// measures it in both.
	DelayJitter = Param{
		Key: "jitter_ms", Field: "jitter", Flag: "jitter", Metavar: "DURATION", Duration: true,
		Help:  "the spread around the delay: each message's added latency is uniform in [ms − jitter, ms + jitter], never below 0; milliseconds, or a duration on the command line",
		parse: millisParam("jitter"),
		text:  func(v Value) string { return strconv.FormatInt(v.Dur.Milliseconds(), 10) },
	}
	// ClockRate is clock's rate (0, not given: unchanged).
	ClockRate = Param{
		Key: "rate", Field: "rate", Flag: "rate", Metavar: "R",
		Help: fmt.Sprintf("the clock runs R times as fast as real time, %g to %g (1 restores it); timers fire after d/R", clock.MinRate, clock.MaxRate),
		parse: func(text string) (Value, error) {
			r, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return Value{}, fmt.Errorf("want a rate such as 0.5 or 2, got %q", text)
			}
			if err := clock.CheckRate(r); err != nil {
				return Value{}, err
			}
			return history.Number("rate", r), nil
		},
		text: func(v Value) string { return strconv.FormatFloat(v.Num, 'f', -1, 64) },
	}
	// ClockJump is clock's jump.
	ClockJump = Param{
		Key: "jump", Field: "jump", Flag: "jump", Metavar: "D", Duration: true,
		Help: "the clock's reading jumps by D, forward or back (-500ms); a forward jump fires the timers it passes",
		parse: func(text string) (Value, error) {
			d, err := time.ParseDuration(text)
			if err != nil || d == 0 {
				return Value{}, fmt.Errorf("want a non-zero duration with a unit, like 2s or -500ms, got %q", text)
			}
			if err := clock.CheckJump(d); err != nil {
				return Value{}, err
			}
			return history.Dur("jump", d), nil
		},
		text: func(v Value) string { return v.Dur.String() },
	}
)

// Params are a fault's values, keyed by its kind's Param names: one value
// from the scenario parser to the history and back (history.Params).
type Params = history.Params

// Value is one parameter's value.
type Value = history.Value

// ParamsOf holds vals; build them with a Param's Of or OfDur.
func ParamsOf(vals ...Value) Params { return history.ParamsOf(vals...) }

func millisParam(name string) func(string) (Value, error) {
	return func(text string) (Value, error) {
		d, err := millis(text)
		return history.Dur(name, d), err
	}
}

// Param is one value a fault kind carries beyond its target.
type Param struct {
	// Key is the value's key in a scenario step (and in help).
	Key string
	// Field is its key in a fault's Params and in the history record's
	// params (loss holds a fraction where the scenario gives a percent).
	Field string
	// Duration: its value is a duration; else a number.
	Duration bool
	// Flag is its flag in `ringleader fault` (--Flag VALUE); empty when
	// it is the first word after the operation.
	Flag string
	// Required: a step must give it.
	Required bool
	// Metavar names its value in help (DURATION); empty: the key in
	// capitals.
	Metavar string
	Help    string

	parse func(text string) (Value, error)
	text  func(v Value) string
}

// Name is how help names the value: DURATION, PERCENT.
func (p Param) Name() string {
	if p.Metavar != "" {
		return p.Metavar
	}
	return strings.ToUpper(p.Key)
}

// Parse reads text, as a scenario file or the command line writes it, into
// sp's Params; the error says what would be valid.
func (p Param) Parse(text string, sp *Spec) error {
	v, err := p.parse(text)
	if err != nil {
		return err
	}
	sp.Params = sp.Params.With(v)
	return nil
}

// Text is sp's value as a scenario file writes it; empty when not given.
func (p Param) Text(sp Spec) string {
	v, ok := sp.Params.Get(p.Field)
	switch {
	case !ok && p.Required:
		return p.text(p.normal(Value{Key: p.Field})) // 0: removes
	case !ok:
		return ""
	}
	return p.text(v)
}

// Num is p's number in ps (0: not given).
func (p Param) Num(ps Params) float64 { return ps.Num(p.Field) }

// Dur is p's duration in ps (0: not given).
func (p Param) Dur(ps Params) time.Duration { return ps.Duration(p.Field) }

// Of is the number v as p's value, for ParamsOf.
func (p Param) Of(v float64) Value { return history.Number(p.Field, v) }

// OfDur is the duration d as p's value, for ParamsOf.
func (p Param) OfDur(d time.Duration) Value { return history.Dur(p.Field, d) }

// normal is v as p holds it: a duration read from an old history as a
// number of nanoseconds becomes a duration.
func (p Param) normal(v Value) Value {
	if p.Duration && !v.IsDur {
		return p.OfDur(time.Duration(v.Num))
	}
	return v
}

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
