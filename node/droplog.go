package node

import (
	"time"

	"github.com/ringleader-dev/ringleader/wire"
)

// dropLogEvery is the least time between two drop lines of one reason.
// Every drop is counted in /status; a flood of garbage costs one line a
// second per reason, each saying how many drops it stands for.
const dropLogEvery = time.Second

// prefixLen is how much of a rejected message a drop line quotes.
const prefixLen = 64

// dropLog decides which drops get a log line. It is owned by the node's
// loop goroutine, like the rest of the receive path.
type dropLog struct {
	last       map[wire.Reason]time.Time
	suppressed map[wire.Reason]int
}

func newDropLog() *dropLog {
	return &dropLog{last: map[wire.Reason]time.Time{}, suppressed: map[wire.Reason]int{}}
}

// admit reports whether a drop of reason r at now gets a line, and if so
// how many drops of that reason went unlogged since the last line.
func (d *dropLog) admit(r wire.Reason, now time.Time) (ok bool, suppressed int) {
	if last, seen := d.last[r]; seen && now.Sub(last) < dropLogEvery {
		d.suppressed[r]++
		return false, 0
	}
	d.last[r] = now
	suppressed = d.suppressed[r]
	d.suppressed[r] = 0
	return true, suppressed
}

// prefix is the start of a rejected message, quoted and bounded, for the
// drop line: enough to recognise what was sent, never a copy of it.
func prefix(data []byte) string {
	if len(data) > prefixLen {
		data = data[:prefixLen]
	}
	return wire.Clip(string(data))
}

// clipDetail bounds a rejection's explanation. The wire package already
// clips what it quotes; this is the last line of defence for a detail that
// came from elsewhere (a JSON error quoting input, say).
func clipDetail(s string) string {
	const maxDetail = 200
	if len(s) <= maxDetail {
		return s
	}
	return s[:maxDetail] + "…"
}
