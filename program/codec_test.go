package program

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// randomMessage draws a message with any mix of fields set, strings
// sometimes needing an escape, so that both fast paths and their
// declines are exercised.
func randomMessage(r *rand.Rand) election.Message {
	var m election.Message
	pick := func() bool { return r.IntN(3) == 0 }
	if pick() {
		return m
	}
	m.Type = []string{"ELECTION", "OK", "COORDINATOR", "HEARTBEAT", `Q"UOTE`, "tab\t", "é"}[r.IntN(7)]
	m.From, m.To, m.Epoch = election.NodeID(r.IntN(9)), election.NodeID(r.IntN(9)-1), r.Uint64N(1<<20)
	if pick() {
		m.Candidate = election.NodeID(r.IntN(1000))
	}
	if pick() {
		m.Members = []election.NodeID{1, 2, 3}
	}
	if pick() {
		m.Seq = r.Uint64()
	}
	if pick() {
		m.Phase, m.Hop, m.Dir = int32(r.IntN(40)-5), int32(r.Int32()), election.Dir(r.IntN(3)-1)
	}
	m.Reply = pick()
	if pick() {
		m.Payload = []byte("raw\x00bytes")
	}
	return m
}

func randomEvent(r *rand.Rand) election.Event {
	ev := election.Event{Kind: election.EventKind(1 + r.IntN(4)), Now: time.Duration(r.Int64N(1 << 40))}
	switch ev.Kind {
	case election.EventReceive:
		ev.Msg = randomMessage(r)
	case election.EventTimer:
		ev.Timer = []string{"answer", "suspect", "ack-7", `a"b`}[r.IntN(4)]
	case election.EventPeerDown:
		ev.Peer = election.NodeID(r.IntN(9))
	}
	return ev
}

func randomEffect(r *rand.Rand) election.Effect {
	e := election.Effect{Kind: election.EffectKind(1 + r.IntN(6))}
	switch e.Kind {
	case election.EffectSend, election.EffectBroadcast:
		e.Msg = randomMessage(r)
		e.Msg.Type = "ELECTION"
		e.Msg.To = election.NodeID(1 + r.IntN(9))
	case election.EffectSetTimer, election.EffectCancelTimer:
		e.Timer = []string{"answer", "suspect", "ack-7"}[r.IntN(3)]
		e.After = time.Duration(r.Int64N(1 << 34))
	case election.EffectView:
		e.View = election.View{Leader: election.NodeID(r.IntN(9)), Epoch: r.Uint64N(9), Role: []election.Role{election.Undecided, election.Candidate, election.Follower, election.Leader}[r.IntN(4)]}
	case election.EffectPersist:
		if r.IntN(4) > 0 {
			e.Durable = &election.Durable{Epoch: r.Uint64N(9), VotedEpoch: r.Uint64N(9), VotedFor: election.NodeID(r.IntN(9))}
			if r.IntN(3) == 0 {
				e.Durable.Blob = []byte("state")
			}
		}
	}
	return e
}

func randomAnswer(r *rand.Rand, seq uint64) Answer {
	a := Answer{V: Version, Seq: seq}
	if r.IntN(5) > 0 {
		a.Effects = []election.Effect{}
		for range r.IntN(5) {
			a.Effects = append(a.Effects, randomEffect(r))
		}
	}
	return a
}

// TestFastWritesAreEncodingJSONs: every request and answer line the fast
// paths write is byte for byte the line encoding/json writes, and they
// decline only what they must (a string with an escape).
func TestFastWritesAreEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var declined, written int
	for i := range 20000 {
		ev := randomEvent(r)
		var want bytes.Buffer
		if err := encodeRequest(&want, &Request{V: Version, Seq: uint64(i), Event: ev}); err != nil {
			t.Fatal(err)
		}
		got, ok := appendRequest(nil, uint64(i), &ev)
		if !ok {
			declined++
			if !strings.ContainsAny(want.String(), `\é`) {
				t.Errorf("declined %s", want.Bytes())
			}
			continue
		}
		written++
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("request\n got  %s\n want %s", got, want.Bytes())
		}

		a := randomAnswer(r, uint64(i))
		want.Reset()
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&a); err != nil {
			t.Fatal(err)
		}
		if got, ok := appendAnswer(nil, &a); !ok || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("answer (ok %v)\n got  %s\n want %s", ok, got, want.Bytes())
		}
	}
	if written < declined*3 {
		t.Errorf("the fast request path wrote %d lines and declined %d", written, declined)
	}
}

// pythonStyle writes v as Python's json.dumps does by default (", " and
// ": " separators), which the fast reader must take as well.
func pythonStyle(b []byte) []byte {
	var out []byte
	in := false
	for i, c := range b {
		out = append(out, c)
		if c == '"' && (i == 0 || b[i-1] != '\\') {
			in = !in
		}
		if !in && (c == ',' || c == ':') {
			out = append(out, ' ')
		}
	}
	return out
}

// TestFastReadsAreEncodingJSONs: the fast readers give what encoding/json
// gives, on compact lines and on Python's spaced ones, and take the lines
// the examples write rather than declining them.
func TestFastReadsAreEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var taken int
	for i := range 20000 {
		seq := uint64(i + 1)
		a := randomAnswer(r, seq)
		line, err := json.Marshal(&a)
		if err != nil {
			t.Fatal(err)
		}
		if r.IntN(2) == 0 {
			line = pythonStyle(line)
		}
		want, werr := DecodeAnswer(line, seq, seq)
		got, ok := decodeAnswerFast(line, seq)
		if ok {
			taken++
			if werr != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\n fast %+v\n json %+v (%v)", line, got, want, werr)
			}
		}

		ev := randomEvent(r)
		line, err = json.Marshal(&Request{V: Version, Seq: seq, Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		var wantReq Request
		werr = json.Unmarshal(line, &wantReq)
		if gotReq, ok := decodeRequestFast(line); ok && (werr != nil || !reflect.DeepEqual(gotReq, wantReq)) {
			t.Fatalf("%s:\n fast %+v\n json %+v (%v)", line, gotReq, wantReq, werr)
		}
	}
	if taken < 10000 {
		t.Errorf("the fast answer path took %d of 20000 lines", taken)
	}
	for _, line := range []string{
		`{"v":1,"seq":2,"effects":[{"kind":"send","msg":{"type":"OK","from":2,"to":1,"epoch":3,"seq":4}},{"kind":"set-timer","timer":"answer","after_ns":200000000},{"kind":"view","view":{"leader":0,"epoch":3,"role":"candidate"}},{"kind":"persist","durable":{"epoch":3,"voted_epoch":0,"voted_for":0}}]}`,
		`{"v": 1, "seq": 2, "effects": [{"kind": "broadcast", "msg": {"type": "HEARTBEAT", "from": 5, "to": 0, "epoch": 1}}]}`,
		`{"v":1,"seq":2,"effects":[]}`,
	} {
		if _, ok := decodeAnswerFast([]byte(line), 2); !ok {
			t.Errorf("declined %s", line)
		}
	}
}

// TestFastReadsDeclineWhatTheProtocolRefuses: a line the protocol refuses
// is never taken by the fast reader, so its error is encoding/json's
// path's, word for word.
func TestFastReadsDeclineWhatTheProtocolRefuses(t *testing.T) {
	for _, line := range []string{
		`{"v":2,"seq":1,"effects":[]}`,
		`{"seq":1,"effects":[]}`,
		`{"v":1,"seq":2,"effects":[]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"sned"}]}`,
		`{"v":1,"seq":1,"effects":[{"timer":"x"}]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"set-timer","after_ns":5}]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"send","msg":{"type":"OK","to":0}}]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"view","view":{"role":"boss"}}]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"set-timer","timer":"x","after_ns":"5"}]}`,
		`{"v":1,"seq":1,"effects":[{"kind":"set-timer","timer":"x","after_ns":-5}]}`,
		`{"v":1,"seq":1,"effects":[]} trailing`,
		`{"v":1,"seq":1,"seq":1,"effects":[]}`,
		`{"v":1,"seq":01,"effects":[]}`,
		`{"v":1.0,"seq":1,"effects":[]}`,
		`{"v":1,"seq":1,"effects":null}`,
		`hello`,
	} {
		if a, ok := decodeAnswerFast([]byte(line), 1); ok {
			_, err := DecodeAnswer([]byte(line), 1, 1)
			t.Errorf("fast path took %s as %+v (the encoding/json path: %v)", line, a, err)
		}
	}
}

// FuzzAnswerFastPath: whatever the line, what the fast reader takes the
// encoding/json path takes too, and reads the same.
func FuzzAnswerFastPath(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":1,"effects":[{"kind":"send","msg":{"type":"OK","from":2,"to":1,"epoch":3,"seq":4}},{"kind":"set-timer","timer":"answer","after_ns":200000000}]}`))
	f.Add([]byte(`{"v": 1, "seq": 1, "effects": [{"kind": "view", "view": {"leader": 0, "epoch": 3, "role": "candidate"}}]}`))
	f.Add([]byte(`{"v":1,"seq":1,"effects":[{"kind":"persist","durable":{"epoch":3,"voted_epoch":0,"voted_for":0}}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := decodeAnswerFast(line, 1)
		if !ok {
			return
		}
		want, err := DecodeAnswer(line, 1, 1)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n fast %s\n json %+v (%v)", line, fmt.Sprintf("%+v", got), want, err)
		}
	})
}
