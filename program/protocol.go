// Package program runs an election algorithm written as any program, in
// any language, as an election.Machine: the runtime starts the program as
// a child process and speaks the protocol of docs/protocol.md over its
// standard input and output, one event line in, one answer line out. The
// events and effects are the machine contract's JSON (election/contract.go);
// this package adds the envelope, the bounds, the process's lifecycle and
// the reporting of a program that fails.
//
// Register makes a program an algorithm of the registry, so that every
// runtime that runs an algorithm by name (the simulator, the explorer, the
// harness) runs the program. Serve is the other side, for programs
// written in Go.
package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Version is the protocol version this package speaks.
const Version = 1

// MaxLine bounds one line either way: a persisted blob of
// election.MaxDurableBlob bytes is 1.4 MiB in base64, with room to spare.
const MaxLine = 4 << 20

// Request is one line from the runtime to the program.
type Request struct {
	V     int            `json:"v"`
	Seq   uint64         `json:"seq"`
	Event election.Event `json:"event"`
	// Init comes with a start event only.
	Init *Init `json:"init,omitempty"`
}

// Init is a node's configuration, sent with every start: a start resets
// the program to it.
type Init struct {
	ID      election.NodeID     `json:"id"`
	Members []election.NodeID   `json:"members"`
	Quorum  election.QuorumMode `json:"quorum"`
	Options election.Options    `json:"options"`
	Timing  Timing              `json:"timing"`
	Durable election.Durable    `json:"durable"`
	Seed    election.Seed       `json:"seed"`
	// FaultFree: see election.Config.FaultFree.
	FaultFree bool `json:"fault_free,omitempty"`
}

// Timing is election.Timing in the contract's units (integer nanoseconds,
// in fields ending in _ns).
type Timing struct {
	Heartbeat time.Duration `json:"heartbeat_ns"`
	Suspicion time.Duration `json:"suspicion_ns"`
	Answer    time.Duration `json:"answer_ns"`
}

// Answer is one line from the program to the runtime.
type Answer struct {
	V       int               `json:"v"`
	Seq     uint64            `json:"seq"`
	Effects []election.Effect `json:"effects"`
	// Claims, ElectionTypes and AnnounceTypes are read from the answer
	// to a start only (all optional).
	Claims        []election.Property `json:"claims,omitempty"`
	ElectionTypes []string            `json:"election_types,omitempty"`
	AnnounceTypes []string            `json:"announce_types,omitempty"`
}

// InitOf is the Init a machine built from cfg sends with its start.
func InitOf(cfg election.Config) *Init {
	members := cfg.Members
	if cfg.Membership != nil {
		members = cfg.Membership.Members()
	}
	opts := cfg.Options
	if opts == nil {
		opts = election.Options{}
	}
	return &Init{
		ID: cfg.ID, Members: members, Quorum: cfg.Quorum, Options: opts,
		Timing:  Timing{Heartbeat: cfg.Timing.Heartbeat, Suspicion: cfg.Timing.Suspicion, Answer: cfg.Timing.Answer},
		Durable: cfg.Durable, Seed: cfg.Seed, FaultFree: cfg.FaultFree,
	}
}

// Config is the election.Config an Init stands for (Rand made from Seed).
func (in *Init) Config() election.Config {
	return election.Config{
		ID: in.ID, Members: in.Members, Quorum: in.Quorum, Options: in.Options,
		Timing:  election.Timing{Heartbeat: in.Timing.Heartbeat, Suspicion: in.Timing.Suspicion, Answer: in.Timing.Answer},
		Durable: in.Durable, Seed: in.Seed, Rand: in.Seed.Rand(), FaultFree: in.FaultFree,
	}
}

// LineError is a line the protocol does not allow: which line of the
// program's output, which field, and what is wrong with it.
type LineError struct {
	Line  uint64 // the program's output lines from its launch, from 1
	Field string // "seq", "effects[2].kind", ...; empty: the whole line
	Err   error
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: field %s: %v", e.Line, e.Field, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// DecodeAnswer reads one answer line, the answer to event seq, checking
// the envelope and every effect; an error is a *LineError naming the
// field.
func DecodeAnswer(line []byte, lineNo, seq uint64) (Answer, error) {
	var raw struct {
		V             *int                `json:"v"`
		Seq           *uint64             `json:"seq"`
		Effects       []json.RawMessage   `json:"effects"`
		Claims        []election.Property `json:"claims"`
		ElectionTypes []string            `json:"election_types"`
		AnnounceTypes []string            `json:"announce_types"`
	}
	bad := func(field string, err error) (Answer, error) {
		return Answer{}, &LineError{Line: lineNo, Field: field, Err: err}
	}
	if err := json.Unmarshal(line, &raw); err != nil {
		return bad(typeErrorField("", err), plainTypeError(err))
	}
	switch {
	case raw.V == nil:
		return bad("v", errors.New("missing (want 1)"))
	case *raw.V != Version:
		return bad("v", fmt.Errorf("%d, want %d", *raw.V, Version))
	case raw.Seq == nil:
		return bad("seq", fmt.Errorf("missing (want %d)", seq))
	case *raw.Seq != seq:
		return bad("seq", fmt.Errorf("%d, want %d (the event answered)", *raw.Seq, seq))
	}
	a := Answer{V: Version, Seq: seq, Claims: raw.Claims, ElectionTypes: raw.ElectionTypes, AnnounceTypes: raw.AnnounceTypes}
	if len(raw.Effects) > 0 {
		a.Effects = make([]election.Effect, len(raw.Effects))
	}
	for i, r := range raw.Effects {
		field := fmt.Sprintf("effects[%d]", i)
		if err := decodeEffect(r, &a.Effects[i]); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return bad(field+"."+fe.field, fe.err)
			}
			return bad(typeErrorField(field, err), plainTypeError(err))
		}
	}
	return a, nil
}

// fieldError is an effect's field that is wrong.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

// decodeEffect reads one effect: its kind first, so that an unknown kind
// is named as such, then the whole, then what a runtime needs of it.
func decodeEffect(r json.RawMessage, e *election.Effect) error {
	var k struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(r, &k); err != nil {
		return err
	}
	if k.Kind == nil {
		return &fieldError{"kind", fmt.Errorf("missing (want one of %v)", election.EffectKinds())}
	}
	var kind election.EffectKind
	if err := kind.UnmarshalText([]byte(*k.Kind)); err != nil {
		return &fieldError{"kind", err}
	}
	if err := json.Unmarshal(r, e); err != nil {
		return err
	}
	return checkEffect(e)
}

// checkEffect refuses an effect no runtime can carry out.
func checkEffect(e *election.Effect) error {
	switch e.Kind {
	case election.EffectSend, election.EffectBroadcast:
		if e.Msg.Type == "" {
			return &fieldError{"msg.type", errors.New("missing: a message needs a type")}
		}
		if e.Kind == election.EffectSend && e.Msg.To <= 0 {
			return &fieldError{"msg.to", fmt.Errorf("%d: a send needs a recipient (a positive ID)", e.Msg.To)}
		}
		if e.Msg.Epoch > election.MaxEpoch {
			return &fieldError{"msg.epoch", fmt.Errorf("%d is above the largest epoch %d", e.Msg.Epoch, election.MaxEpoch)}
		}
	case election.EffectSetTimer, election.EffectCancelTimer:
		if e.Timer == "" {
			return &fieldError{"timer", errors.New("missing: a timer needs a name")}
		}
		if e.After < 0 {
			return &fieldError{"after_ns", fmt.Errorf("%d: a delay cannot be negative", e.After)}
		}
	case election.EffectView:
		switch e.View.Role {
		case election.Undecided, election.Candidate, election.Follower, election.Leader:
		default:
			return &fieldError{"view.role", fmt.Errorf("%q: want undecided, candidate, follower or leader", e.View.Role)}
		}
	}
	return nil
}

// typeErrorField names the field a JSON error is about, under prefix.
func typeErrorField(prefix string, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return prefix
	}
	if prefix == "" {
		return te.Field
	}
	return prefix + "." + te.Field
}

// plainTypeError says what a value of the wrong type was and what was
// wanted, without encoding/json's view of Go types it does not know.
func plainTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("a JSON %s, want %s", te.Value, te.Type)
	}
	return err
}

// encodeRequest appends req's line, newline included, to buf.
func encodeRequest(buf *bytes.Buffer, req *Request) error {
	enc := json.NewEncoder(buf) // Encode ends the line
	enc.SetEscapeHTML(false)
	return enc.Encode(req)
}
