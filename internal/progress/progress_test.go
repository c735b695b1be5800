package progress

import (
	"strings"
	"testing"
	"time"
)

// clock is a hand-moved clock: these tests never wait.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1_000_000, 0)} }
func lines(s string) []string            { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
func frames(s string) []string           { return strings.Split(strings.TrimPrefix(s, "\r"), "\r") }

func TestNothingShowsForShortWork(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out strings.Builder
		c := newClock()
		m := New(&out, tty, "explore", "schedules", 100, c.now)
		for i := 1; i <= 100; i++ {
			c.advance(Quiet / 200)
			m.Set(i)
		}
		m.Done()
		if out.Len() != 0 {
			t.Errorf("tty=%v: work shorter than %v printed %q", tty, Quiet, out.String())
		}
	}
}

// TestPlainLinesComeEveryFewSecondsWithRateAndTimeLeft: off a terminal,
// one line per Every however often Set is called, each with the count,
// the rate and the time left.
func TestPlainLinesComeEveryFewSecondsWithRateAndTimeLeft(t *testing.T) {
	var out strings.Builder
	c := newClock()
	m := New(&out, false, "explore", "schedules", 1000, c.now)
	for i := 1; i <= 200; i++ { // 10 per second for 20 s
		c.advance(100 * time.Millisecond)
		m.Set(i)
	}
	m.Done()
	got := lines(out.String())
	if len(got) != 4 { // at 5, 10, 15 and 20 s
		t.Fatalf("20 s of work printed %d lines, want 4 (one per %v):\n%s", len(got), Every, out.String())
	}
	want := "explore: 50/1000 schedules (5%), 10/s, about 1m35s left"
	if got[0] != want {
		t.Errorf("first line %q, want %q", got[0], want)
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Errorf("plain output holds terminal controls: %q", out.String())
	}
}

// TestTerminalBarIsRedrawnInPlaceAndEndsItsLine: on a terminal, frames
// start with a carriage return, at most one per Redraw, and Done ends the
// line once.
func TestTerminalBarIsRedrawnInPlaceAndEndsItsLine(t *testing.T) {
	var out strings.Builder
	c := newClock()
	m := New(&out, true, "explore", "schedules", 40, c.now)
	for i := 1; i <= 40; i++ { // 20 per second for 2 s
		c.advance(50 * time.Millisecond)
		m.Set(i)
	}
	m.Done()
	s := out.String()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Fatalf("want one line ended once, got %q", s)
	}
	fs := frames(strings.TrimSuffix(s, "\n"))
	// Quiet is 1 s: frames at 1.0, 1.2, ... 2.0 s, and Done's.
	if len(fs) != 7 {
		t.Errorf("%d frames in 2 s, want 7 (one per %v after %v, and the last):\n%q", len(fs), Redraw, Quiet, s)
	}
	first := strings.TrimSuffix(fs[0], "\x1b[K")
	if want := "explore [############............] 20/40 schedules (50%), 20/s, about 1s left"; first != want {
		t.Errorf("first frame %q, want %q", first, want)
	}
	if last := fs[len(fs)-1]; !strings.Contains(last, "40/40 schedules (100%)") || !strings.Contains(last, "done in 2s") {
		t.Errorf("last frame %q, want the full bar and the time taken", last)
	}
}

// TestTickShowsTimePassingWhileNothingFinishes: a long unit still moves
// the display (Start's ticker calls Tick).
func TestTickShowsTimePassingWhileNothingFinishes(t *testing.T) {
	var out strings.Builder
	c := newClock()
	m := New(&out, false, "explore", "schedules", 1, c.now)
	c.advance(Every)
	m.Tick()
	if want := "explore: 0/1 schedules (0%), 0.0/s, time left unknown\n"; out.String() != want {
		t.Errorf("Tick after %v printed %q, want %q", Every, out.String(), want)
	}
}
