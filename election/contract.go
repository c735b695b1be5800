package election

import (
	"encoding/json"
	"fmt"
	"slices"
)

// This file is the JSON side of the machine contract: the text names of
// event and effect kinds, the checks that make a decoded Event or Effect
// one a machine can be handed, and the bound on a Durable's blob. The
// contract is documented in docs/contract.md; TestContractGolden pins its
// text.

// eventKindNames and effectKindNames are the kinds' JSON names, indexed by
// kind; String uses them too, so logs and JSON agree.
var (
	eventKindNames  = [...]string{EventStart: "start", EventReceive: "receive", EventTimer: "timer", EventPeerDown: "peer-down"}
	effectKindNames = [...]string{EffectSend: "send", EffectBroadcast: "broadcast", EffectSetTimer: "set-timer", EffectCancelTimer: "cancel-timer", EffectView: "view", EffectPersist: "persist"}
)

// EventKinds and EffectKinds list every kind, in declaration order.
func EventKinds() []EventKind {
	return []EventKind{EventStart, EventReceive, EventTimer, EventPeerDown}
}

func EffectKinds() []EffectKind {
	return []EffectKind{EffectSend, EffectBroadcast, EffectSetTimer, EffectCancelTimer, EffectView, EffectPersist}
}

// MarshalText writes the kind's name; an unknown kind is an error, so a
// zero or corrupt kind never reaches another process.
func (k EventKind) MarshalText() ([]byte, error) {
	if k <= 0 || int(k) >= len(eventKindNames) {
		return nil, fmt.Errorf("event kind %d is not one of %v", int(k), eventKindNames[1:])
	}
	return []byte(eventKindNames[k]), nil
}

// UnmarshalText reads a kind's name; an unknown name is an error listing
// the known ones.
func (k *EventKind) UnmarshalText(b []byte) error {
	if i := slices.Index(eventKindNames[:], string(b)); i > 0 {
		*k = EventKind(i)
		return nil
	}
	return fmt.Errorf("event kind %q: want one of %v", b, eventKindNames[1:])
}

func (k EffectKind) MarshalText() ([]byte, error) {
	if k <= 0 || int(k) >= len(effectKindNames) {
		return nil, fmt.Errorf("effect kind %d is not one of %v", int(k), effectKindNames[1:])
	}
	return []byte(effectKindNames[k]), nil
}

func (k *EffectKind) UnmarshalText(b []byte) error {
	if i := slices.Index(effectKindNames[:], string(b)); i > 0 {
		*k = EffectKind(i)
		return nil
	}
	return fmt.Errorf("effect kind %q: want one of %v", b, effectKindNames[1:])
}

// UnmarshalJSON reads an Event and refuses one without a kind.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.Kind == 0 {
		return fmt.Errorf("event without \"kind\" (want one of %v)", eventKindNames[1:])
	}
	*e = Event(p)
	return nil
}

// UnmarshalJSON reads an Effect, refusing one without a kind and a
// persisted blob above MaxDurableBlob.
func (e *Effect) UnmarshalJSON(b []byte) error {
	type plain Effect
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.Kind == 0 {
		return fmt.Errorf("effect without \"kind\" (want one of %v)", effectKindNames[1:])
	}
	if p.Durable != nil {
		if err := p.Durable.CheckSize(); err != nil {
			return err
		}
	}
	*e = Effect(p)
	return nil
}

// MaxDurableBlob bounds Durable.Blob: 1 MiB. It is kept whole in memory by
// the simulator for every node and rewritten to disk by a node on every
// persist, so an algorithm keeps a bounded state there (a snapshot and a
// short log tail), never a history that grows with the run.
const MaxDurableBlob = 1 << 20

// CheckSize refuses a Durable whose blob is above MaxDurableBlob.
func (d Durable) CheckSize() error {
	if len(d.Blob) > MaxDurableBlob {
		return fmt.Errorf("durable blob is %d bytes, more than the %d (MaxDurableBlob) a runtime keeps", len(d.Blob), MaxDurableBlob)
	}
	return nil
}

// Clone returns a deep copy: a runtime keeps a clone of what a machine
// persisted, so the machine may reuse its buffer.
func (d Durable) Clone() Durable {
	d.Blob = slices.Clone(d.Blob)
	return d
}

// DurableSummary is a Durable as log lines show it: the blob's size, not
// its bytes.
type DurableSummary struct {
	Epoch      uint64 `json:"epoch"`
	VotedEpoch uint64 `json:"voted_epoch"`
	VotedFor   NodeID `json:"voted_for"`
	BlobBytes  int    `json:"blob_bytes,omitempty"`
}

// Summary is d for a log line.
func (d Durable) Summary() DurableSummary {
	return DurableSummary{Epoch: d.Epoch, VotedEpoch: d.VotedEpoch, VotedFor: d.VotedFor, BlobBytes: len(d.Blob)}
}
