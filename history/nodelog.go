package history

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// The node runtime writes one logrus JSON line per event on stdout. These are
// the fixed keys of that schema (documented in docs/logs.md); the harness
// depends on them, so change them only with a version bump of the schema.
const (
	LogTime    = "time"    // RFC 3339 with nanoseconds, wall clock
	LogLevel   = "level"   // logrus level
	LogMsg     = "msg"     // human text
	LogNode    = "node"    // node ID (number)
	LogBoot    = "boot"    // boot ID (string, new on every process start)
	LogSeq     = "seq"     // per-boot sequence number, from 1, no gaps
	LogEvent   = "event"   // one of the Log* event values below
	LogLeader  = "leader"  // view: leader ID (0 = none)
	LogEpoch   = "epoch"   // view or message epoch
	LogRole    = "role"    // view: role
	LogType    = "type"    // message type
	LogFrom    = "from"    // message sender
	LogTo      = "to"      // message recipient
	LogMessage = "message" // the whole election.Message as a JSON object
	LogReason  = "reason"  // drop: why
	LogSchema  = "schema"  // boot: log schema version
)

// LogSchemaVersion is the version of the node log schema.
const LogSchemaVersion = 1

// Event values of the LogEvent key. They are the history Kinds a line maps
// to, so a log line and its history record say the same word.
const (
	EventBoot = string(KindBoot)
	EventView = string(KindView)
	EventSend = string(KindSend)
	EventRecv = string(KindRecv)
	EventDrop = string(KindDrop)
	EventStop = string(KindStop)
)

// nodeLogLine is the subset of a node log line the harness reads.
type nodeLogLine struct {
	Time    time.Time         `json:"time"`
	Node    election.NodeID   `json:"node"`
	Boot    string            `json:"boot"`
	Seq     uint64            `json:"seq"`
	Event   string            `json:"event"`
	Leader  election.NodeID   `json:"leader"`
	Epoch   uint64            `json:"epoch"`
	Role    election.Role     `json:"role"`
	Message *election.Message `json:"message"`
	Reason  string            `json:"reason"`
}

// ParseNodeLog turns one node log line into a history record. It returns
// ok=false, with no error, for valid JSON lines that carry no event (plain
// informational logs) or an event the history does not record; an error for a line that is not JSON or whose event
// lacks what it needs.
func ParseNodeLog(line []byte) (rec Record, ok bool, err error) {
	var l nodeLogLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Record{}, false, fmt.Errorf("node log: not a JSON object: %w", err)
	}
	switch l.Event {
	case EventBoot, EventStop, EventView, EventSend, EventRecv, EventDrop:
	default:
		// An event the history does not record (a summary, a hint,
		// a rejected state file), one a newer node logs, or none (an
		// older node's plain line): such lines carry no seq.
		return Record{}, false, nil
	}
	if l.Node <= 0 || l.Boot == "" || l.Seq == 0 {
		return Record{}, false, fmt.Errorf("node log: %s event lacks node, boot or seq", l.Event)
	}
	rec = Record{Time: l.Time, Process: "node", Node: l.Node, Boot: l.Boot, Seq: l.Seq}
	switch l.Event {
	case EventBoot:
		rec.Kind = KindBoot
	case EventStop:
		rec.Kind = KindStop
		rec.Reason = l.Reason // a hosted program's failure (ReasonProgramFailed)
	case EventView:
		rec.Kind = KindView
		rec.View = &election.View{Leader: l.Leader, Epoch: l.Epoch, Role: l.Role}
	case EventSend, EventRecv:
		if l.Message == nil {
			return Record{}, false, fmt.Errorf("node log: %s event without %q", l.Event, LogMessage)
		}
		rec.Kind = Kind(l.Event)
		rec.Msg = l.Message
	case EventDrop:
		rec.Kind = KindDrop
		rec.Reason = l.Reason
		rec.Msg = l.Message // a message lost to a one-way cut names it; a rejected one has none
	default:
		return Record{}, false, nil // a newer event this harness does not know
	}
	return rec, true, nil
}

// Events and keys of the lines a node writes when the harness changed its
// clock or its drop set over the control channel (docs/logs.md). They carry
// no seq: the history records the fault from the harness's side, and these
// lines are the node's word that the change took effect, which attach and
// watch read back (ParseControlNote).
const (
	EventClock    = "clock"     // the node's clock changed (rate or jump)
	EventDropFrom = "drop-from" // the node's drop set was replaced

	LogClockRate = "clock_rate" // boot (only with --clock-rate), and the clock line: the rate now
	LogJumpMS    = "jump_ms"    // clock: the jump, when the change was one
	LogReadingMS = "reading_ms" // clock: the node clock's reading after the change, ms since the loop started
	LogTrueMS    = "true_ms"    // clock: the true time since the loop started, ms
	LogDropFrom  = "drop_from"  // drop-from: the whole set, ascending
)

// ControlNote is a node's line about a control change: its clock rate
// after a clock line (and the jump, when it was one), or its whole drop set
// after a drop-from line.
type ControlNote struct {
	Time     time.Time
	Node     election.NodeID
	Boot     string
	Event    string // EventClock or EventDropFrom
	Rate     float64
	JumpMS   int64
	DropFrom []election.NodeID
}

// ParseControlNote reads a clock or drop-from line; ok is false for any
// other line (and for one without node or boot).
func ParseControlNote(line []byte) (ControlNote, bool) {
	var l struct {
		Time     time.Time         `json:"time"`
		Node     election.NodeID   `json:"node"`
		Boot     string            `json:"boot"`
		Event    string            `json:"event"`
		Rate     float64           `json:"clock_rate"`
		JumpMS   int64             `json:"jump_ms"`
		DropFrom []election.NodeID `json:"drop_from"`
	}
	if err := json.Unmarshal(line, &l); err != nil || (l.Event != EventClock && l.Event != EventDropFrom) || l.Node <= 0 || l.Boot == "" {
		return ControlNote{}, false
	}
	return ControlNote{Time: l.Time, Node: l.Node, Boot: l.Boot, Event: l.Event, Rate: l.Rate, JumpMS: l.JumpMS, DropFrom: l.DropFrom}, true
}

// Keys of the boot line of a node that hosts a program (docs/protocol.md)
// instead of a built-in algorithm: what the node's probe start learnt of
// the program. A process that attaches to the cluster reads them
// (ParseProgramBoot) instead of starting the program itself.
const (
	LogProgram       = "program"        // the program's command line as the node runs it
	LogClaims        = "claims"         // the properties it claims in the node's quorum mode
	LogElectionTypes = "election_types" // its election message types
	LogAnnounceTypes = "announce_types" // its leader announcement types
)

// ProgramBoot is the boot line of a node that hosts a program.
type ProgramBoot struct {
	Node          election.NodeID
	Boot          string
	Algorithm     string // the name the node registered the program under
	Quorum        string // resolved: none or majority
	Program       string
	Claims        []election.Property
	ElectionTypes []string
	AnnounceTypes []string
}

// ParseProgramBoot reads the boot line of a node that hosts a program; ok
// is false for any other line (another event, a built-in algorithm's boot,
// one without node or boot).
func ParseProgramBoot(line []byte) (ProgramBoot, bool) {
	var l struct {
		Node          election.NodeID     `json:"node"`
		Boot          string              `json:"boot"`
		Event         string              `json:"event"`
		Algorithm     string              `json:"algorithm"`
		Quorum        string              `json:"quorum"`
		Program       string              `json:"program"`
		Claims        []election.Property `json:"claims"`
		ElectionTypes []string            `json:"election_types"`
		AnnounceTypes []string            `json:"announce_types"`
	}
	if err := json.Unmarshal(line, &l); err != nil || l.Event != EventBoot || l.Program == "" || l.Node <= 0 || l.Boot == "" {
		return ProgramBoot{}, false
	}
	return ProgramBoot{Node: l.Node, Boot: l.Boot, Algorithm: l.Algorithm, Quorum: l.Quorum, Program: l.Program,
		Claims: l.Claims, ElectionTypes: l.ElectionTypes, AnnounceTypes: l.AnnounceTypes}, true
}
