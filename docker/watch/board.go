// Package watch is a live view of a running cluster built from the nodes'
// container logs alone: what leader each node believes in, its epoch and
// role, how many messages it sends and receives a second, the faults that
// can be seen from outside (a container down or paused, a node cut off
// from every network, drops it counted), and an alarm while two or more
// nodes hold the role of leader at once.
//
// Board is the core: a plain value fed with log lines and container
// states, with no clock, goroutine or I/O of its own. Follow feeds it
// from the Docker engine; Run draws it on a terminal, as lines, as JSON
// records and on a live web page. Nothing here writes to a container or
// speaks on the cluster's network, so watching changes nothing watched.
package watch

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// State is what the engine says of a node's container.
type State string

const (
	// Unknown: nothing said yet (a Board fed with lines only).
	Unknown State = ""
	// Running: the container runs.
	Running State = "running"
	// Paused: the container is frozen (docker pause); it logs nothing
	// and its view is the one it froze with.
	Paused State = "paused"
	// Down: the container is not running (killed, stopped, exited) or
	// the node logged its stop line.
	Down State = "down"
)

// Change kinds, the "change" of a Change.
const (
	ChangeBoot     = "boot"      // a new process: a new boot ID, no view yet
	ChangeView     = "view"      // the node announced a new view
	ChangeDrop     = "drop"      // the node's drop counters grew
	ChangeStop     = "stop"      // the node logged its graceful stop
	ChangeState    = "state"     // the container's state changed
	ChangeAlarm    = "alarm"     // two or more nodes hold role leader (or the set of them changed)
	ChangeAlarmEnd = "alarm-end" // at most one node holds role leader again
	ChangeClock    = "clock"     // the harness changed the node's clock (its rate, or a jump)
	ChangeCut      = "cut"       // the harness replaced the node's drop set (one-way cuts into it)
	ChangeNoAnswer = "no-answer" // a real server's member stopped answering its probe (or its answer was refused)
)

// DefaultRateWindow is the span over which messages per second are counted.
const DefaultRateWindow = 2 * time.Second

// NodeStatus is what the board knows of one node at one instant.
type NodeStatus struct {
	Node      election.NodeID `json:"node"`
	Container string          `json:"container,omitempty"`
	// Engine is the Docker engine that holds the node's container, when
	// the cluster spans several (as --engines named it); empty on one.
	Engine string `json:"engine,omitempty"`
	// State is the container's state; Isolated says it is attached to
	// no network at all (docker network disconnect).
	State    State  `json:"state"`
	Isolated bool   `json:"isolated,omitempty"`
	Boot     string `json:"boot,omitempty"`
	// Leader, Epoch and Role are the node's last view (zero, 0 and
	// undecided before its first view of a boot).
	Leader election.NodeID `json:"leader"`
	Epoch  uint64          `json:"epoch"`
	Role   election.Role   `json:"role"`
	// ViewSince is when the node announced that view.
	ViewSince time.Time `json:"view_since,omitzero"`
	// SentPerSec and RecvPerSec count send and recv lines over the rate
	// window ending at the status's instant; for a node that logs no
	// such lines (info level) they are its last summary line's rates.
	SentPerSec float64 `json:"sent_per_s"`
	RecvPerSec float64 `json:"recv_per_s"`
	// Drops counts what the node rejected since it booted, by reason
	// (each drop line stands for itself and the drops it suppressed).
	Drops map[string]int `json:"drops,omitempty"`
	// ClockRate is the rate of the node's clock when a clock fault
	// changed it (absent: real speed), JumpedMS the jumps it took since
	// it booted; DropFrom the senders whose messages it drops on arrival
	// (the receiving end of one-way cuts). Read from the node's own
	// lines: what the node says is in effect.
	ClockRate float64           `json:"clock_rate,omitempty"`
	JumpedMS  int64             `json:"jumped_ms,omitempty"`
	DropFrom  []election.NodeID `json:"drop_from,omitempty"`
	// LastLine is the time of the node's last event line.
	LastLine time.Time `json:"last_line,omitzero"`
	// NoAnswer, for a member of a real server's cluster, says why its
	// probe gave no view: the member is unknown, not leaderless, and the
	// view shown is the last it gave.
	NoAnswer string `json:"no_answer,omitempty"`
}

// DropTotal is the sum of n's drop counters.
func (n NodeStatus) DropTotal() int {
	t := 0
	for _, c := range n.Drops {
		t += c
	}
	return t
}

// Change is one thing that changed, as one record: a node's new status
// (Node set), or the alarm (Leaders set, or empty at its end).
type Change struct {
	Time   time.Time `json:"time"`
	Change string    `json:"change"`
	*NodeStatus
	// Leaders are the nodes that hold role leader while the alarm lasts;
	// PausedLeaders those of them that are frozen (stale leaders that
	// cannot act until they thaw).
	Leaders       []election.NodeID `json:"leaders,omitempty"`
	PausedLeaders []election.NodeID `json:"paused_leaders,omitempty"`
}

// Board turns the log lines of a cluster's nodes and their containers'
// states into each node's status and the two-leaders alarm. It is not
// safe for concurrent use: one goroutine owns it.
type Board struct {
	window time.Duration
	nodes  map[election.NodeID]*nodeState
	// alarm is the set of leaders while two or more hold the role.
	alarm       []election.NodeID
	alarmPaused []election.NodeID
	alarmSince  time.Time
	now         time.Time
}

type nodeState struct {
	status  NodeStatus
	lastSeq map[string]uint64 // per boot: the last seq applied
	sent    []time.Time       // send lines within the window
	recv    []time.Time
	// perMessage: this boot logs a line per message (debug level), so
	// its rates are counted from those lines.
	perMessage bool
	// summary is the rate the boot's last summary line gave; a node at
	// info level logs no send or recv lines, only those.
	summary summaryRate
}

// summaryRate is a rate taken from a summary line: what it counted since
// the summary before, over the interval between them.
type summaryRate struct {
	at         time.Time
	hold       time.Duration // how long after at the rate stands
	sent, recv float64
}

// summaryLine is what the board reads from a node's summary line (an
// informational line: no seq, not a history record).
type summaryLine struct {
	Time      time.Time `json:"time"`
	Event     string    `json:"event"`
	Boot      string    `json:"boot"`
	Interval  string    `json:"interval"`
	SinceLast struct {
		Sent     uint64 `json:"sent"`
		Received uint64 `json:"received"`
	} `json:"since_last"`
}

// eventSummary is the event of a node's summary line (node.EventSummary;
// this package reads logs and does not import the node runtime).
const eventSummary = "summary"

// NewBoard returns an empty board counting rates over window (0:
// DefaultRateWindow).
func NewBoard(window time.Duration) *Board {
	if window <= 0 {
		window = DefaultRateWindow
	}
	return &Board{window: window, nodes: map[election.NodeID]*nodeState{}}
}

func (b *Board) node(id election.NodeID) *nodeState {
	n := b.nodes[id]
	if n == nil {
		n = &nodeState{status: NodeStatus{Node: id, Role: election.Undecided}, lastSeq: map[string]uint64{}}
		b.nodes[id] = n
	}
	return n
}

// lineExtra is what the board reads from a line beyond history.Record.
type lineExtra struct {
	Suppressed int `json:"suppressed"`
}

// Line feeds one log line of node id. logged is when the engine received
// it: the line's own time is used when it has one. Lines that are not
// event lines (informational ones, a node's stderr) change nothing, and so
// does a line read twice (the same boot and seq); an unparsable line is
// ignored. It returns what changed, in order.
func (b *Board) Line(id election.NodeID, line []byte, logged time.Time) []Change {
	if len(line) == 0 || line[0] != '{' {
		return nil
	}
	rec, ok, err := history.ParseNodeLog(line)
	if err != nil {
		return nil
	}
	if note, isNote := history.ParseControlNote(line); isNote {
		return b.controlNote(id, note, logged)
	}
	if !ok {
		return b.summaryLine(id, line, logged)
	}
	at := rec.Time
	if at.IsZero() {
		at = logged
	}
	b.advance(at)
	n := b.node(id)
	if last, seen := n.lastSeq[rec.Boot]; seen && rec.Seq <= last {
		return nil
	}
	n.lastSeq[rec.Boot] = rec.Seq
	st := &n.status
	if at.After(st.LastLine) {
		st.LastLine = at
	}
	var out []Change
	switch rec.Kind {
	case history.KindBoot:
		if st.Boot != rec.Boot {
			// A new process knows nothing yet: its old view and
			// counters are history.
			st.Boot = rec.Boot
			st.Leader, st.Epoch, st.Role, st.ViewSince = 0, 0, election.Undecided, at
			st.Drops = nil
			st.ClockRate, st.JumpedMS, st.DropFrom = 0, 0, nil // a new process runs on true time
			n.sent, n.recv = nil, nil
			n.perMessage, n.summary = false, summaryRate{}
		}
		if st.State == Unknown || st.State == Down {
			st.State = Running
		}
		out = append(out, b.changeOf(ChangeBoot, n, at))
	case history.KindView:
		if st.Boot != rec.Boot {
			st.Boot = rec.Boot
			st.Drops = nil
		}
		st.Leader, st.Epoch, st.Role, st.ViewSince = rec.View.Leader, rec.View.Epoch, rec.View.Role, at
		if st.State == Unknown {
			st.State = Running
		}
		out = append(out, b.changeOf(ChangeView, n, at))
	case history.KindSend, history.KindRecv:
		n.perMessage = true
		times := &n.sent
		if rec.Kind == history.KindRecv {
			times = &n.recv
		}
		*times = append(trimBefore(*times, at.Add(-b.window)), at)
		if st.State == Unknown {
			st.State = Running
			out = append(out, b.changeOf(ChangeState, n, at))
		}
	case history.KindDrop:
		var x lineExtra
		_ = json.Unmarshal(line, &x) // parsed once already: cannot fail
		if st.Drops == nil {
			st.Drops = map[string]int{}
		}
		st.Drops[rec.Reason] += 1 + max(x.Suppressed, 0)
		out = append(out, b.changeOf(ChangeDrop, n, at))
	case history.KindStop:
		// The process ends: the state it stopped with stays on
		// show, but a stopped node holds no role any more.
		st.State = Down
		out = append(out, b.changeOf(ChangeStop, n, at))
	}
	return append(out, b.checkAlarm(at)...)
}

// controlNote takes a node's word that the harness changed its clock or
// its drop set.
func (b *Board) controlNote(id election.NodeID, c history.ControlNote, logged time.Time) []Change {
	at := c.Time
	if at.IsZero() {
		at = logged
	}
	b.advance(at)
	n := b.node(id)
	st := &n.status
	if st.Boot != "" && c.Boot != st.Boot {
		return nil // a line of a process that is gone
	}
	switch c.Event {
	case history.EventClock:
		st.ClockRate = c.Rate
		if c.Rate == 1 {
			st.ClockRate = 0
		}
		st.JumpedMS += c.JumpMS
		return []Change{b.changeOf(ChangeClock, n, at)}
	default:
		st.DropFrom = slices.Clone(c.DropFrom)
		return []Change{b.changeOf(ChangeCut, n, at)}
	}
}

// summaryLine takes a node's summary line: at info level the only place
// its traffic shows. Its rate is what it counted since the summary before,
// over the interval between them, and it stands for half an interval more
// than the next summary should take to come (a paused or cut-off node
// stops logging, and its rate falls to zero then). A boot that logs a
// line per message is counted from those lines instead.
func (b *Board) summaryLine(id election.NodeID, line []byte, logged time.Time) []Change {
	var s summaryLine
	if json.Unmarshal(line, &s) != nil || s.Event != eventSummary {
		return nil
	}
	interval, err := time.ParseDuration(s.Interval)
	if err != nil || interval <= 0 {
		return nil
	}
	at := s.Time
	if at.IsZero() {
		at = logged
	}
	b.advance(at)
	n := b.node(id)
	st := &n.status
	if s.Boot != st.Boot || !at.After(n.summary.at) {
		// Another boot than the one on show, or read again.
		return nil
	}
	n.summary = summaryRate{
		at:   at,
		hold: interval + interval/2,
		sent: float64(s.SinceLast.Sent) / interval.Seconds(),
		recv: float64(s.SinceLast.Received) / interval.Seconds(),
	}
	if st.State == Unknown {
		st.State = Running
		return []Change{b.changeOf(ChangeState, n, at)}
	}
	return nil
}

// SetState records what the engine says of node id's container: its
// name, its state, and whether it is attached to no network. It returns
// a change when any of them changed.
func (b *Board) SetState(id election.NodeID, container string, s State, isolated bool, at time.Time) []Change {
	b.advance(at)
	n := b.node(id)
	st := &n.status
	if st.Container == container && st.State == s && st.Isolated == isolated {
		return nil
	}
	st.Container, st.State, st.Isolated = container, s, isolated
	out := []Change{b.changeOf(ChangeState, n, at)}
	return append(out, b.checkAlarm(at)...)
}

// Locate records where node id runs: its container's name, when the
// board knows none yet, and, for a cluster across engines, the engine
// that holds it (empty leaves what is known). Every input names its
// node's container, so the board shows it from the node's first line,
// even when the engine no longer remembers the container's start (it
// keeps its last few hundred events) and the container's state comes
// only once the past is replayed; a container renamed since is the
// container state's to say (SetState). It is part of every status that
// follows and is no change of its own.
func (b *Board) Locate(id election.NodeID, container, engine string) {
	st := &b.node(id).status
	if st.Container == "" {
		st.Container = container
	}
	if engine != "" {
		st.Engine = engine
	}
}

// Engines says whether the nodes' engines are known: the cluster spans
// several, and views show the engine of each node.
func (b *Board) Engines() bool {
	for _, n := range b.nodes {
		if n.status.Engine != "" {
			return true
		}
	}
	return false
}

// Probe feeds one probe answer of member id of a real server's cluster
// (Probed): its view when it answered, else why not. It returns what
// changed: nothing when the member says what it said before.
func (b *Board) Probe(id election.NodeID, container string, p Probed, at time.Time) []Change {
	b.advance(at)
	n := b.node(id)
	st := &n.status
	if container != "" {
		st.Container = container
	}
	if st.State == Unknown {
		st.State = Running
	}
	var out []Change
	switch {
	case p.NoAnswer != "":
		if st.NoAnswer == p.NoAnswer {
			return nil
		}
		st.NoAnswer = p.NoAnswer
		if st.State == Down {
			return nil // the engine said why already; its errors add nothing
		}
		out = append(out, b.changeOf(ChangeNoAnswer, n, at))
	case st.NoAnswer != "" || st.Leader != p.View.Leader || st.Epoch != p.View.Epoch || st.Role != p.View.Role:
		st.NoAnswer = ""
		st.Leader, st.Epoch, st.Role, st.ViewSince = p.View.Leader, p.View.Epoch, p.View.Role, at
		out = append(out, b.changeOf(ChangeView, n, at))
	default:
		return nil
	}
	return append(out, b.checkAlarm(at)...)
}

// advance moves the board's notion of now forward (never back).
func (b *Board) advance(t time.Time) {
	if t.After(b.now) {
		b.now = t
	}
}

// Now is the latest instant the board was told of.
func (b *Board) Now() time.Time { return b.now }

func (b *Board) changeOf(kind string, n *nodeState, at time.Time) Change {
	s := b.statusAt(n, at)
	return Change{Time: at, Change: kind, NodeStatus: &s}
}

// statusAt is n's status with its rates over the window ending at at;
// counts older than the window are forgotten.
func (b *Board) statusAt(n *nodeState, at time.Time) NodeStatus {
	from := at.Add(-b.window)
	n.sent = trimBefore(n.sent, from)
	n.recv = trimBefore(n.recv, from)
	s := n.status
	switch {
	case n.perMessage:
		s.SentPerSec = float64(countUntil(n.sent, at)) / b.window.Seconds()
		s.RecvPerSec = float64(countUntil(n.recv, at)) / b.window.Seconds()
	case !n.summary.at.IsZero() && !at.Before(n.summary.at) && at.Sub(n.summary.at) <= n.summary.hold:
		s.SentPerSec, s.RecvPerSec = n.summary.sent, n.summary.recv
	}
	s.Drops = maps.Clone(s.Drops)
	return s
}

// trimBefore drops the times before from (the slice is in arrival order,
// nearly sorted; a late stray is dropped when it reaches the front).
func trimBefore(ts []time.Time, from time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(from) {
		i++
	}
	if i == 0 {
		return ts
	}
	return append(ts[:0], ts[i:]...)
}

func countUntil(ts []time.Time, at time.Time) int {
	c := 0
	for _, t := range ts {
		if !t.After(at) {
			c++
		}
	}
	return c
}

// Status returns every node's status at instant now (rates over the
// window ending there), in ID order.
func (b *Board) Status(now time.Time) []NodeStatus {
	b.advance(now)
	ids := slices.Sorted(maps.Keys(b.nodes))
	out := make([]NodeStatus, 0, len(ids))
	for _, id := range ids {
		out = append(out, b.statusAt(b.nodes[id], now))
	}
	return out
}

// Alarm returns the nodes holding role leader while two or more do (nil
// otherwise), those of them that are paused, and since when the alarm
// lasts.
func (b *Board) Alarm() (leaders, paused []election.NodeID, since time.Time) {
	if len(b.alarm) < 2 {
		return nil, nil, time.Time{}
	}
	return slices.Clone(b.alarm), slices.Clone(b.alarmPaused), b.alarmSince
}

// leaders lists the nodes that hold role leader: running or paused (a
// frozen leader acts as one when it thaws), not down.
func (b *Board) leaders() []election.NodeID {
	var out []election.NodeID
	for id, n := range b.nodes {
		if n.status.Role == election.Leader && n.status.State != Down {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func (b *Board) pausedOf(ids []election.NodeID) []election.NodeID {
	var out []election.NodeID
	for _, id := range ids {
		if b.nodes[id].status.State == Paused {
			out = append(out, id)
		}
	}
	return out
}

// checkAlarm compares the leaders now with the alarm's and says when the
// alarm begins, changes or ends.
func (b *Board) checkAlarm(at time.Time) []Change {
	ls := b.leaders()
	if len(ls) < 2 {
		ls = nil
	}
	paused := b.pausedOf(ls)
	if slices.Equal(ls, b.alarm) && slices.Equal(paused, b.alarmPaused) {
		return nil
	}
	began := b.alarm == nil
	b.alarm, b.alarmPaused = ls, paused
	if ls == nil {
		b.alarmSince = time.Time{}
		return []Change{{Time: at, Change: ChangeAlarmEnd}}
	}
	if began {
		b.alarmSince = at
	}
	return []Change{{Time: at, Change: ChangeAlarm, Leaders: slices.Clone(ls), PausedLeaders: slices.Clone(paused)}}
}
