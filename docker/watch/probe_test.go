package watch

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// A real server's members are shown from their probes: a view when one
// changes, nothing when an answer repeats, and a member that stops
// answering keeps its last view, marked unknown, never "no leader". Two
// members answering leader at once raise the alarm.
func TestBoardShowsSystemMembersFromTheirProbes(t *testing.T) {
	b := NewBoard(0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	follows := func(l election.NodeID, term uint64) Probed {
		return Probed{View: election.View{Leader: l, Epoch: term, Role: election.Follower}}
	}
	leads := func(self election.NodeID, term uint64) Probed {
		return Probed{View: election.View{Leader: self, Epoch: term, Role: election.Leader}}
	}
	if got := kinds(b.Probe(1, "etcd-1", leads(1, 2), at(0))); !slices.Equal(got, []string{ChangeView}) {
		t.Fatalf("first answer: %v", got)
	}
	b.Probe(2, "etcd-2", follows(1, 2), at(10))
	if got := b.Probe(2, "etcd-2", follows(1, 2), at(30)); len(got) != 0 {
		t.Errorf("a repeated answer changed %v", kinds(got))
	}
	got := b.Probe(1, "etcd-1", Probed{NoAnswer: "no answer (timed out)"}, at(50))
	if !slices.Equal(kinds(got), []string{ChangeNoAnswer}) {
		t.Fatalf("no answer: %v", kinds(got))
	}
	if s := statusOf(t, b, 1, at(50)); s.Leader != 1 || s.Epoch != 2 || s.NoAnswer == "" {
		t.Errorf("an unanswering member lost its last view or its mark: %+v", s)
	}
	if line := lineOf(got[0]); !strings.Contains(line, "probe: no answer (timed out); its last view: leader 1, epoch 2") {
		t.Errorf("line %q", line)
	}
	// Cut off from it, 2 elects itself in a newer term while 1, which
	// answers again, still leads term 2: the alarm.
	b.Probe(1, "etcd-1", leads(1, 2), at(70))
	got = b.Probe(2, "etcd-2", leads(2, 3), at(90))
	if !slices.Equal(kinds(got), []string{ChangeView, ChangeAlarm}) || !slices.Equal(got[1].Leaders, []election.NodeID{1, 2}) {
		t.Errorf("two leaders: %v %+v", kinds(got), got)
	}
	if s := statusOf(t, b, 1, at(90)); s.NoAnswer != "" {
		t.Errorf("answering again kept the mark: %+v", s)
	}
	got = b.Probe(1, "etcd-1", follows(2, 3), at(120))
	if !slices.Equal(kinds(got), []string{ChangeView, ChangeAlarmEnd}) {
		t.Errorf("stepping down: %v", kinds(got))
	}
	// Killed: the engine says so; the probe's failures add nothing.
	b.SetState(2, "etcd-2", Down, false, at(130))
	if got := b.Probe(2, "etcd-2", Probed{NoAnswer: "no answer (connection refused)"}, at(140)); len(got) != 0 {
		t.Errorf("a down member's failed probe changed %v", kinds(got))
	}
}
