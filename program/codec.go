package program

import (
	"encoding/base64"
	"slices"
	"strconv"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// This file writes and reads the protocol's common lines (an event that is
// not a start, an answer with nothing but effects) without encoding/json's
// reflection, which was most of the CPU either side of the pipe spent per
// event. Each fast path is exact or declines: a write matches what
// encoding/json writes byte for byte, a read gives what the encoding/json
// path gives, and anything it does not handle in full (a start, a string
// with an escape, a blob, an unknown or repeated field, a line the
// protocol refuses) goes to encoding/json, which also words every error.
// codec_test.go holds them to both, and FuzzAnswerFastPath to the second.

// eventKindText and effectKindText are the kinds' JSON names by kind
// (index 0, no kind, is empty and never matches a name read).
var (
	eventKindText  = kindTexts(election.EventKinds())
	effectKindText = kindTexts(election.EffectKinds())
)

func kindTexts[K interface {
	~int
	MarshalText() ([]byte, error)
}](kinds []K) []string {
	out := make([]string, len(kinds)+1)
	out[0] = "\x00none"
	for _, k := range kinds {
		t, _ := k.MarshalText()
		out[k] = string(t)
	}
	return out
}

// appendRequest appends the line of a request without init, newline
// included, as encodeRequest writes it; ok is false when it cannot.
func appendRequest(b []byte, seq uint64, ev *election.Event) ([]byte, bool) {
	if ev.Kind <= 0 || int(ev.Kind) >= len(eventKindText) {
		return b, false
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"event":{"kind":"`...)
	b = append(b, eventKindText[ev.Kind]...)
	b = append(b, '"')
	ok := true
	if !msgZero(&ev.Msg) {
		b = append(b, `,"msg":`...)
		if b, ok = appendMessage(b, &ev.Msg); !ok {
			return b, false
		}
	}
	if ev.Timer != "" {
		if !plain(ev.Timer) {
			return b, false
		}
		b = append(b, `,"timer":"`...)
		b = append(b, ev.Timer...)
		b = append(b, '"')
	}
	if ev.Peer != 0 {
		b = append(b, `,"peer":`...)
		b = strconv.AppendInt(b, int64(ev.Peer), 10)
	}
	b = append(b, `,"now_ns":`...)
	b = strconv.AppendInt(b, int64(ev.Now), 10)
	return append(b, "}}\n"...), true
}

// appendAnswer appends the line of an answer that carries effects alone
// (no claims or message types), newline included, as encoding/json's
// Encoder writes it with HTML escaping off; ok is false when it cannot.
func appendAnswer(b []byte, a *Answer) ([]byte, bool) {
	if a.Claims != nil || a.ElectionTypes != nil || a.AnnounceTypes != nil {
		return b, false
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(a.V), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, a.Seq, 10)
	b = append(b, `,"effects":`...)
	if a.Effects == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range a.Effects {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendEffect(b, &a.Effects[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...), true
}

func appendEffect(b []byte, e *election.Effect) ([]byte, bool) {
	if e.Kind <= 0 || int(e.Kind) >= len(effectKindText) {
		return b, false
	}
	b = append(b, `{"kind":"`...)
	b = append(b, effectKindText[e.Kind]...)
	b = append(b, '"')
	ok := true
	if !msgZero(&e.Msg) {
		b = append(b, `,"msg":`...)
		if b, ok = appendMessage(b, &e.Msg); !ok {
			return b, false
		}
	}
	if e.Timer != "" {
		if !plain(e.Timer) {
			return b, false
		}
		b = append(b, `,"timer":"`...)
		b = append(b, e.Timer...)
		b = append(b, '"')
	}
	if e.After != 0 {
		b = append(b, `,"after_ns":`...)
		b = strconv.AppendInt(b, int64(e.After), 10)
	}
	if e.View != (election.View{}) {
		if !plain(string(e.View.Role)) {
			return b, false
		}
		b = append(b, `,"view":{"leader":`...)
		b = strconv.AppendInt(b, int64(e.View.Leader), 10)
		b = append(b, `,"epoch":`...)
		b = strconv.AppendUint(b, e.View.Epoch, 10)
		b = append(b, `,"role":"`...)
		b = append(b, e.View.Role...)
		b = append(b, `"}`...)
	}
	if d := e.Durable; d != nil {
		b = append(b, `,"durable":{"epoch":`...)
		b = strconv.AppendUint(b, d.Epoch, 10)
		b = append(b, `,"voted_epoch":`...)
		b = strconv.AppendUint(b, d.VotedEpoch, 10)
		b = append(b, `,"voted_for":`...)
		b = strconv.AppendInt(b, int64(d.VotedFor), 10)
		if len(d.Blob) > 0 {
			b = append(b, `,"blob":"`...)
			b = base64.StdEncoding.AppendEncode(b, d.Blob)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// msgZero is encoding/json's omitzero for a Message: every field zero,
// its slices nil.
func msgZero(m *election.Message) bool {
	return m.Type == "" && m.From == 0 && m.To == 0 && m.Epoch == 0 && m.Candidate == 0 &&
		m.Members == nil && m.Seq == 0 && m.Phase == 0 && m.Hop == 0 && m.Dir == 0 && !m.Reply && m.Payload == nil
}

func appendMessage(b []byte, m *election.Message) ([]byte, bool) {
	if !plain(m.Type) {
		return b, false
	}
	b = append(b, `{"type":"`...)
	b = append(b, m.Type...)
	b = append(b, `","from":`...)
	b = strconv.AppendInt(b, int64(m.From), 10)
	b = append(b, `,"to":`...)
	b = strconv.AppendInt(b, int64(m.To), 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendUint(b, m.Epoch, 10)
	if m.Candidate != 0 {
		b = append(b, `,"candidate":`...)
		b = strconv.AppendInt(b, int64(m.Candidate), 10)
	}
	if len(m.Members) > 0 {
		b = append(b, `,"members":[`...)
		for i, id := range m.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, ']')
	}
	if m.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, m.Seq, 10)
	}
	if m.Phase != 0 {
		b = append(b, `,"phase":`...)
		b = strconv.AppendInt(b, int64(m.Phase), 10)
	}
	if m.Hop != 0 {
		b = append(b, `,"hop":`...)
		b = strconv.AppendInt(b, int64(m.Hop), 10)
	}
	if m.Dir != 0 {
		b = append(b, `,"dir":`...)
		b = strconv.AppendInt(b, int64(m.Dir), 10)
	}
	if m.Reply {
		b = append(b, `,"reply":true`...)
	}
	if len(m.Payload) > 0 {
		b = append(b, `,"payload":"`...)
		b = base64.StdEncoding.AppendEncode(b, m.Payload)
		b = append(b, '"')
	}
	return append(b, '}'), true
}

// plain reports whether encoding/json writes s as it is between quotes:
// printable ASCII without a quote or a backslash.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// scanner reads the JSON the fast paths accept: objects, arrays, strings
// without escapes, integers, true and false. Anything else sets bad, and
// the caller declines.
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// is consumes c (after whitespace) if it comes next.
func (s *scanner) is(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) must(c byte) {
	if !s.is(c) {
		s.bad = true
	}
}

// str reads a string and returns its bytes (no copy).
func (s *scanner) str() []byte {
	s.must('"')
	start := s.i
	for !s.bad && s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1]
		case c < 0x20 || c >= 0x80 || c == '\\':
			s.bad = true
		}
		s.i++
	}
	s.bad = true
	return nil
}

// digits reads an unsigned integer's digits: no sign, fraction, exponent
// or leading zero, and at most 18 of them, so that it cannot overflow.
func (s *scanner) digits() uint64 {
	s.ws()
	start := s.i
	var v uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		v = v*10 + uint64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || n > 18 || n > 1 && s.b[start] == '0' {
		s.bad = true
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.bad = true
	}
	return v
}

// int reads a signed integer within [lo, hi].
func (s *scanner) int(lo, hi int64) int64 {
	neg := s.is('-')
	v := int64(s.digits())
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		s.bad = true
	}
	return v
}

func (s *scanner) boolean() bool {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false
	}
	s.bad = true
	return false
}

// object reads an object, calling field for each key with the bit it
// stands for in known (a key not there, or repeated, is bad).
func (s *scanner) object(known []string, field func(k int)) {
	s.must('{')
	if s.bad || s.is('}') {
		return
	}
	var seen uint64
	for !s.bad {
		k := slices.Index(known, string(s.str()))
		s.must(':')
		if k < 0 || seen&(1<<k) != 0 {
			s.bad = true
			return
		}
		seen |= 1 << k
		field(k)
		if !s.is(',') {
			s.must('}')
			return
		}
	}
}

// end checks that nothing but whitespace follows.
func (s *scanner) end() {
	s.ws()
	if s.i != len(s.b) {
		s.bad = true
	}
}

const (
	maxNodeID = 1<<63 - 1
	minNodeID = -1 << 63
)

var messageFields = []string{"type", "from", "to", "epoch", "candidate", "seq", "phase", "hop", "dir", "reply"}

func (s *scanner) message(m *election.Message) {
	s.object(messageFields, func(k int) {
		switch k {
		case 0:
			m.Type = string(s.str())
		case 1:
			m.From = election.NodeID(s.int(minNodeID, maxNodeID))
		case 2:
			m.To = election.NodeID(s.int(minNodeID, maxNodeID))
		case 3:
			m.Epoch = s.digits()
		case 4:
			m.Candidate = election.NodeID(s.int(minNodeID, maxNodeID))
		case 5:
			m.Seq = s.digits()
		case 6:
			m.Phase = int32(s.int(-1<<31, 1<<31-1))
		case 7:
			m.Hop = int32(s.int(-1<<31, 1<<31-1))
		case 8:
			m.Dir = election.Dir(s.int(-128, 127))
		case 9:
			m.Reply = s.boolean()
		}
	})
}

var effectFields = []string{"kind", "msg", "timer", "after_ns", "view", "durable"}

func (s *scanner) effect(e *election.Effect) {
	s.object(effectFields, func(k int) {
		switch k {
		case 0:
			e.Kind = election.EffectKind(max(slices.Index(effectKindText, string(s.str())), 0))
		case 1:
			s.message(&e.Msg)
		case 2:
			e.Timer = string(s.str())
		case 3:
			e.After = time.Duration(s.int(minNodeID, maxNodeID))
		case 4:
			s.object([]string{"leader", "epoch", "role"}, func(k int) {
				switch k {
				case 0:
					e.View.Leader = election.NodeID(s.int(minNodeID, maxNodeID))
				case 1:
					e.View.Epoch = s.digits()
				case 2:
					e.View.Role = election.Role(s.str())
				}
			})
		case 5:
			d := &election.Durable{}
			s.object([]string{"epoch", "voted_epoch", "voted_for"}, func(k int) {
				switch k {
				case 0:
					d.Epoch = s.digits()
				case 1:
					d.VotedEpoch = s.digits()
				case 2:
					d.VotedFor = election.NodeID(s.int(minNodeID, maxNodeID))
				}
			})
			e.Durable = d
		}
	})
	if e.Kind == 0 || checkEffect(e) != nil {
		s.bad = true
	}
}

// decodeAnswerFast is DecodeAnswer for an answer of effects alone that
// the protocol accepts; ok is false for anything else.
func decodeAnswerFast(line []byte, seq uint64) (a Answer, ok bool) {
	s := scanner{b: line}
	var v, got uint64
	var seen [2]bool
	s.object([]string{"v", "seq", "effects"}, func(k int) {
		switch k {
		case 0:
			v, seen[0] = s.digits(), true
		case 1:
			got, seen[1] = s.digits(), true
		case 2:
			s.must('[')
			if s.bad || s.is(']') {
				return
			}
			for !s.bad {
				a.Effects = append(a.Effects, election.Effect{})
				s.effect(&a.Effects[len(a.Effects)-1])
				if !s.is(',') {
					s.must(']')
					return
				}
			}
		}
	})
	s.end()
	if s.bad || !seen[0] || !seen[1] || v != Version || got != seq {
		return Answer{}, false
	}
	a.V, a.Seq = Version, seq
	return a, true
}

// decodeRequestFast reads a request without init (Serve's side); ok is
// false for anything else, which encoding/json then reads.
func decodeRequestFast(line []byte) (req Request, ok bool) {
	s := scanner{b: line}
	s.object([]string{"v", "seq", "event"}, func(k int) {
		switch k {
		case 0:
			req.V = int(s.int(minNodeID, maxNodeID))
		case 1:
			req.Seq = s.digits()
		case 2:
			ev := &req.Event
			s.object([]string{"kind", "msg", "timer", "peer", "now_ns"}, func(k int) {
				switch k {
				case 0:
					ev.Kind = election.EventKind(max(slices.Index(eventKindText, string(s.str())), 0))
				case 1:
					s.message(&ev.Msg)
				case 2:
					ev.Timer = string(s.str())
				case 3:
					ev.Peer = election.NodeID(s.int(minNodeID, maxNodeID))
				case 4:
					ev.Now = time.Duration(s.int(minNodeID, maxNodeID))
				}
			})
			if ev.Kind == 0 {
				s.bad = true
			}
		}
	})
	s.end()
	return req, !s.bad
}
