package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ringleader-dev/ringleader/election"
)

// Answer is what one probe answer says, in the server's own words.
type Answer struct {
	// ID is the member's own server ID, Leader its leader's (empty: it
	// knows none), Term its term, Role its role word (empty when the
	// probe reads none).
	ID, Leader string
	Term       uint64
	Role       string
}

// Read takes one probe answer apart. An answer that is not a JSON object,
// lacks the ID or leader, or holds a value of the wrong shape is refused
// with an error that quotes at most a few dozen bytes of it.
func (p Probe) Read(body []byte) (Answer, error) {
	if len(body) > MaxAnswer {
		return Answer{}, fmt.Errorf("answer longer than %d bytes", MaxAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return Answer{}, fmt.Errorf("not JSON (%v): %s", err, Quote(body))
	}
	if _, ok := doc.(map[string]any); !ok {
		return Answer{}, fmt.Errorf("not a JSON object: %s", Quote(body))
	}
	var a Answer
	var err error
	if a.ID, err = scalar(doc, p.ID, false); err != nil {
		return Answer{}, fmt.Errorf("id (%s): %w", p.ID, err)
	}
	if a.ID == "" {
		return Answer{}, fmt.Errorf("id (%s): empty", p.ID)
	}
	// A leader or term left out is the zero value (protobuf's JSON, as
	// etcd writes it, omits zero fields): no leader, term 0.
	if a.Leader, err = scalar(doc, p.Leader, true); err != nil {
		return Answer{}, fmt.Errorf("leader (%s): %w", p.Leader, err)
	}
	for _, none := range p.NoLeader {
		if a.Leader == none {
			a.Leader = ""
		}
	}
	if p.Term != "" {
		t, err := scalar(doc, p.Term, true)
		if err != nil {
			return Answer{}, fmt.Errorf("term (%s): %w", p.Term, err)
		}
		if t == "" {
			t = "0"
		}
		if a.Term, err = strconv.ParseUint(t, 10, 64); err != nil {
			return Answer{}, fmt.Errorf("term (%s): %q is not a whole number", p.Term, clip(t))
		}
	}
	if p.Role != "" {
		if a.Role, err = scalar(doc, p.Role, true); err != nil {
			return Answer{}, fmt.Errorf("role (%s): %w", p.Role, err)
		}
	}
	return a, nil
}

// scalar is the string or number at path — keys joined by dots, or a JSON
// pointer (RFC 6901, "/raft.status/id") for keys that hold dots; a missing
// key is an error unless optional.
func scalar(doc any, path string, optional bool) (string, error) {
	cur := doc
	for _, k := range pathKeys(path) {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%q is not inside an object", k)
		}
		if cur, ok = m[k]; !ok {
			if optional {
				return "", nil
			}
			return "", fmt.Errorf("missing")
		}
	}
	switch v := cur.(type) {
	case string:
		if len(v) > 256 || !utf8.ValidString(v) {
			return "", fmt.Errorf("a string of %d bytes, not an ID", len(v))
		}
		return v, nil
	case json.Number:
		return v.String(), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("want a string or a number, got %T", cur)
}

// ErrUnmapped is View's error for a leader ID no member has claimed (yet:
// until every member has answered once, not every ID is known).
var ErrUnmapped = errors.New("no member has answered with this ID")

// pathKeys splits a probe path into its keys.
func pathKeys(path string) []string {
	if !strings.HasPrefix(path, "/") {
		return strings.Split(path, ".")
	}
	keys := strings.Split(path[1:], "/")
	for i, k := range keys {
		keys[i] = strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~")
	}
	return keys
}

// View turns an answer into the member's view. self is the member; ids
// maps the server's IDs to members. A leader ID no member claimed is an
// error: the answer is not adopted.
func (p Probe) View(a Answer, self election.NodeID, ids map[string]election.NodeID) (election.View, error) {
	v := election.View{Epoch: a.Term}
	if a.Leader != "" {
		l, ok := ids[a.Leader]
		if !ok {
			return election.View{}, fmt.Errorf("%w: leader %q", ErrUnmapped, clip(a.Leader))
		}
		v.Leader = l
	}
	switch {
	case a.Role != "" && p.Roles[a.Role] != "":
		v.Role = election.Role(p.Roles[a.Role])
	case v.Leader == self:
		v.Role = election.Leader
	case v.Leader != election.None:
		v.Role = election.Follower
	default:
		v.Role = election.Undecided
	}
	// A role word saying leader of a member that names another leader
	// is taken at its word only when the two agree.
	if v.Role == election.Leader && v.Leader != self {
		if v.Leader == election.None {
			v.Leader = self
		} else {
			return election.View{}, fmt.Errorf("role %q but leader %d is not itself", clip(a.Role), v.Leader)
		}
	}
	if v.Leader == self && v.Role != election.Leader {
		v.Role = election.Leader
	}
	return v, nil
}

// Quote is at most 80 bytes of b, printable, for a log line.
func Quote(b []byte) string {
	const max = 80
	s := b
	more := ""
	if len(s) > max {
		s, more = s[:max], fmt.Sprintf("… (%d bytes)", len(b))
	}
	return strconv.QuoteToASCII(string(s)) + more
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Counters count a run's probes, for its results.
type Counters struct {
	// Probes sent to members that were up and not paused; Answers
	// adopted; Refused answers (garbled, forged, oversized, naming a
	// leader no member claimed); Unanswered probes (no answer within the
	// timeout, refused connections, HTTP errors).
	Probes     int `json:"probes"`
	Answers    int `json:"answers"`
	Refused    int `json:"refused"`
	Unanswered int `json:"unanswered"`
	// Unmapped answers named a leader by an ID no member had answered
	// with yet (at start, before every member answered once): unknown,
	// not refused.
	Unmapped int `json:"unmapped,omitempty"`
}

// Add adds o to c.
func (c *Counters) Add(o Counters) {
	c.Probes += o.Probes
	c.Answers += o.Answers
	c.Refused += o.Refused
	c.Unanswered += o.Unanswered
	c.Unmapped += o.Unmapped
}
