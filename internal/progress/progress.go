// Package progress shows how far long work has come, on a person's
// terminal or in a log: a bar redrawn in place with the rate and the time
// left, or, when the output is not a terminal, a plain line now and then.
// Nothing shows for work shorter than Quiet, so quick commands print what
// they always printed. It writes only to the writer it is given (stderr):
// what the work produces is never touched.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Quiet is how long work runs before anything shows.
const Quiet = time.Second

// Redraw is how often the terminal bar is redrawn; Every how often a
// plain line is printed.
const (
	Redraw = 200 * time.Millisecond
	Every  = 5 * time.Second
)

// barWidth is the bar's length in characters.
const barWidth = 24

// Meter counts finished units of a known total.
type Meter struct {
	w     io.Writer
	tty   bool
	what  string // the command, first on each line: "explore"
	unit  string // what is counted, plural: "schedules"
	total int
	now   func() time.Time

	mu    sync.Mutex
	start time.Time
	last  time.Time // last output
	done  int
	drawn bool // the bar is on the screen

	stop    chan struct{} // Start's ticker, until Done
	stopped chan struct{}
}

// New returns a meter of total units named unit, shown on w as a bar
// when tty is true, else as lines. now is the clock (time.Now; tests give
// their own).
func New(w io.Writer, tty bool, what, unit string, total int, now func() time.Time) *Meter {
	t := now()
	return &Meter{w: w, tty: tty, what: what, unit: unit, total: total, now: now, start: t, last: t}
}

// Set records that done units are finished, and shows it when it is
// time. Safe for concurrent use.
func (m *Meter) Set(done int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = done
	m.show(m.now())
}

// Tick shows the state when it is time even though nothing finished: a
// unit of work that takes long (one schedule of a large cluster) still
// shows the time pass. Start calls it.
func (m *Meter) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.show(m.now())
}

// Start ticks the meter until Done.
func (m *Meter) Start() {
	m.stop = make(chan struct{})
	stopped := make(chan struct{})
	m.stopped = stopped
	go func() {
		defer close(stopped)
		t := time.NewTicker(Redraw)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.Tick()
			case <-m.stop:
				return
			}
		}
	}()
}

// show writes the state at t if it is time: never before Quiet; then the
// bar every Redraw, or a plain line every Every.
func (m *Meter) show(t time.Time) {
	if t.Sub(m.start) < Quiet {
		return
	}
	if m.tty {
		if m.drawn && t.Sub(m.last) < Redraw {
			return
		}
		m.last, m.drawn = t, true
		fmt.Fprintf(m.w, "\r%s\x1b[K", m.line(t, true))
		return
	}
	if t.Sub(m.last) < Every {
		return
	}
	m.last = t
	fmt.Fprintln(m.w, m.line(t, false))
}

// Done ends the meter: the ticking stops, and the bar, when drawn, is
// completed and its line ended, so that what follows starts on a line of
// its own.
func (m *Meter) Done() {
	if m.stop != nil {
		close(m.stop)
		<-m.stopped
		m.stop = nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn {
		fmt.Fprintf(m.w, "\r%s\x1b[K\n", m.line(m.now(), true))
		m.drawn = false
	}
}

// line renders the state at t: the bar form or the plain one.
func (m *Meter) line(t time.Time, bar bool) string {
	elapsed := t.Sub(m.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(m.done) / s
	}
	left := "time left unknown"
	if rate > 0 && m.done < m.total {
		left = "about " + round(time.Duration(float64(m.total-m.done)/rate*float64(time.Second))).String() + " left"
	} else if m.done >= m.total {
		left = "done in " + round(elapsed).String()
	}
	frac := 0.0
	if m.total > 0 {
		frac = min(float64(m.done)/float64(m.total), 1)
	}
	counts := fmt.Sprintf("%d/%d %s (%.0f%%), %s/s, %s", m.done, m.total, m.unit, 100*frac, rateString(rate), left)
	if !bar {
		return m.what + ": " + counts
	}
	fill := int(frac * barWidth)
	return fmt.Sprintf("%s [%s%s] %s", m.what, strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), counts)
}

func rateString(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// round keeps a duration readable: whole seconds past ten seconds,
// tenths below.
func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
