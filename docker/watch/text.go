package watch

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// lineOf is one change as one line of text:
//
//	12:00:01.234 node 4 view: leader 4, epoch 2, role leader (running; sent 40.0/s, recv 3.0/s)
//	12:00:01.234 ALARM: nodes 4, 5 hold role leader at once
func lineOf(c Change) string {
	at := c.Time.Local().Format("15:04:05.000")
	switch c.Change {
	case ChangeAlarm:
		s := fmt.Sprintf("%s ALARM: nodes %s hold role leader at once", at, ids(c.Leaders))
		if len(c.PausedLeaders) > 0 {
			s += fmt.Sprintf(" (%s paused: a stale leader until it thaws)", ids(c.PausedLeaders))
		}
		return s
	case ChangeAlarmEnd:
		return at + " alarm over: at most one node holds role leader"
	}
	n := c.NodeStatus
	var what string
	switch c.Change {
	case ChangeBoot:
		what = "boot " + n.Boot
	case ChangeView:
		what = fmt.Sprintf("view: leader %s, epoch %d, role %s", leaderText(n.Leader), n.Epoch, n.Role)
	case ChangeDrop:
		what = "drops: " + dropsText(n.Drops)
	case ChangeStop:
		what = "stopped (graceful)"
	case ChangeClock:
		what = "clock: " + clockText(*n)
	case ChangeCut:
		what = "drops messages from: " + idsOrNone(n.DropFrom)
	case ChangeState:
		what = "container " + stateText(*n)
	case ChangeNoAnswer:
		what = fmt.Sprintf("probe: %s; its last view: leader %s, epoch %d", n.NoAnswer, leaderText(n.Leader), n.Epoch)
	default:
		what = c.Change
	}
	on := ""
	if n.Engine != "" {
		on = " on " + EngineShort(n.Engine)
	}
	return fmt.Sprintf("%s node %d%s %s (%s; sent %.1f/s, recv %.1f/s)", at, n.Node, on, what, stateText(*n), n.SentPerSec, n.RecvPerSec)
}

// EngineShort is the short name of an engine a view shows beside a node:
// a unix socket's file name without ".sock" (unix:///var/run/docker.sock
// is "docker"), a TCP engine's host and port, a context's name as it is.
// The live page shortens alike (engineShort in page.go).
func EngineShort(e string) string {
	scheme, rest, ok := strings.Cut(e, "://")
	if !ok {
		return e
	}
	if scheme == "unix" || scheme == "npipe" {
		if i := strings.LastIndexAny(rest, "/\\"); i >= 0 {
			rest = rest[i+1:]
		}
		return strings.TrimSuffix(rest, ".sock")
	}
	return strings.TrimSuffix(rest, "/")
}

func ids(ns []election.NodeID) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// clockText is a node's clock as the harness left it: "0.5×", "1× +300ms".
func clockText(n NodeStatus) string {
	rate := n.ClockRate
	if rate == 0 {
		rate = 1
	}
	s := fmt.Sprintf("%g×", rate)
	if n.JumpedMS != 0 {
		s += fmt.Sprintf(" %+dms", n.JumpedMS)
	}
	return s
}

func idsOrNone(ns []election.NodeID) string {
	if len(ns) == 0 {
		return "none"
	}
	return ids(ns)
}

func leaderText(l election.NodeID) string {
	if l == 0 {
		return "none"
	}
	return fmt.Sprint(l)
}

func stateText(n NodeStatus) string {
	s := string(n.State)
	if s == "" {
		s = "unknown"
	}
	if n.Isolated {
		s += ", no network"
	}
	return s
}

func dropsText(d map[string]int) string {
	if len(d) == 0 {
		return "none"
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, d[r]))
	}
	return strings.Join(parts, ", ")
}

// ANSI escapes the screen uses.
const (
	escHome      = "\x1b[H"
	escClear     = "\x1b[2J"
	escClearLine = "\x1b[K"
	escClearDown = "\x1b[J"
	escHide      = "\x1b[?25l"
	escShow      = "\x1b[?25h"
	escBold      = "\x1b[1m"
	escDim       = "\x1b[2m"
	escRed       = "\x1b[1;31m"
	escBlue      = "\x1b[34m"
	escReset     = "\x1b[0m"
)

// screen is the view redrawn in place on a terminal.
type screen struct {
	w   io.Writer
	run string
}

func newScreen(w io.Writer, run string) *screen { return &screen{w: w, run: run} }

func (s *screen) start() error {
	_, err := io.WriteString(s.w, escHide+escClear+escHome)
	return err
}

// stop leaves the last view on screen and gives the cursor back.
func (s *screen) stop() { io.WriteString(s.w, escShow+"\n") }

func (s *screen) draw(b *Board, now time.Time) error {
	_, err := io.WriteString(s.w, escHome+screenText(b, now, s.run, true)+escClearDown)
	return err
}

// screenText is the whole view: a title, one row per node, the alarm.
// With ansi, each line clears what an earlier, longer view left.
func screenText(b *Board, now time.Time, run string, ansi bool) string {
	esc := func(code string) string {
		if ansi {
			return code
		}
		return ""
	}
	eol := esc(escClearLine) + "\n"
	var sb strings.Builder
	st := b.Status(now)
	// Across engines, a column says which engine holds each node, as
	// wide as its longest name.
	engW, engines := 0, map[string]bool{}
	for _, n := range st {
		if n.Engine != "" {
			engW, engines[n.Engine] = max(engW, len(EngineShort(n.Engine)), len("ENGINE")), true
		}
	}
	across := ""
	if len(engines) > 0 {
		across = fmt.Sprintf(" across %d engines", len(engines))
	}
	engCol := func(s string) string {
		if engW == 0 {
			return ""
		}
		return fmt.Sprintf(" %-*s", engW, s)
	}
	fmt.Fprintf(&sb, "%sringleader watch%s · run %s · %d nodes%s · %s · Ctrl-C to quit%s", esc(escBold), esc(escReset), run, len(st), across, now.Local().Format("15:04:05"), eol)
	sb.WriteString(eol)
	fmt.Fprintf(&sb, "%-5s%s %-9s %-7s %-6s %-10s %8s %8s  %-9s %s%s", "NODE", engCol("ENGINE"), "STATE", "LEADER", "EPOCH", "ROLE", "SENT/s", "RECV/s", "VIEW FOR", "FAULTS SEEN", eol)
	for _, n := range st {
		state, col := string(n.State), ""
		switch n.State {
		case Paused:
			col = esc(escBlue)
		case Down:
			col = esc(escDim)
		case Unknown:
			state = "?"
		}
		role, roleW := string(n.Role), len(n.Role)
		if n.Role == election.Leader {
			role, roleW = esc(escBold)+"★ leader"+esc(escReset)+col, 8
		}
		since := ""
		if !n.ViewSince.IsZero() {
			since = roundFor(now.Sub(n.ViewSince))
		}
		var faults []string
		switch n.State {
		case Down:
			faults = append(faults, "down")
		case Paused:
			faults = append(faults, "paused")
		}
		if n.Isolated {
			faults = append(faults, "no network")
		}
		if n.NoAnswer != "" && n.State == Running {
			faults = append(faults, "probe: "+n.NoAnswer+" (view: its last)")
		}
		if n.ClockRate != 0 || n.JumpedMS != 0 {
			faults = append(faults, "clock "+clockText(n))
		}
		if len(n.DropFrom) > 0 {
			faults = append(faults, "deaf to "+ids(n.DropFrom))
		}
		if len(n.Drops) > 0 {
			faults = append(faults, "drops: "+dropsText(n.Drops))
		}
		// Pad the role by its visible width: escapes take none.
		rolePad := strings.Repeat(" ", max(0, 10-roleW))
		fmt.Fprintf(&sb, "%s%5d%s %-9s %7s %6d %s%s %8.1f %8.1f  %-9s %s%s%s",
			col, n.Node, engCol(EngineShort(n.Engine)), state, leaderText(n.Leader), n.Epoch, role, rolePad, n.SentPerSec, n.RecvPerSec, since, strings.Join(faults, "; "), esc(escReset), eol)
	}
	sb.WriteString(eol)
	if leaders, paused, since := b.Alarm(); leaders != nil {
		fmt.Fprintf(&sb, "%sALARM%s nodes %s hold role leader at once, for %s", esc(escRed), esc(escReset), ids(leaders), roundFor(now.Sub(since)))
		if len(paused) > 0 {
			fmt.Fprintf(&sb, " (%s paused: a stale leader until it thaws)", ids(paused))
		}
		sb.WriteString(eol)
	} else {
		sb.WriteString("no alarm: at most one node holds role leader" + eol)
	}
	return sb.String()
}

// roundFor is a duration as people read it at a glance.
func roundFor(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
