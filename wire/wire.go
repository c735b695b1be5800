// Package wire is the on-the-wire form of election messages between node
// runtimes: a small versioned JSON envelope around election.Message, and a
// decoder that validates everything a machine relies on before the message
// reaches it. A node never trusts what arrives on its subject: anything that
// fails here is dropped and counted by reason, never handed to the machine.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
)

// Version is the envelope version this package writes and accepts.
const Version = 1

// MaxSize bounds an encoded message. The largest legitimate message is a
// ring message carrying every member's ID; 64 KiB leaves room for thousands
// of members while keeping a hostile payload from costing real memory.
const MaxSize = 64 << 10

// maxTypeLen bounds a message type name (ELECTION, COORDINATOR, ...).
const maxTypeLen = 32

// Envelope is the JSON object on the wire:
//
//	{"v":1,"cluster":"ringleader","msg":{"type":"ELECTION","from":3,"to":5,"epoch":7}}
type Envelope struct {
	V       int              `json:"v"`
	Cluster string           `json:"cluster"`
	Msg     election.Message `json:"msg"`
}

// Reason says why a message was rejected. The values appear in the node's
// drop log lines and status counters, so they are part of the log schema.
type Reason string

const (
	// Malformed: not a JSON envelope, or a field of the wrong JSON type.
	Malformed Reason = "malformed"
	// Oversize: longer than MaxSize.
	Oversize Reason = "oversize"
	// WrongVersion: an envelope version this node does not speak.
	WrongVersion Reason = "wrong-version"
	// ForeignCluster: the envelope names another cluster.
	ForeignCluster Reason = "foreign-cluster"
	// UnknownSender: From is not a configured member.
	UnknownSender Reason = "unknown-sender"
	// BadRecipient: To is not a configured member, or not this node.
	BadRecipient Reason = "bad-recipient"
	// BadType: the message type is empty, too long or not a plain name.
	BadType Reason = "bad-type"
	// BadField: an optional field holds a value no algorithm sends
	// (a candidate or listed member outside the membership, a direction
	// other than ±1, a negative phase or hop count).
	BadField Reason = "bad-field"
	// BadEpoch: an epoch above election.MaxEpoch. No node sends one: it
	// is forged or corrupt, and adopting it would leave nothing newer to
	// elect a leader in.
	BadEpoch Reason = "bad-epoch"
)

// Reasons lists every Reason, in the order the docs describe them.
var Reasons = []Reason{Malformed, Oversize, WrongVersion, ForeignCluster, UnknownSender, BadRecipient, BadType, BadField, BadEpoch}

// Error is a rejected message: the reason, for counting, and a detail for
// people.
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string { return "wire: " + string(e.Reason) + ": " + e.Detail }

func reject(r Reason, format string, args ...any) error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the Reason of an error returned by Decode, or Malformed
// for any other error.
func ReasonOf(err error) Reason {
	var we *Error
	if errors.As(err, &we) {
		return we.Reason
	}
	return Malformed
}

// Encode wraps m in an envelope for cluster. It fails only when the result
// would exceed MaxSize, so a machine bug cannot put an undeliverable message
// on the wire unnoticed.
func Encode(cluster string, m election.Message) ([]byte, error) {
	b, err := json.Marshal(Envelope{V: Version, Cluster: cluster, Msg: m})
	if err != nil {
		return nil, fmt.Errorf("wire: encode %s from %d to %d: %w", m.Type, m.From, m.To, err)
	}
	if len(b) > MaxSize {
		return nil, reject(Oversize, "encoded %s from %d to %d is %d bytes, more than %d", m.Type, m.From, m.To, len(b), MaxSize)
	}
	return b, nil
}

// Decode parses and validates one envelope addressed to a node of cluster
// whose configured membership is members. It checks the version, the
// cluster, that From and To are members, the type name, and that optional
// fields hold only values an algorithm could have sent. Whether To is the
// receiving node itself is the caller's check (Decode does not know who is
// receiving). Every error is an *Error.
func Decode(data []byte, cluster string, members []election.NodeID) (election.Message, error) {
	if len(data) > MaxSize {
		return election.Message{}, reject(Oversize, "%d bytes, more than %d", len(data), MaxSize)
	}
	// Read the version first so that a future envelope whose msg has a
	// different shape is reported as a version mismatch, not as garbage.
	var head struct {
		V       *int            `json:"v"`
		Cluster *string         `json:"cluster"`
		Msg     json.RawMessage `json:"msg"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return election.Message{}, reject(Malformed, "not a JSON envelope: %v", err)
	}
	if head.V == nil {
		return election.Message{}, reject(Malformed, "envelope without \"v\"")
	}
	if *head.V != Version {
		return election.Message{}, reject(WrongVersion, "version %d, this node speaks %d", *head.V, Version)
	}
	if head.Cluster == nil || *head.Cluster != cluster {
		got := "(none)"
		if head.Cluster != nil {
			got = Clip(*head.Cluster)
		}
		return election.Message{}, reject(ForeignCluster, "cluster %s, want %q", got, cluster)
	}
	if len(head.Msg) == 0 || bytes.Equal(head.Msg, []byte("null")) {
		return election.Message{}, reject(Malformed, "envelope without \"msg\"")
	}
	var m election.Message
	if err := json.Unmarshal(head.Msg, &m); err != nil {
		return election.Message{}, reject(Malformed, "msg: %v", err)
	}
	if err := Validate(m, members); err != nil {
		return election.Message{}, err
	}
	return m, nil
}

// Validate checks a decoded message against the membership; Decode calls
// it, and the fuzz target uses it to state what Decode guarantees.
func Validate(m election.Message, members []election.NodeID) error {
	if !slices.Contains(members, m.From) {
		return reject(UnknownSender, "from %d, members are %v", m.From, members)
	}
	if !slices.Contains(members, m.To) {
		return reject(BadRecipient, "to %d, members are %v", m.To, members)
	}
	if !validType(m.Type) {
		return reject(BadType, "type %s (%d bytes): want 1 to %d letters, digits, '_' or '-'", Clip(m.Type), len(m.Type), maxTypeLen)
	}
	if m.Epoch > election.MaxEpoch {
		return reject(BadEpoch, "epoch %d is above the largest a node uses, %d", m.Epoch, election.MaxEpoch)
	}
	if m.Candidate != election.None && !slices.Contains(members, m.Candidate) {
		return reject(BadField, "candidate %d is not a member of %v", m.Candidate, members)
	}
	for _, id := range m.Members {
		if !slices.Contains(members, id) {
			return reject(BadField, "listed member %d is not a member of %v", id, members)
		}
	}
	if m.Dir != 0 && m.Dir != election.Clockwise && m.Dir != election.CounterClockwise {
		return reject(BadField, "dir %d: want 1, -1 or absent", m.Dir)
	}
	if m.Phase < 0 || m.Hop < 0 {
		return reject(BadField, "phase %d, hop %d: want non-negative", m.Phase, m.Hop)
	}
	return nil
}

// clipLen is how much of a rejected string a reason's detail quotes: enough
// to recognise it, never enough to let a hostile sender fill the logs.
const clipLen = 40

// Clip quotes s for a log line, cut to its first clipLen bytes with the
// length of what was left out: a 60 KB type field costs 60 bytes of log, not
// 60 KB.
func Clip(s string) string { return ClipTo(s, clipLen) }

// ClipTo is Clip with a bound of n bytes, for text that deserves more room
// than a rejected field (a crashed node's last words).
func ClipTo(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(+%d bytes)", s[:n], len(s)-n)
}

func validType(t string) bool {
	if t == "" || len(t) > maxTypeLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
