package raft

import (
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/ringleader-dev/ringleader/election"
)

func config(id election.NodeID, members []election.NodeID, d election.Durable) election.Config {
	return election.Config{
		ID: id, Members: members, Quorum: election.Majority,
		Options: election.Options{OptionPreVote: "true", OptionCheckQuorum: "true"},
		Rand:    rand.New(rand.NewPCG(1, uint64(id))), Durable: d, Replay: true,
	}
}

// solo runs a one-node cluster until it leads (a lone node elects itself
// after its election timeout) and returns the machine and the last state
// it asked to persist.
func solo(t *testing.T, d election.Durable) (election.Machine, election.Durable) {
	t.Helper()
	m, err := New(config(1, []election.NodeID{1}, d))
	if err != nil {
		t.Fatal(err)
	}
	var last election.Durable
	ev := election.Event{Kind: election.EventStart}
	for range 1000 {
		for _, e := range m.Step(ev) {
			if e.Kind == election.EffectPersist {
				last = e.Persisted()
			}
		}
		if m.View().Role == election.Leader && last.Blob != nil {
			return m, last
		}
		ev = election.Event{Kind: election.EventTimer, Timer: TimerTick}
	}
	t.Fatalf("a lone node did not lead after 1000 ticks: %v", m.View())
	return nil, last
}

// TestRestartKeepsTermAndLog: a restarted node comes back with the term,
// vote and log it persisted, and its next term is the one after.
func TestRestartKeepsTermAndLog(t *testing.T) {
	m, d := solo(t, election.Durable{})
	r, err := decodeDurable(d.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if d.Epoch != m.View().Epoch || d.VotedFor != 1 || d.VotedEpoch != d.Epoch {
		t.Fatalf("persisted %+v for view %v: want the view's epoch and a vote for itself in it", d, m.View())
	}
	// The bootstrap snapshot is index 1; the leader appended one entry
	// and, alone, committed it.
	if r.hs.GetCommit() != 2 || len(r.ents) != 1 || r.ents[0].GetIndex() != 2 {
		t.Fatalf("persisted commit %d and entries %v, want commit 2 and one entry at index 2", r.hs.GetCommit(), r.ents)
	}
	m2, d2 := solo(t, d)
	if m2.View().Epoch != d.Epoch+1 {
		t.Fatalf("restarted node leads epoch %d, want %d (the one after its persisted %d)", m2.View().Epoch, d.Epoch+1, d.Epoch)
	}
	r2, err := decodeDurable(d2.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if r2.hs.GetCommit() != 3 {
		t.Fatalf("restarted leader committed %d, want 3: it lost the log it persisted", r2.hs.GetCommit())
	}
}

// TestDurableBlobStaysBounded restarts a lone node 300 times: each term
// appends an entry, and compaction keeps the log within 3×keepEntries.
func TestDurableBlobStaysBounded(t *testing.T) {
	var d election.Durable
	for range 300 {
		_, d = solo(t, d)
	}
	r, err := decodeDurable(d.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ents) > 3*keepEntries || r.snap.GetMetadata().GetIndex() < 200 {
		t.Fatalf("after 300 terms: %d entries after snapshot index %d (%d bytes): the log is not compacted", len(r.ents), r.snap.GetMetadata().GetIndex(), len(d.Blob))
	}
	// compact reads the snapshot's index as the first index less one.
	if len(r.ents) > 0 && r.ents[0].GetIndex() != r.snap.GetMetadata().GetIndex()+1 {
		t.Fatalf("first entry %d does not follow snapshot index %d", r.ents[0].GetIndex(), r.snap.GetMetadata().GetIndex())
	}
}

// TestCorruptDurableRefused: state raft would panic on is an error from
// New, naming the problem.
func TestCorruptDurableRefused(t *testing.T) {
	_, d := solo(t, election.Durable{})
	var msg raftpb.Message
	if err := proto.Unmarshal(d.Blob, &msg); err != nil {
		t.Fatal(err)
	}
	msg.Commit = proto.Uint64(99)
	bad, _ := proto.Marshal(&msg)
	for name, blob := range map[string][]byte{"commit beyond the log": bad, "garbage": []byte("not protobuf \xff\xff")} {
		d := d
		d.Blob = blob
		if _, err := New(config(1, []election.NodeID{1}, d)); err == nil {
			t.Errorf("%s: New accepted it", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// Another membership than the one persisted.
	if _, err := New(config(1, []election.NodeID{1, 2, 3}, d)); err == nil {
		t.Error("a blob persisted by a one-node cluster was accepted by a three-node one")
	}
}

// TestForgedPayloadsDropped: a payload that disagrees with its envelope,
// does not decode, or carries a commit beyond the log changes nothing.
func TestForgedPayloadsDropped(t *testing.T) {
	members := []election.NodeID{1, 2, 3}
	m, err := New(config(1, members, election.Durable{}))
	if err != nil {
		t.Fatal(err)
	}
	m.Step(election.Event{Kind: election.EventStart})
	before := m.View()
	hb := func(from uint64, term, commit uint64) []byte {
		b, _ := proto.Marshal(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(from), To: proto.Uint64(1), Term: proto.Uint64(term), Commit: proto.Uint64(commit)})
		return b
	}
	for name, env := range map[string]election.Message{
		"sender differs":    {Type: "MsgHeartbeat", From: 3, To: 1, Epoch: 5, Payload: hb(2, 5, 0)},
		"term differs":      {Type: "MsgHeartbeat", From: 2, To: 1, Epoch: 4, Payload: hb(2, 5, 0)},
		"type differs":      {Type: "MsgApp", From: 2, To: 1, Epoch: 5, Payload: hb(2, 5, 0)},
		"garbled":           {Type: "MsgHeartbeat", From: 2, To: 1, Epoch: 5, Payload: []byte{0xff, 0xff, 0xff}},
		"commit beyond log": {Type: "MsgHeartbeat", From: 2, To: 1, Epoch: 5, Payload: hb(2, 5, 1000)},
		"from a non-member": {Type: "MsgHeartbeat", From: 9, To: 1, Epoch: 5, Payload: hb(9, 5, 0)},
		"from itself":       {Type: "MsgHeartbeat", From: 1, To: 1, Epoch: 5, Payload: hb(1, 5, 0)},
		"local message (hup)": {Type: "MsgHup", From: 2, To: 1, Epoch: 0, Payload: func() []byte {
			b, _ := proto.Marshal(&raftpb.Message{Type: raftpb.MsgHup.Enum(), From: proto.Uint64(2), To: proto.Uint64(1)})
			return b
		}()},
	} {
		if effs := m.Step(election.Event{Kind: election.EventReceive, Msg: env}); len(effs) != 0 || m.View() != before {
			t.Errorf("%s: effects %v, view %v (was %v)", name, effs, m.View(), before)
		}
	}
	// The check has teeth: the same heartbeat, honest, makes 2 the leader.
	m.Step(election.Event{Kind: election.EventReceive, Msg: election.Message{Type: "MsgHeartbeat", From: 2, To: 1, Epoch: 5, Payload: hb(2, 5, 0)}})
	if v := m.View(); v.Leader != 2 || v.Epoch != 5 {
		t.Fatalf("an honest heartbeat from 2 in term 5 left view %v", v)
	}
}

// TestTicks: the default timing gives a 25 ms tick, a 4-tick heartbeat
// and a 20-tick (500 ms) election timeout; a suspicion barely above the
// heartbeat still leaves the election timeout above it, as raft requires.
func TestTicks(t *testing.T) {
	tick, hb, et := Ticks(election.Timing{})
	if tick != election.DefaultTiming.Heartbeat/4 || hb != 4 || et != 20 {
		t.Fatalf("default timing: tick %v, heartbeat %d, election %d ticks", tick, hb, et)
	}
	_, hb, et = Ticks(election.Timing{Heartbeat: 100e6, Suspicion: 101e6, Answer: 1})
	if et <= hb {
		t.Fatalf("election %d ticks, not above heartbeat %d", et, hb)
	}
}
