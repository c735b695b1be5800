package watch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// splitBrain is a short story in inputs: 2 leads, 1 follows, 1 takes
// over while 2 still leads, 2 is paused.
func splitBrain() []Input {
	n1, n2 := &nodeLog{id: 1}, &nodeLog{id: 2}
	return []Input{
		{Node: 1, Line: n1.boot_(0, "b1")},
		{Node: 2, Line: n2.boot_(0, "b2")},
		{Node: 2, Line: n2.view(10*time.Millisecond, 2, 1, election.Leader)},
		{Node: 1, Line: n1.view(11*time.Millisecond, 2, 1, election.Follower)},
		{Node: 1, Line: n1.view(time.Second, 1, 2, election.Leader)},
		{Node: 2, Container: "rl-node2", State: Paused, Logged: t0.Add(2 * time.Second)},
	}
}

func runShow(t *testing.T, o Options, ins []Input) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch := make(chan Input, len(ins))
	for _, in := range ins {
		ch <- in
	}
	done := make(chan error, 1)
	done <- errors.New("followed everything") // the follower stops once the inputs are read
	wait := make(chan error, 1)
	go func() {
		// Hand over the follower's end only once the inputs are in.
		for len(ch) > 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		wait <- <-done
	}()
	return show(ctx, NewBoard(0), o, nil, ch, wait)
}

func TestLinesOnePerChange(t *testing.T) {
	var out strings.Builder
	err := runShow(t, Options{Output: Lines, Out: &out}, splitBrain())
	if err == nil || err.Error() != "followed everything" {
		t.Fatalf("show: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// boot, boot, view, view, view, alarm, state, alarm (now with 2 paused)
	if len(lines) != 8 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for i, want := range map[int]string{
		2: "node 2 view: leader 2, epoch 1, role leader",
		5: "ALARM: nodes 1, 2 hold role leader at once",
		6: "node 2 container paused",
		7: "(2 paused: a stale leader until it thaws)",
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want it to say %q", i, lines[i], want)
		}
	}
}

func TestJSONOneRecordPerChange(t *testing.T) {
	var out strings.Builder
	runShow(t, Options{Output: JSON, Out: &out}, splitBrain())
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		recs = append(recs, m)
	}
	if len(recs) != 8 {
		t.Fatalf("%d records", len(recs))
	}
	v := recs[2]
	if v["change"] != "view" || v["node"] != 2.0 || v["leader"] != 2.0 || v["role"] != "leader" || v["time"] == nil {
		t.Errorf("view record %v", v)
	}
	if a := recs[5]; a["change"] != "alarm" || len(a["leaders"].([]any)) != 2 {
		t.Errorf("alarm record %v", a)
	}
}

type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) { return 0, errors.New("write |1: broken pipe") }

func TestClosedOutputEndsQuietly(t *testing.T) {
	err := runShow(t, Options{Output: Lines, Out: closedPipe{}}, splitBrain())
	if !OutputClosed(err) {
		t.Fatalf("show: %v, want an output-closed error", err)
	}
}

func TestScreenShowsEveryNodeAndTheAlarm(t *testing.T) {
	b := NewBoard(0)
	for _, in := range splitBrain() {
		in.Feed(b)
	}
	b.Line(1, (&nodeLog{id: 1, boot: "b1", seq: 10}).drop(1500*time.Millisecond, "foreign-cluster", 2), time.Time{})
	s := screenText(b, t0.Add(3*time.Second), "compose", false)
	for _, want := range []string{
		"run compose · 2 nodes",
		"    1 running         1      2 ★ leader",
		"    2 paused          2      1 ★ leader",
		"drops: foreign-cluster 3",
		"ALARM nodes 1, 2 hold role leader at once, for 2s (2 paused",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b") {
		t.Errorf("escapes without ansi")
	}
}
