package election_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// contractSamples holds one Event of every kind and one Effect of every
// kind, each with the JSON text the contract (docs/contract.md) promises
// for it. A renamed field or kind fails TestContractGolden.
var (
	sampleMsg = election.Message{
		Type: "VOTE", From: 2, To: 5, Epoch: 7, Candidate: 2,
		Members: []election.NodeID{1, 2, 5}, Phase: 1, Hop: 3, Dir: election.CounterClockwise,
		Seq: 9, Reply: true, Payload: []byte{0x08, 0x96, 0x01},
	}
	eventSamples = []struct {
		ev   election.Event
		json string
	}{
		{election.Event{Kind: election.EventStart},
			`{"kind":"start","now_ns":0}`},
		{election.Event{Kind: election.EventReceive, Msg: sampleMsg, Now: 1500 * time.Microsecond},
			`{"kind":"receive","msg":{"type":"VOTE","from":2,"to":5,"epoch":7,"candidate":2,"members":[1,2,5],"seq":9,"phase":1,"hop":3,"dir":-1,"reply":true,"payload":"CJYB"},"now_ns":1500000}`},
		{election.Event{Kind: election.EventTimer, Timer: "election", Now: 2 * time.Second},
			`{"kind":"timer","timer":"election","now_ns":2000000000}`},
		{election.Event{Kind: election.EventPeerDown, Peer: 3, Now: 7},
			`{"kind":"peer-down","peer":3,"now_ns":7}`},
	}
	effectSamples = []struct {
		ef   election.Effect
		json string
	}{
		{election.Effect{Kind: election.EffectSend, Msg: election.Message{Type: "OK", From: 5, To: 2, Epoch: 7}},
			`{"kind":"send","msg":{"type":"OK","from":5,"to":2,"epoch":7}}`},
		{election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "COORDINATOR", From: 5, Epoch: 8, Members: []election.NodeID{1, 5}}},
			`{"kind":"broadcast","msg":{"type":"COORDINATOR","from":5,"to":0,"epoch":8,"members":[1,5]}}`},
		{election.Effect{Kind: election.EffectSetTimer, Timer: "heartbeat", After: 100 * time.Millisecond},
			`{"kind":"set-timer","timer":"heartbeat","after_ns":100000000}`},
		{election.Effect{Kind: election.EffectCancelTimer, Timer: "answer"},
			`{"kind":"cancel-timer","timer":"answer"}`},
		{election.Effect{Kind: election.EffectView, View: election.View{Leader: 5, Epoch: 8, Role: election.Follower}},
			`{"kind":"view","view":{"leader":5,"epoch":8,"role":"follower"}}`},
		{election.Effect{Kind: election.EffectPersist, Durable: &election.Durable{Epoch: 8, VotedEpoch: 8, VotedFor: 5, Blob: []byte("term=8")}},
			`{"kind":"persist","durable":{"epoch":8,"voted_epoch":8,"voted_for":5,"blob":"dGVybT04"}}`},
	}
)

// TestContractCoversEveryKind keeps the samples complete: a kind added to
// the contract without a sample (and so without a pinned JSON form) fails.
func TestContractCoversEveryKind(t *testing.T) {
	var evs []election.EventKind
	for _, s := range eventSamples {
		evs = append(evs, s.ev.Kind)
	}
	if !reflect.DeepEqual(evs, election.EventKinds()) {
		t.Errorf("event samples cover %v, the contract has %v", evs, election.EventKinds())
	}
	var efs []election.EffectKind
	for _, s := range effectSamples {
		efs = append(efs, s.ef.Kind)
	}
	if !reflect.DeepEqual(efs, election.EffectKinds()) {
		t.Errorf("effect samples cover %v, the contract has %v", efs, election.EffectKinds())
	}
}

// TestContractGolden pins the JSON text of one event and one effect of
// every kind.
func TestContractGolden(t *testing.T) {
	for _, s := range eventSamples {
		b, err := json.Marshal(s.ev)
		if err != nil {
			t.Fatalf("marshal %v: %v", s.ev.Kind, err)
		}
		if string(b) != s.json {
			t.Errorf("event %v:\n got %s\nwant %s", s.ev.Kind, b, s.json)
		}
	}
	for _, s := range effectSamples {
		b, err := json.Marshal(s.ef)
		if err != nil {
			t.Fatalf("marshal %v: %v", s.ef.Kind, err)
		}
		if string(b) != s.json {
			t.Errorf("effect %v:\n got %s\nwant %s", s.ef.Kind, b, s.json)
		}
	}
}

// TestContractRoundTrip: every event, effect, message and durable state
// read back from its JSON equals what was written.
func TestContractRoundTrip(t *testing.T) {
	for _, s := range eventSamples {
		var back election.Event
		if err := json.Unmarshal([]byte(s.json), &back); err != nil {
			t.Fatalf("unmarshal %s: %v", s.json, err)
		}
		if !reflect.DeepEqual(back, s.ev) {
			t.Errorf("event %v round trip:\n got %+v\nwant %+v", s.ev.Kind, back, s.ev)
		}
	}
	for _, s := range effectSamples {
		var back election.Effect
		if err := json.Unmarshal([]byte(s.json), &back); err != nil {
			t.Fatalf("unmarshal %s: %v", s.json, err)
		}
		if !reflect.DeepEqual(back, s.ef) {
			t.Errorf("effect %v round trip:\n got %+v\nwant %+v", s.ef.Kind, back, s.ef)
		}
	}
	b, err := json.Marshal(sampleMsg)
	if err != nil {
		t.Fatal(err)
	}
	var m election.Message
	if err := json.Unmarshal(b, &m); err != nil || !reflect.DeepEqual(m, sampleMsg) {
		t.Errorf("message round trip: got %+v (%v), want %+v", m, err, sampleMsg)
	}
	d := election.Durable{Epoch: 3, VotedEpoch: 2, VotedFor: 4, Blob: []byte{0, 1, 2, 255}}
	b, err = json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var d2 election.Durable
	if err := json.Unmarshal(b, &d2); err != nil || !reflect.DeepEqual(d2, d) {
		t.Errorf("durable round trip: got %+v (%v), want %+v", d2, err, d)
	}
}

// TestContractRefusesUnknown: kinds outside the contract are errors both
// ways, and a missing kind is one too.
func TestContractRefusesUnknown(t *testing.T) {
	bad := []struct {
		what, json, want string
		into             any
	}{
		{"unknown event kind", `{"kind":"tick"}`, `event kind "tick": want one of`, new(election.Event)},
		{"event kind as a number", `{"kind":2}`, `cannot unmarshal number`, new(election.Event)},
		{"event without kind", `{"timer":"x"}`, `event without "kind"`, new(election.Event)},
		{"unknown effect kind", `{"kind":"sleep"}`, `effect kind "sleep": want one of`, new(election.Effect)},
		{"effect without kind", `{"timer":"x"}`, `effect without "kind"`, new(election.Effect)},
		{"garbled payload", `{"kind":"receive","msg":{"type":"X","from":1,"to":2,"epoch":0,"payload":"%%"}}`, `illegal base64`, new(election.Event)},
	}
	for _, c := range bad {
		err := json.Unmarshal([]byte(c.json), c.into)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %s gave %v, want an error containing %q", c.what, c.json, err, c.want)
		}
	}
	if _, err := json.Marshal(election.Event{}); err == nil || !strings.Contains(err.Error(), "event kind 0") {
		t.Errorf("marshalling a kindless event gave %v, want an error naming kind 0", err)
	}
	if _, err := json.Marshal(election.Effect{Kind: 99}); err == nil || !strings.Contains(err.Error(), "effect kind 99") {
		t.Errorf("marshalling effect kind 99 gave %v, want an error naming it", err)
	}
}

// TestDurableBlobBound: a blob at the bound is kept, one byte more is
// refused with a reason naming the bound, and a persist effect carrying
// one does not decode.
func TestDurableBlobBound(t *testing.T) {
	if err := (election.Durable{Blob: make([]byte, election.MaxDurableBlob)}).CheckSize(); err != nil {
		t.Errorf("a blob of exactly MaxDurableBlob refused: %v", err)
	}
	big := election.Durable{Blob: make([]byte, election.MaxDurableBlob+1)}
	err := big.CheckSize()
	if err == nil || !strings.Contains(err.Error(), "MaxDurableBlob") {
		t.Fatalf("oversize blob gave %v, want an error naming MaxDurableBlob", err)
	}
	b, err := json.Marshal(election.Effect{Kind: election.EffectPersist, Durable: &big})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, new(election.Effect)); err == nil || !strings.Contains(err.Error(), "MaxDurableBlob") {
		t.Errorf("decoding an oversize persist gave %v, want the bound's error", err)
	}
}

// TestCloneCopiesPayloadAndBlob: a runtime's copy does not share bytes
// with the machine that may reuse its buffers.
func TestCloneCopiesPayloadAndBlob(t *testing.T) {
	m := election.Message{Type: "X", Payload: []byte("abc"), Members: []election.NodeID{1}}
	c := m.Clone()
	m.Payload[0], m.Members[0] = 'z', 9
	if string(c.Payload) != "abc" || c.Members[0] != 1 {
		t.Errorf("Message.Clone shares memory: payload %q members %v", c.Payload, c.Members)
	}
	d := election.Durable{Blob: []byte("abc")}
	dc := d.Clone()
	d.Blob[0] = 'z'
	if string(dc.Blob) != "abc" {
		t.Errorf("Durable.Clone shares memory: blob %q", dc.Blob)
	}
}
