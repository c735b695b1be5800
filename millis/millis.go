// Package millis is the one way ringleader shows a time to people:
// whole milliseconds, thousands grouped by a space, the unit after a
// space — "27 ms", "1 750 ms", and "+1 750 ms" for an offset from the
// start of a run. Tables, labels, verdict summaries and progress lines all
// use it, so a reader never converts between "1.75s" and "917ms".
// Machine-readable files (results.json) keep their own numeric fields.
package millis

import (
	"math"
	"strconv"
	"time"
)

// Of is d as whole milliseconds: "0 ms", "<1 ms" for a positive time
// shorter than half a millisecond (rounding it to 0 would claim it did
// not happen), "27 ms", "1 750 ms".
func Of(d time.Duration) string { return Float(float64(d) / float64(time.Millisecond)) }

// Float is a count of milliseconds shown like Of.
func Float(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return "? ms"
	case ms > 0 && ms < 0.5:
		return "<1 ms"
	case ms < 0 && ms > -0.5:
		return ">-1 ms"
	}
	return group(int64(math.Round(ms))) + " ms"
}

// Offset is d as an offset from a run's start: "+0 ms", "+1 750 ms".
func Offset(d time.Duration) string {
	s := Of(d)
	if d >= 0 {
		return "+" + s
	}
	return s
}

// Range is a span of milliseconds known only between lo and hi: one value
// when they round alike, "686–700 ms" otherwise.
func Range(lo, hi float64) string {
	a, b := math.Round(lo), math.Round(hi)
	if a == b {
		return Float(math.Max(lo, hi))
	}
	if a > b {
		a, b = b, a
	}
	return group(int64(a)) + "–" + group(int64(b)) + " ms"
}

// group writes n with its thousands separated by spaces: 1 750, 12 000.
func group(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
