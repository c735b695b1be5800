package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// nodeLog writes node log lines as a node would (docs/logs.md), one boot
// at a time, numbering seq itself.
type nodeLog struct {
	id   election.NodeID
	boot string
	seq  uint64
}

func (l *nodeLog) line(at time.Duration, event, extra string) []byte {
	l.seq++
	s := fmt.Sprintf(`{"time":%q,"level":"info","msg":"m","node":%d,"boot":%q,"seq":%d,"event":%q%s}`,
		t0.Add(at).Format(time.RFC3339Nano), l.id, l.boot, l.seq, event, extra)
	return []byte(s)
}

func (l *nodeLog) boot_(at time.Duration, boot string) []byte {
	l.boot, l.seq = boot, 0
	return l.line(at, "boot", `,"schema":1,"algorithm":"bully"`)
}

func (l *nodeLog) view(at time.Duration, leader election.NodeID, epoch uint64, role election.Role) []byte {
	return l.line(at, "view", fmt.Sprintf(`,"leader":%d,"epoch":%d,"role":%q`, leader, epoch, role))
}

func (l *nodeLog) msg(at time.Duration, event string, from, to election.NodeID) []byte {
	return l.line(at, event, fmt.Sprintf(`,"type":"HEARTBEAT","from":%d,"to":%d,"epoch":1,"message":{"type":"HEARTBEAT","from":%d,"to":%d,"epoch":1}`, from, to, from, to))
}

func (l *nodeLog) drop(at time.Duration, reason string, suppressed int) []byte {
	return l.line(at, "drop", fmt.Sprintf(`,"reason":%q,"detail":"d","bytes":3,"suppressed":%d`, reason, suppressed))
}

func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Change)
	}
	return out
}

func statusOf(t *testing.T, b *Board, id election.NodeID, now time.Time) NodeStatus {
	t.Helper()
	for _, s := range b.Status(now) {
		if s.Node == id {
			return s
		}
	}
	t.Fatalf("node %d not on the board", id)
	return NodeStatus{}
}

func TestBoardFollowsViews(t *testing.T) {
	b := NewBoard(0)
	n1, n2 := &nodeLog{id: 1}, &nodeLog{id: 2}
	feed := func(id election.NodeID, line []byte) []Change { return b.Line(id, line, time.Time{}) }
	if got := kinds(feed(1, n1.boot_(0, "b1"))); !slices.Equal(got, []string{ChangeBoot}) {
		t.Fatalf("boot: changes %v", got)
	}
	feed(2, n2.boot_(time.Millisecond, "b2"))
	feed(1, n1.view(10*time.Millisecond, 0, 0, election.Candidate))
	cs := feed(2, n2.view(20*time.Millisecond, 2, 1, election.Leader))
	if len(cs) != 1 || cs[0].Leader != 2 || cs[0].Role != election.Leader || cs[0].Epoch != 1 || !cs[0].Time.Equal(t0.Add(20*time.Millisecond)) {
		t.Fatalf("view change: %+v", cs)
	}
	feed(1, n1.view(30*time.Millisecond, 2, 1, election.Follower))
	st := b.Status(t0.Add(time.Second))
	if len(st) != 2 || st[0].Leader != 2 || st[0].Role != election.Follower || st[1].Role != election.Leader || st[0].State != Running {
		t.Fatalf("status: %+v", st)
	}
	if st[0].Boot != "b1" || !st[0].ViewSince.Equal(t0.Add(30*time.Millisecond)) {
		t.Fatalf("node 1: boot %q, view since %v", st[0].Boot, st[0].ViewSince)
	}
}

func TestBoardIgnoresRepeatsAndNonEvents(t *testing.T) {
	b := NewBoard(0)
	n := &nodeLog{id: 3}
	boot := n.boot_(0, "b")
	view := n.view(time.Millisecond, 3, 1, election.Leader)
	b.Line(3, boot, time.Time{})
	b.Line(3, view, time.Time{})
	// Re-attaching to a log after a restart reads some lines again.
	if cs := b.Line(3, view, time.Time{}); cs != nil {
		t.Fatalf("a line read twice changed %v", kinds(cs))
	}
	for _, l := range []string{
		`{"time":"2026-11-23T12:00:01Z","node":3,"boot":"b","event":"peer-down-hint","peer":5,"source":"route"}`,
		`{"time":"2026-11-23T12:00:01Z","level":"info","msg":"starting"}`,
		`plain text on stderr`,
		`{"broken`,
		``,
	} {
		if cs := b.Line(3, []byte(l), t0); cs != nil {
			t.Errorf("%q changed %v", l, kinds(cs))
		}
	}
	if s := statusOf(t, b, 3, t0); s.Leader != 3 || s.Role != election.Leader {
		t.Fatalf("status after noise: %+v", s)
	}
}

func TestBoardRestartForgetsTheOldView(t *testing.T) {
	b := NewBoard(0)
	n := &nodeLog{id: 5}
	b.Line(5, n.boot_(0, "first"), time.Time{})
	b.Line(5, n.view(time.Millisecond, 5, 1, election.Leader), time.Time{})
	b.Line(5, n.drop(2*time.Millisecond, "foreign-cluster", 0), time.Time{})
	b.SetState(5, "ringleader-node5", Down, false, t0.Add(time.Second))
	if s := statusOf(t, b, 5, t0.Add(time.Second)); s.State != Down || s.Leader != 5 {
		t.Fatalf("killed: %+v (a dead node keeps showing the view it died with)", s)
	}
	cs := b.Line(5, n.boot_(2*time.Second, "second"), time.Time{})
	if got := kinds(cs); !slices.Equal(got, []string{ChangeBoot}) {
		t.Fatalf("new boot: %v", got)
	}
	s := statusOf(t, b, 5, t0.Add(2*time.Second))
	if s.Boot != "second" || s.Leader != 0 || s.Role != election.Undecided || s.State != Running || s.DropTotal() != 0 {
		t.Fatalf("after restart: %+v", s)
	}
	// The new boot's seq starts at 1 again and is not taken for a repeat.
	if cs := b.Line(5, n.view(2100*time.Millisecond, 5, 2, election.Leader), time.Time{}); len(cs) != 1 || cs[0].Epoch != 2 {
		t.Fatalf("view of the new boot: %+v", cs)
	}
}

func TestBoardCountsDropsWithSuppressed(t *testing.T) {
	b := NewBoard(0)
	n := &nodeLog{id: 1}
	b.Line(1, n.boot_(0, "b"), time.Time{})
	b.Line(1, n.drop(time.Millisecond, "foreign-cluster", 0), time.Time{})
	cs := b.Line(1, n.drop(time.Second+time.Millisecond, "foreign-cluster", 6), time.Time{})
	b.Line(1, n.drop(time.Second+2*time.Millisecond, "malformed", 0), time.Time{})
	if len(cs) != 1 || cs[0].Change != ChangeDrop || cs[0].Drops["foreign-cluster"] != 8 {
		t.Fatalf("drop change: %+v", cs)
	}
	s := statusOf(t, b, 1, t0.Add(2*time.Second))
	if s.Drops["foreign-cluster"] != 8 || s.Drops["malformed"] != 1 || s.DropTotal() != 9 {
		t.Fatalf("drops: %v", s.Drops)
	}
}

func TestBoardRatesOverTheWindow(t *testing.T) {
	b := NewBoard(2 * time.Second)
	n := &nodeLog{id: 5}
	b.Line(5, n.boot_(0, "b"), time.Time{})
	// A leader heartbeating 4 peers every 100 ms for 3 s: 40 sends a
	// second; it receives one reply a second.
	for i := range 30 {
		at := time.Duration(i) * 100 * time.Millisecond
		for to := election.NodeID(1); to <= 4; to++ {
			if cs := b.Line(5, n.msg(at, "send", 5, to), time.Time{}); cs != nil {
				t.Fatalf("a send is not a change: %v", kinds(cs))
			}
		}
		if i%10 == 0 {
			b.Line(5, n.msg(at, "recv", 1, 5), time.Time{})
		}
	}
	s := statusOf(t, b, 5, t0.Add(2950*time.Millisecond))
	if s.SentPerSec != 40 || s.RecvPerSec != 1 {
		t.Fatalf("rates at 2.95 s: sent %v/s recv %v/s, want 40 and 1", s.SentPerSec, s.RecvPerSec)
	}
	// Silence (a paused node logs nothing): the rates fall to zero.
	s = statusOf(t, b, 5, t0.Add(10*time.Second))
	if s.SentPerSec != 0 || s.RecvPerSec != 0 {
		t.Fatalf("rates after 7 s of silence: %v, %v", s.SentPerSec, s.RecvPerSec)
	}
}

// summary is a node's summary line (no seq: not a history record).
func (l *nodeLog) summary(at time.Duration, interval string, sent, received int) []byte {
	return []byte(fmt.Sprintf(`{"time":%q,"level":"info","msg":"m","node":%d,"boot":%q,"event":"summary","interval":%q,"since_last":{"sent":%d,"received":%d,"dropped":{},"by_type":{"HEARTBEAT":{"sent":%d,"received":%d}},"peer_down_hints":0},"counters":{"sent":9999,"received":9999},"leader":5,"epoch":1,"role":"leader"}`,
		t0.Add(at).Format(time.RFC3339Nano), l.id, l.boot, interval, sent, received, sent, received))
}

// TestBoardRatesFromSummariesAtInfo: a node at info level logs no send or
// recv line, only a summary every 10 s; its rates are the summary's counts
// over its interval, they stand until the next summary is overdue and
// then fall to zero (a paused node logs nothing), a summary read twice
// changes nothing, and a node that does log every message (debug) is
// counted from those lines, whatever its summaries say.
func TestBoardRatesFromSummariesAtInfo(t *testing.T) {
	b := NewBoard(2 * time.Second)
	n := &nodeLog{id: 5}
	b.Line(5, n.boot_(0, "b"), time.Time{})
	b.Line(5, n.view(100*time.Millisecond, 5, 1, election.Leader), time.Time{})
	if cs := b.Line(5, n.summary(10*time.Second, "10s", 400, 10), time.Time{}); cs != nil {
		t.Fatalf("a summary is not a change: %v", kinds(cs))
	}
	s := statusOf(t, b, 5, t0.Add(12*time.Second))
	if s.SentPerSec != 40 || s.RecvPerSec != 1 {
		t.Fatalf("rates 2 s after a summary of 400 sent, 10 received in 10 s: %v, %v; want 40 and 1", s.SentPerSec, s.RecvPerSec)
	}
	if s.Leader != 5 || s.Role != election.Leader {
		t.Fatalf("the summary disturbed the view: %+v", s)
	}
	// The next summary: half the traffic.
	b.Line(5, n.summary(20*time.Second, "10s", 200, 5), time.Time{})
	// Read again after re-attaching: an older summary changes nothing.
	b.Line(5, n.summary(10*time.Second, "10s", 400, 10), time.Time{})
	s = statusOf(t, b, 5, t0.Add(29*time.Second))
	if s.SentPerSec != 20 || s.RecvPerSec != 0.5 {
		t.Fatalf("rates after the second summary: %v, %v; want 20 and 0.5", s.SentPerSec, s.RecvPerSec)
	}
	// No summary for 15 s (1.5 intervals): paused, or silent; zero.
	s = statusOf(t, b, 5, t0.Add(36*time.Second))
	if s.SentPerSec != 0 || s.RecvPerSec != 0 {
		t.Fatalf("rates 16 s after the last summary: %v, %v; want 0", s.SentPerSec, s.RecvPerSec)
	}

	// A new boot at debug level: send lines and summaries both; the
	// lines win.
	b.Line(5, n.boot_(40*time.Second, "b2"), time.Time{})
	for i := range 20 {
		b.Line(5, n.msg(40*time.Second+time.Duration(i)*100*time.Millisecond, "send", 5, 1), time.Time{})
	}
	b.Line(5, n.summary(42*time.Second, "2s", 1000, 1000), time.Time{})
	s = statusOf(t, b, 5, t0.Add(41950*time.Millisecond))
	if s.SentPerSec != 10 || s.RecvPerSec != 0 {
		t.Fatalf("rates of a node that logs every message: %v, %v; want 10 and 0 from its lines", s.SentPerSec, s.RecvPerSec)
	}
}

func TestBoardAlarmsWhileTwoLead(t *testing.T) {
	b := NewBoard(0)
	n4, n5 := &nodeLog{id: 4}, &nodeLog{id: 5}
	b.Line(4, n4.boot_(0, "b4"), time.Time{})
	b.Line(5, n5.boot_(0, "b5"), time.Time{})
	b.Line(5, n5.view(10*time.Millisecond, 5, 1, election.Leader), time.Time{})
	b.Line(4, n4.view(11*time.Millisecond, 5, 1, election.Follower), time.Time{})
	if l, _, _ := b.Alarm(); l != nil {
		t.Fatalf("one leader, alarm %v", l)
	}
	// 5 is cut off: 4 stops hearing it and takes over while 5 still
	// believes it leads.
	cs := b.Line(4, n4.view(time.Second, 4, 2, election.Leader), time.Time{})
	if got := kinds(cs); !slices.Equal(got, []string{ChangeView, ChangeAlarm}) {
		t.Fatalf("changes %v", got)
	}
	if !slices.Equal(cs[1].Leaders, []election.NodeID{4, 5}) || cs[1].PausedLeaders != nil {
		t.Fatalf("alarm %+v", cs[1])
	}
	leaders, paused, since := b.Alarm()
	if !slices.Equal(leaders, []election.NodeID{4, 5}) || paused != nil || !since.Equal(t0.Add(time.Second)) {
		t.Fatalf("Alarm() = %v %v %v", leaders, paused, since)
	}
	// Paused, 5 is a stale leader: still alarmed, and said so.
	cs = b.SetState(5, "ringleader-node5", Paused, false, t0.Add(2*time.Second))
	if got := kinds(cs); !slices.Equal(got, []string{ChangeState, ChangeAlarm}) || !slices.Equal(cs[1].PausedLeaders, []election.NodeID{5}) {
		t.Fatalf("pause: %v %+v", got, cs)
	}
	if _, _, s := b.Alarm(); !s.Equal(since) {
		t.Fatalf("the alarm's start moved to %v", s)
	}
	// Killed, it holds nothing.
	cs = b.SetState(5, "ringleader-node5", Down, false, t0.Add(3*time.Second))
	if got := kinds(cs); !slices.Equal(got, []string{ChangeState, ChangeAlarmEnd}) {
		t.Fatalf("kill: %v", got)
	}
	if l, _, _ := b.Alarm(); l != nil {
		t.Fatalf("alarm after the kill: %v", l)
	}
}

func TestBoardStopLineEndsALeadership(t *testing.T) {
	b := NewBoard(0)
	n1, n2 := &nodeLog{id: 1}, &nodeLog{id: 2}
	b.Line(1, n1.boot_(0, "b1"), time.Time{})
	b.Line(2, n2.boot_(0, "b2"), time.Time{})
	b.Line(2, n2.view(time.Millisecond, 2, 1, election.Leader), time.Time{})
	b.Line(2, n2.line(time.Second, "stop", `,"leader":2,"epoch":1,"role":"leader"`), time.Time{})
	cs := b.Line(1, n1.view(1100*time.Millisecond, 1, 2, election.Leader), time.Time{})
	if got := kinds(cs); !slices.Equal(got, []string{ChangeView}) {
		t.Fatalf("a stopped leader still counted: %v", got)
	}
	if s := statusOf(t, b, 2, t0.Add(2*time.Second)); s.State != Down {
		t.Fatalf("stopped node: %+v", s)
	}
}

func TestBoardStateChangesOnlyWhenDifferent(t *testing.T) {
	b := NewBoard(0)
	if cs := b.SetState(1, "c1", Running, false, t0); len(cs) != 1 {
		t.Fatalf("first state: %v", kinds(cs))
	}
	if cs := b.SetState(1, "c1", Running, false, t0.Add(time.Second)); cs != nil {
		t.Fatalf("same state again: %v", kinds(cs))
	}
	cs := b.SetState(1, "c1", Running, true, t0.Add(2*time.Second))
	if len(cs) != 1 || !cs[0].Isolated {
		t.Fatalf("isolated: %+v", cs)
	}
}

// TestBoardNamesTheContainerFromTheFirstLine: a node's log lines name
// its container, so the board shows the name before any container state
// comes (the engine may have forgotten the container's start); a later
// state that names another container (a renamed one) is a change.
func TestBoardNamesTheContainerFromTheFirstLine(t *testing.T) {
	b := NewBoard(0)
	n := &nodeLog{id: 2}
	Input{Node: 2, Container: "rl-r-node2", Line: n.boot_(0, "b2"), Logged: t0}.Feed(b)
	Input{Node: 2, Container: "rl-r-node2", Line: n.view(time.Millisecond, 2, 1, election.Leader), Logged: t0}.Feed(b)
	if s := statusOf(t, b, 2, t0.Add(time.Second)); s.Container != "rl-r-node2" || s.State != Running || s.Leader != 2 {
		t.Fatalf("after two lines node 2 shows %+v", s)
	}
	if cs := (Input{Node: 2, Container: "rl-r-node2", State: Running, Logged: t0.Add(time.Second)}).Feed(b); cs != nil {
		t.Errorf("the state the lines implied is not news: %v", kinds(cs))
	}
	if cs := (Input{Node: 2, Container: "rl-s-node2", State: Running, Logged: t0.Add(2 * time.Second)}).Feed(b); len(cs) != 1 {
		t.Errorf("a renamed container: %v", kinds(cs))
	}
	if s := statusOf(t, b, 2, t0.Add(2*time.Second)); s.Container != "rl-s-node2" {
		t.Errorf("after the rename node 2 shows container %q", s.Container)
	}
}

// note writes a line a node logs when the harness changed its clock or its
// drop set: no seq (docs/logs.md).
func (l *nodeLog) note(at time.Duration, event, extra string) []byte {
	return []byte(fmt.Sprintf(`{"time":%q,"level":"info","msg":"m","node":%d,"boot":%q,"event":%q%s}`,
		t0.Add(at).Format(time.RFC3339Nano), l.id, l.boot, event, extra))
}

// TestBoardShowsClockAndCutsTheNodeSays: a clock fault and a one-way cut
// show on the board as the node reports them in effect, and a restart
// (a new process, on true time) forgets them.
func TestBoardShowsClockAndCutsTheNodeSays(t *testing.T) {
	b := NewBoard(0)
	n := &nodeLog{id: 3}
	b.Line(3, n.boot_(0, "first"), time.Time{})
	cs := b.Line(3, n.note(time.Second, "clock", `,"clock_rate":0.5,"reading_ms":900,"true_ms":1000`), time.Time{})
	if got := kinds(cs); !slices.Equal(got, []string{ChangeClock}) {
		t.Fatalf("clock line: changes %v", got)
	}
	b.Line(3, n.note(2*time.Second, "clock", `,"clock_rate":0.5,"jump_ms":-250,"reading_ms":1150,"true_ms":2000`), time.Time{})
	b.Line(3, n.note(3*time.Second, "drop-from", `,"drop_from":[1,5]`), time.Time{})
	s := statusOf(t, b, 3, t0.Add(3*time.Second))
	if s.ClockRate != 0.5 || s.JumpedMS != -250 || !slices.Equal(s.DropFrom, []election.NodeID{1, 5}) {
		t.Fatalf("after clock and cut: %+v", s)
	}
	text := screenText(b, t0.Add(3*time.Second), "r", false)
	for _, want := range []string{"clock 0.5× -250ms", "deaf to 1, 5"} {
		if !strings.Contains(text, want) {
			t.Errorf("the board's text lacks %q:\n%s", want, text)
		}
	}
	b.Line(3, n.boot_(4*time.Second, "second"), time.Time{})
	if s := statusOf(t, b, 3, t0.Add(4*time.Second)); s.ClockRate != 0 || s.JumpedMS != 0 || s.DropFrom != nil {
		t.Fatalf("after a restart the board still shows %+v", s)
	}
}

// TestBoardShowsEachNodesEngine: inputs of a cluster across engines name
// their node's engine; the board keeps it in every status, the screen
// gets an ENGINE column with each engine's short name and says how many
// engines, and a change's line says where its node runs. On one engine
// (no engine named) nothing of it shows.
func TestBoardShowsEachNodesEngine(t *testing.T) {
	const first, second = "unix:///var/run/docker.sock", "unix:///var/run/ringleader-h2.sock"
	b := NewBoard(0)
	one := NewBoard(0)
	for id, eng := range map[election.NodeID]string{1: first, 2: second, 3: first} {
		n := &nodeLog{id: id}
		Input{Node: id, Line: n.boot_(0, fmt.Sprint("b", id)), Engine: eng}.Feed(b)
		Input{Node: id, Line: n.boot_(0, fmt.Sprint("b", id))}.Feed(one)
	}
	cs := Input{Node: 2, Container: "rl-r-node2", State: Down, Logged: t0.Add(time.Second), Engine: second}.Feed(b)
	if len(cs) == 0 || cs[0].Engine != second {
		t.Fatalf("node 2's change does not name its engine: %+v", cs)
	}
	if line := lineOf(cs[0]); !strings.Contains(line, "node 2 on ringleader-h2 container down") {
		t.Errorf("line %q does not say where node 2 runs", line)
	}
	if s := statusOf(t, b, 1, t0.Add(time.Second)); s.Engine != first {
		t.Errorf("node 1's status says engine %q, want %q", s.Engine, first)
	}
	text := screenText(b, t0.Add(time.Second), "r", false)
	for _, want := range []string{"3 nodes across 2 engines", "NODE  ENGINE        STATE", "    2 ringleader-h2 down", "    1 docker        running"} {
		if !strings.Contains(text, want) {
			t.Errorf("the screen lacks %q:\n%s", want, text)
		}
	}
	if text := screenText(one, t0.Add(time.Second), "r", false); strings.Contains(text, "ENGINE") || strings.Contains(text, "engines") {
		t.Errorf("on one engine the screen speaks of engines:\n%s", text)
	}
}

func TestEngineShort(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///var/run/docker.sock":        "docker",
		"unix:///var/run/ringleader-h2.sock": "ringleader-h2",
		"tcp://10.0.0.7:2376":                "10.0.0.7:2376",
		"ssh://me@host":                      "me@host",
		"prod-east":                          "prod-east",
	} {
		if got := EngineShort(in); got != want {
			t.Errorf("EngineShort(%q) = %q, want %q", in, got, want)
		}
	}
}
