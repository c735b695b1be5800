package millis

import (
	"testing"
	"time"
)

func TestOneFormatForEveryTime(t *testing.T) {
	for _, c := range []struct {
		d   time.Duration
		of  string
		off string
	}{
		{0, "0 ms", "+0 ms"},
		{300 * time.Microsecond, "<1 ms", "+<1 ms"},
		{500 * time.Microsecond, "1 ms", "+1 ms"},
		{27500 * time.Microsecond, "28 ms", "+28 ms"},
		{917 * time.Millisecond, "917 ms", "+917 ms"},
		{1750 * time.Millisecond, "1 750 ms", "+1 750 ms"},
		{3053661538, "3 054 ms", "+3 054 ms"},
		{481410120, "481 ms", "+481 ms"},
		{12 * time.Second, "12 000 ms", "+12 000 ms"},
		{1234567 * time.Millisecond, "1 234 567 ms", "+1 234 567 ms"},
		{-1750 * time.Millisecond, "-1 750 ms", "-1 750 ms"},
	} {
		if got := Of(c.d); got != c.of {
			t.Errorf("Of(%v) = %q, want %q", c.d, got, c.of)
		}
		if got := Offset(c.d); got != c.off {
			t.Errorf("Offset(%v) = %q, want %q", c.d, got, c.off)
		}
	}
}

func TestRangeCollapsesWhenBothEndsRoundAlike(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{27.2, 27.4, "27 ms"},
		{686.2, 700, "686–700 ms"},
		{1200, 980, "980–1 200 ms"},
	} {
		if got := Range(c.lo, c.hi); got != c.want {
			t.Errorf("Range(%v, %v) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
