package wire

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

var members = []election.NodeID{1, 2, 3, 5}

func TestEncodeDecodeRoundTripKeepsEveryField(t *testing.T) {
	in := election.Message{Type: "ELECTION", From: 2, To: 5, Epoch: 9, Candidate: 3, Members: []election.NodeID{1, 2}, Phase: 2, Hop: 4, Dir: election.CounterClockwise, Seq: 11, Reply: true, Payload: []byte{0, 0xff, 0x10, '"'}}
	b, err := Encode("c1", in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b, "c1", members)
	if err != nil {
		t.Fatalf("Decode(%s): %v", b, err)
	}
	if !equal(in, out) {
		t.Fatalf("round trip changed the message:\n in  %+v\n out %+v", in, out)
	}
}

func TestEnvelopeIsReadableJSON(t *testing.T) {
	b, err := Encode("c1", election.Message{Type: "OK", From: 1, To: 2, Epoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"epoch":3}}`
	if string(b) != want {
		t.Fatalf("Encode = %s, want %s", b, want)
	}
}

func TestDecodeRejectsWithReason(t *testing.T) {
	cases := []struct {
		name string
		data string
		want Reason
	}{
		{"not json", `hello`, Malformed},
		{"empty", ``, Malformed},
		{"array", `[1,2]`, Malformed},
		{"no version", `{"cluster":"c1","msg":{"type":"OK","from":1,"to":2}}`, Malformed},
		{"no msg", `{"v":1,"cluster":"c1"}`, Malformed},
		{"null msg", `{"v":1,"cluster":"c1","msg":null}`, Malformed},
		{"string id", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":"1","to":2}}`, Malformed},
		{"trailing garbage", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2}}x`, Malformed},
		{"future version", `{"v":2,"cluster":"c1","msg":"whatever v2 carries"}`, WrongVersion},
		{"other cluster", `{"v":1,"cluster":"c2","msg":{"type":"OK","from":1,"to":2}}`, ForeignCluster},
		{"no cluster", `{"v":1,"msg":{"type":"OK","from":1,"to":2}}`, ForeignCluster},
		{"unknown sender", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":4,"to":2}}`, UnknownSender},
		{"zero sender", `{"v":1,"cluster":"c1","msg":{"type":"OK","to":2}}`, UnknownSender},
		{"unknown recipient", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":9}}`, BadRecipient},
		{"empty type", `{"v":1,"cluster":"c1","msg":{"type":"","from":1,"to":2}}`, BadType},
		{"type with spaces", `{"v":1,"cluster":"c1","msg":{"type":"OK GO","from":1,"to":2}}`, BadType},
		{"foreign candidate", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"candidate":7}}`, BadField},
		{"foreign listed member", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"members":[1,8]}}`, BadField},
		{"bad dir", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"dir":3}}`, BadField},
		{"negative hop", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"hop":-1}}`, BadField},
		{"largest uint64 epoch", `{"v":1,"cluster":"c1","msg":{"type":"HEARTBEAT","from":1,"to":2,"epoch":18446744073709551615}}`, BadEpoch},
		{"epoch just above MaxEpoch", `{"v":1,"cluster":"c1","msg":{"type":"HEARTBEAT","from":1,"to":2,"epoch":9007199254740992}}`, BadEpoch},
		{"garbled payload", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"payload":"not base64!"}}`, Malformed},
		{"payload as a number", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"payload":7}}`, Malformed},
		{"oversize payload", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"payload":"` + strings.Repeat("QUJD", MaxSize/4) + `"}}`, Oversize},
		{"oversize", `{"v":1,"cluster":"c1","msg":{"type":"OK","from":1,"to":2,"members":[` + strings.Repeat("1,", MaxSize/2) + `1]}}`, Oversize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode([]byte(c.data), "c1", members)
			if err == nil {
				t.Fatalf("Decode accepted %+v", m)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("error %v is not a *wire.Error", err)
			}
			if we.Reason != c.want || ReasonOf(err) != c.want {
				t.Fatalf("reason %q (%v), want %q", we.Reason, err, c.want)
			}
		})
	}
}

func TestEncodeRefusesOversizeMessage(t *testing.T) {
	big := make([]election.NodeID, MaxSize)
	for i := range big {
		big[i] = 1
	}
	_, err := Encode("c1", election.Message{Type: "RING", From: 1, To: 2, Members: big})
	if ReasonOf(err) != Oversize {
		t.Fatalf("Encode of a %d-member message: err %v, want oversize", len(big), err)
	}
}

// TestEncodeBoundsThePayloadWithTheMessage: the payload has no bound of
// its own; the bound is on the whole encoded message, base64 included.
func TestEncodeBoundsThePayloadWithTheMessage(t *testing.T) {
	// base64 writes 4 bytes per 3: a payload of 3/4 MaxSize encodes past it.
	_, err := Encode("c1", election.Message{Type: "RAFT", From: 1, To: 2, Payload: make([]byte, MaxSize*3/4)})
	if ReasonOf(err) != Oversize {
		t.Fatalf("Encode of a %d-byte payload: err %v, want oversize", MaxSize*3/4, err)
	}
	fits := make([]byte, MaxSize/2)
	b, err := Encode("c1", election.Message{Type: "RAFT", From: 1, To: 2, Payload: fits})
	if err != nil {
		t.Fatalf("Encode of a %d-byte payload: %v", len(fits), err)
	}
	m, err := Decode(b, "c1", members)
	if err != nil || !slices.Equal(m.Payload, fits) {
		t.Fatalf("Decode of a %d-byte payload: %d bytes back, %v", len(fits), len(m.Payload), err)
	}
}

// TestMaxEpochItselfIsAccepted: the refusal starts just above MaxEpoch, so
// NextEpoch's saturated value still travels.
func TestMaxEpochItselfIsAccepted(t *testing.T) {
	data, err := Encode("c1", election.Message{Type: "HEARTBEAT", From: 1, To: 2, Epoch: election.MaxEpoch})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Decode(data, "c1", []election.NodeID{1, 2}); err != nil || m.Epoch != election.MaxEpoch {
		t.Fatalf("Decode: %v, %v", m, err)
	}
	if election.NextEpoch(election.MaxEpoch) != election.MaxEpoch || election.NextEpoch(7) != 8 {
		t.Fatal("NextEpoch does not saturate at MaxEpoch")
	}
}

// TestRejectionDetailsAreBounded: what a detail quotes of a hostile field
// is a short prefix, not a copy.
func TestRejectionDetailsAreBounded(t *testing.T) {
	huge := strings.Repeat("A", 60<<10)
	_, err := Decode([]byte(`{"v":1,"cluster":"c1","msg":{"type":"`+huge+`","from":1,"to":2}}`), "c1", []election.NodeID{1, 2})
	if ReasonOf(err) != BadType || len(err.Error()) > 200 {
		t.Fatalf("reason %s, detail of %d bytes", ReasonOf(err), len(err.Error()))
	}
	_, err = Decode([]byte(`{"v":1,"cluster":"`+huge+`","msg":{}}`), "c1", []election.NodeID{1, 2})
	if ReasonOf(err) != ForeignCluster || len(err.Error()) > 200 {
		t.Fatalf("reason %s, detail of %d bytes", ReasonOf(err), len(err.Error()))
	}
}

func TestEveryReasonIsListed(t *testing.T) {
	for _, r := range []Reason{Malformed, Oversize, WrongVersion, ForeignCluster, UnknownSender, BadRecipient, BadType, BadField, BadEpoch} {
		if !slices.Contains(Reasons, r) {
			t.Errorf("reason %q missing from Reasons", r)
		}
	}
}

// equal compares messages treating nil and empty Members and Payload
// alike: the wire omits both.
func equal(a, b election.Message) bool {
	if !slices.Equal(a.Members, b.Members) || !slices.Equal(a.Payload, b.Payload) {
		return false
	}
	a.Members, b.Members = nil, nil
	a.Payload, b.Payload = nil, nil
	return reflect.DeepEqual(a, b)
}
