package docker

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/rules"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/system"
)

// probed is a backend of a three-member etcd cluster with no engine
// behind it: what the probers hand answered is all it sees.
func probed(t *testing.T) (*Backend, *history.Memory) {
	t.Helper()
	sys, err := system.Lookup("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	mem := &history.Memory{}
	b.takeRunLocked("probe-test", mem)
	b.spec = chaos.ClusterSpec{Name: "probe-test", Algorithm: "etcd", Members: ids(1, 2, 3), System: sys}
	for _, id := range b.spec.Members {
		n := newNode(id, alias(id), "cid"+alias(id), nil)
		n.probe = &probeState{}
		b.nodes[id] = n
		b.adoptProcessLocked(id, true, false)
	}
	return b, mem
}

// answer is what etcd's /debug/vars says of a member (memstats left out).
func answer(id, lead string, term int, state string) []byte {
	return fmt.Appendf(nil, `{"raft.status":{"id":%q,"term":%d,"lead":%q,"raftState":%q}}`, id, term, lead, state)
}

// Forged, garbled and oversized answers are refused, counted and never
// adopted; the history gets a bounded note, the world no view from them.
func TestProbeAnswersThatCannotBeTrustedAreRefused(t *testing.T) {
	b, mem := probed(t)
	ctx := context.Background()
	// Until every member has answered once, a leader ID may be no
	// one's yet: unknown, not refused. The second round maps them all.
	for range 2 {
		for i, sid := range []string{"a1", "b2", "c3"} {
			state := "StateFollower"
			if sid == "b2" {
				state = "StateLeader"
			}
			b.answered(ctx, b.nodes[election.NodeID(i+1)], answer(sid, "b2", 2, state), nil)
		}
	}
	st := b.State()
	for _, id := range ids(1, 2, 3) {
		if st.Views[id].Leader != 2 || st.Views[id].Epoch != 2 {
			t.Fatalf("member %d views %v, want leader 2 in term 2", id, st.Views[id])
		}
	}
	bad := map[string][]byte{
		"garbled":             []byte("<html>oops"),
		"oversized":           []byte(`{"raft.status":{"id":"a1","x":"` + strings.Repeat("z", system.MaxAnswer) + `"}}`),
		"another's ID":        answer("c3", "c3", 3, "StateLeader"),
		"a changed ID":        answer("zz", "zz", 3, "StateLeader"),
		"an unclaimed leader": answer("a1", "ff", 3, "StateFollower"),
	}
	for what, body := range bad {
		before := len(mem.Records())
		b.answered(ctx, b.nodes[1], body, nil)
		st := b.State()
		if _, ok := st.Views[1]; ok {
			t.Errorf("%s: member 1's view %v adopted or kept; want unknown", what, st.Views[1])
		}
		for _, r := range mem.Records()[before:] {
			if r.Kind == history.KindView {
				t.Errorf("%s: recorded a view %+v", what, r)
			}
			if len(r.Note) > 400 {
				t.Errorf("%s: a note of %d bytes", what, len(r.Note))
			}
		}
		// A good answer after each brings the view back.
		b.answered(ctx, b.nodes[1], answer("a1", "b2", 2, "StateFollower"), nil)
	}
	if s := b.SystemStats(); s.Refused != len(bad) || s.Answers != 5+len(bad) || s.Unmapped != 1 {
		t.Errorf("counters %+v: want %d refused, %d answers, 1 unmapped", s, len(bad), 5+len(bad))
	}
	if st := b.State(); st.Views[1].Leader != 2 {
		t.Errorf("member 1 views %v after a good answer", st.Views[1])
	}
	// No answer at all: unknown, never "no leader", and the history
	// keeps the last view it gave.
	b.answered(ctx, b.nodes[3], nil, context.DeadlineExceeded)
	if v, ok := b.State().Views[3]; ok {
		t.Errorf("member 3 unanswered reads %v, want unknown", v)
	}
	if b.State().Describe(ids(1, 2, 3)) != "1→2 2→2* 3→?" {
		t.Errorf("world %s", b.State().Describe(ids(1, 2, 3)))
	}
	views := 0
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			views++
		}
	}
	if views != 3 {
		t.Errorf("%d view records, want the first three only (nothing else changed)", views)
	}
}

// A one-way cut between servers is dropped input at the receiver: a
// server has no drop set of its own.
func TestSystemOneWayCutIsDroppedAtTheReceiver(t *testing.T) {
	b, _ := probed(t)
	addrs := rules.Addrs{1: netip.MustParseAddr("10.0.0.2"), 2: netip.MustParseAddr("10.0.0.3"), 3: netip.MustParseAddr("10.0.0.4")}
	b.world.Apply(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 2}}}, b.spec.Members)
	if r := b.systemRulesLocked(addrs, 2); !slices.Equal(r.DropIn, []netip.Addr{addrs[1]}) || len(r.DropOut) != 0 {
		t.Errorf("receiver 2's rules %v: want input from 1 dropped, nothing else", r)
	}
	if r := b.systemRulesLocked(addrs, 1); !r.Empty() {
		t.Errorf("sender 1's rules %v: want none", r)
	}
}
