// Package history is the record of a run: one JSON object per line, written
// as it happens, so that a run that crashes still leaves everything it saw.
//
// Records come from two kinds of process, in Jepsen's vocabulary: nodes
// (views, messages sent, received and dropped, boots) and the nemesis (fault
// operations, each an "invoke" followed by an "ok" or "fail" once it took
// effect). The simulator writes these records directly; the container harness
// builds them from the nodes' JSON log lines (see ParseNodeLog) and from its
// own fault operations. The checkers read nothing else.
package history

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Kind is what a record says happened.
type Kind string

const (
	// KindBoot: a node process started (a new boot ID).
	KindBoot Kind = "boot"
	// KindView: a node's view changed; View is the new view.
	KindView Kind = "view"
	// KindSend: a node sent Msg.
	KindSend Kind = "send"
	// KindRecv: a node received and accepted Msg.
	KindRecv Kind = "recv"
	// KindDrop: a node received something it rejected (Reason says why).
	KindDrop Kind = "drop"
	// KindFault: a nemesis operation (Fault is set).
	KindFault Kind = "fault"
	// KindStop: a node process stopped gracefully (it logged so), or
	// ended because the program it hosts failed (Reason begins with
	// ReasonProgramFailed).
	KindStop Kind = "stop"
	// KindMark: a harness annotation (a scenario step began, an
	// expectation was checked); Note says what.
	KindMark Kind = "mark"
)

// NemesisProcess is the Process of every fault record.
const NemesisProcess = "nemesis"

// ReasonProgramFailed begins the Reason of the stop record of a node
// whose program exited, hung or broke the protocol: "program-failed: "
// and what happened, with the program's stderr's tail. Every world writes
// it the same way (the simulator, the node runtime's log line).
const ReasonProgramFailed = "program-failed"

// ProgramFailure is what a stop record says of a failed program: the
// failure, and whether the record is one.
func (r *Record) ProgramFailure() (string, bool) {
	if r.Kind != KindStop {
		return "", false
	}
	return strings.CutPrefix(r.Reason, ReasonProgramFailed+": ")
}

// Record is one line of history.jsonl.
type Record struct {
	// Time is when it happened: wall time for container runs, a fixed
	// origin plus virtual time for simulated runs (see SimOrigin).
	Time time.Time `json:"time"`
	// Process is "node" for node records or NemesisProcess.
	Process string `json:"process"`
	Kind    Kind   `json:"kind"`

	// Node-side fields.
	Node election.NodeID `json:"node,omitempty"`
	// Boot identifies one run of a node process; Seq numbers that boot's
	// log lines from 1 without gaps, so a recorder that follows logs
	// across restarts can drop duplicates and notice losses.
	Boot string            `json:"boot,omitempty"`
	Seq  uint64            `json:"seq,omitempty"`
	View *election.View    `json:"view,omitempty"`
	Msg  *election.Message `json:"msg,omitempty"`
	// Reason explains a drop ("malformed", "foreign-cluster", ...), or
	// a stop that was not asked for: ReasonProgramFailed.
	Reason string `json:"reason,omitempty"`

	// Nemesis-side fields.
	Fault *Fault `json:"fault,omitempty"`

	// Note is free text for marks.
	Note string `json:"note,omitempty"`
}

// FaultPhase follows Jepsen's op types.
type FaultPhase string

const (
	// FaultInvoke: the nemesis is about to apply the fault.
	FaultInvoke FaultPhase = "invoke"
	// FaultOK: the fault took effect.
	FaultOK FaultPhase = "ok"
	// FaultFail: the fault could not be applied (Error says why).
	FaultFail FaultPhase = "fail"
)

// Fault is a nemesis operation. Op is the name of one of package chaos's
// fault kinds (chaos.Kinds lists them; history does not, so that a new kind
// needs nothing here).
type Fault struct {
	Op    string     `json:"op"`
	Phase FaultPhase `json:"phase"`
	// Target is the target as written in the scenario ("leader",
	// "minority", "3", ...); Nodes is what it resolved to at that moment.
	Target string            `json:"target,omitempty"`
	Nodes  []election.NodeID `json:"nodes,omitempty"`
	// Groups is a partition's components; Links lists cut directed links
	// as [from, to] pairs (a one-way cut has one direction only).
	Groups [][]election.NodeID  `json:"groups,omitempty"`
	Links  [][2]election.NodeID `json:"links,omitempty"`
	// Params are the kind's values (loss, delay and jitter, rate and
	// jump), keyed by the names the kind declares; see Params.
	Params Params `json:"params,omitzero"`
	Error  string `json:"error,omitempty"`
	// Note, on an ok record, says what the fault left alone because it
	// was already so ("no-op: node 3 is already down"); see chaos.Decide.
	Note string `json:"note,omitempty"`
}

// SimOrigin is the wall-clock origin of simulated histories: virtual time 0.
// A fixed origin keeps a seed's history byte-identical across runs.
var SimOrigin = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Duration is a time.Duration written as people read it ("20ms").
type Duration time.Duration

// MarshalJSON writes d as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a string such as "20ms" (or a number of
// nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var ns int64
		if err := json.Unmarshal(b, &ns); err != nil {
			return fmt.Errorf("duration: want a string like \"20ms\", got %s", b)
		}
		*d = Duration(ns)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}
