// Package control is the language of a node's control channel: the
// request that changes a running node's clock, its drop set or its hold
// set, the node's answer, and how both are written and checked. It holds
// no transport, so the container backend, which writes requests, and
// `ringleader control`, which sends them, need not import the node
// runtime and the NATS server it embeds. The node (package node) decodes
// requests and answers them; node.SendControl sends one over NATS.
//
// The harness (the control account, docs/trust.md) sends a request on the
// node's control subject, and the node answers once the change is in
// effect. A request is a small versioned JSON object:
//
//	{"v":1,"clock":{"rate":0.5}}
//	{"v":1,"clock":{"jump_ms":-250}}
//	{"v":1,"drop_from":[1,2]}
//	{"v":1,"clock":{"rate":2},"drop_from":[]}
//	{"v":1,"hold_from":[2]}
//	{"v":1,"start":true}
//
// and the answer
//
//	{"v":1,"ok":true,"node":3,"rate":0.5,"reading_ms":1234.5,"true_ms":1200,"drop_from":[1,2]}
//	{"v":1,"ok":false,"node":3,"error":"..."}
package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/wire"
)

// Version is the control message version this package writes and
// accepts.
const Version = 1

// MaxSize bounds a control request: a drop set naming thousands of
// members fits, a hostile payload costs nothing.
const MaxSize = wire.MaxSize

// Request is one change to a node. At least one part is set.
type Request struct {
	// Clock changes the node's clock: a new rate or a jump.
	Clock *ClockChange `json:"clock,omitempty"`
	// DropFrom, when set, replaces the node's whole drop set: election
	// messages from these senders are dropped on arrival (the receiving
	// end of a one-way cut). An empty set drops nothing. Setting the
	// same set twice changes nothing.
	DropFrom *[]election.NodeID `json:"drop_from,omitempty"`
	// HoldFrom, when set, replaces the node's whole hold set: election
	// messages from these senders are held on arrival, in order, and
	// delivered — through the normal receive path, recorded as received
	// then — as soon as the set no longer names their sender (the
	// receiving end of a jam, chaos.Jam). The node holds at most
	// MaxHeld messages; past that it counts and drops the overflow.
	HoldFrom *[]election.NodeID `json:"hold_from,omitempty"`
	// Start starts the election machine of a node that booted gated
	// (RINGLEADER_GATED, chaos.Gate), after the rest of the request has
	// taken effect: messages that reached it meanwhile are delivered
	// then, in arrival order. A node whose machine runs already takes it
	// as done, so it can be sent again safely.
	Start bool `json:"start,omitempty"`
}

// ClockChange is a rate (from clock.MinRate to clock.MaxRate; 1 is real
// speed) or a signed jump in milliseconds (at most clock.MaxJump either
// way), not both.
type ClockChange struct {
	Rate   *float64 `json:"rate,omitempty"`
	JumpMS *int64   `json:"jump_ms,omitempty"`
}

// SetRate is a control that sets the clock's rate.
func SetRate(r float64) Request { return Request{Clock: &ClockChange{Rate: &r}} }

// Jump is a control that jumps the clock by d (whole milliseconds).
func Jump(d time.Duration) Request {
	ms := d.Milliseconds()
	return Request{Clock: &ClockChange{JumpMS: &ms}}
}

// DropFrom is a control that replaces the drop set with ids.
func DropFrom(ids ...election.NodeID) Request {
	set := append([]election.NodeID{}, ids...)
	return Request{DropFrom: &set}
}

// Start is a control that starts a gated node's machine.
func Start() Request { return Request{Start: true} }

// HoldFrom is a control that replaces the hold set with ids.
func HoldFrom(ids ...election.NodeID) Request {
	set := append([]election.NodeID{}, ids...)
	return Request{HoldFrom: &set}
}

// String is the control in words, for errors and logs.
func (c Request) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// envelope is the request on the wire.
type envelope struct {
	V int `json:"v"`
	Request
}

// Reply is a node's answer to a control request.
type Reply struct {
	V    int             `json:"v"`
	OK   bool            `json:"ok"`
	Node election.NodeID `json:"node"`
	// Error says why the request was refused (OK false).
	Error string `json:"error,omitempty"`
	// The node's clock, drop set and hold set after the change, and how
	// many messages it holds.
	Rate      float64           `json:"rate,omitempty"`
	ReadingMS float64           `json:"reading_ms,omitempty"`
	TrueMS    float64           `json:"true_ms,omitempty"`
	DropFrom  []election.NodeID `json:"drop_from,omitempty"`
	HoldFrom  []election.NodeID `json:"hold_from,omitempty"`
	Held      int               `json:"held,omitempty"`
	// Gated is true while the node's machine waits for a start.
	Gated bool `json:"gated,omitempty"`
}

// Encode is the request for c; it refuses what a node would refuse
// of any node (members are checked by the node).
func Encode(c Request) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return json.Marshal(envelope{V: Version, Request: c})
}

// Decode parses and validates a control request for node self of
// members. Every error is a *wire.Error, so refusals are counted by the
// same reasons as the inbox's drops.
func Decode(data []byte, self election.NodeID, members []election.NodeID) (Request, error) {
	if len(data) > MaxSize {
		return Request{}, &wire.Error{Reason: wire.Oversize, Detail: fmt.Sprintf("control request of %d bytes, more than %d", len(data), MaxSize)}
	}
	var head struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Request{}, &wire.Error{Reason: wire.Malformed, Detail: fmt.Sprintf("control request is not a JSON object: %v", err)}
	}
	if head.V == nil {
		return Request{}, &wire.Error{Reason: wire.Malformed, Detail: `control request without "v"`}
	}
	if *head.V != Version {
		return Request{}, &wire.Error{Reason: wire.WrongVersion, Detail: fmt.Sprintf("control version %d, this node speaks %d", *head.V, Version)}
	}
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a field this node does not know would silently not take effect
	if err := dec.Decode(&env); err != nil {
		return Request{}, &wire.Error{Reason: wire.Malformed, Detail: fmt.Sprintf("control request: %v", err)}
	}
	c := env.Request
	if err := c.check(); err != nil {
		return Request{}, err
	}
	for _, set := range c.peerSets() {
		if set.ids == nil {
			continue
		}
		for _, id := range *set.ids {
			if id == self {
				return Request{}, &wire.Error{Reason: wire.BadField, Detail: fmt.Sprintf("%s names node %d itself", set.key, id)}
			}
			if !slices.Contains(members, id) {
				return Request{}, &wire.Error{Reason: wire.BadField, Detail: fmt.Sprintf("%s: %d is not a member of %v", set.key, id, members)}
			}
		}
	}
	return c, nil
}

// peerSet is one of a request's sets of peers, by its JSON key.
type peerSet struct {
	key string
	ids *[]election.NodeID
}

// peerSets are the request's sets of peers (nil when not given), which
// every node checks alike.
func (c Request) peerSets() []peerSet {
	return []peerSet{{"drop_from", c.DropFrom}, {"hold_from", c.HoldFrom}}
}

// check is what any node refuses, whatever its membership.
func (c Request) check() error {
	bad := func(format string, a ...any) error {
		return &wire.Error{Reason: wire.BadField, Detail: fmt.Sprintf(format, a...)}
	}
	if c.Clock == nil && c.DropFrom == nil && c.HoldFrom == nil && !c.Start {
		return bad(`control request changes nothing: want "clock", "drop_from", "hold_from" and/or "start"`)
	}
	if cc := c.Clock; cc != nil {
		switch {
		case (cc.Rate == nil) == (cc.JumpMS == nil):
			return bad(`clock: want exactly one of "rate" and "jump_ms"`)
		case cc.Rate != nil:
			if err := clock.CheckRate(*cc.Rate); err != nil {
				return bad("%v", err)
			}
		default:
			if *cc.JumpMS > clock.MaxJump.Milliseconds() || *cc.JumpMS < -clock.MaxJump.Milliseconds() {
				return bad("clock jump_ms %d: at most %d either way", *cc.JumpMS, clock.MaxJump.Milliseconds())
			}
		}
	}
	for _, set := range c.peerSets() {
		if set.ids == nil {
			continue
		}
		seen := map[election.NodeID]bool{}
		for _, id := range *set.ids {
			if id <= 0 {
				return bad("%s: %d is not a node ID", set.key, id)
			}
			if seen[id] {
				return bad("%s names %d twice", set.key, id)
			}
			seen[id] = true
		}
	}
	return nil
}

// Timeout is how long a sender waits for the node's answer by default:
// the node answers from its event loop, which a busy node may take a
// moment to reach.
const Timeout = 5 * time.Second

// MaxHeld bounds the messages a node holds for a hold set: past it a
// message from a held sender is counted as dropped and not held. The
// simulator holds to the same bound (chaos.JamHeld).
const MaxHeld = 4096
