package raft

import (
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/ringleader-dev/ringleader/election"
)

// The durable blob is what a restarted raft node needs so that raft does
// not panic and does not forget a vote: its HardState (term, vote,
// commit), the snapshot its log starts from (index, term, membership) and
// the log entries after it. It is one raftpb.Message of type
// MsgStorageAppend, the message raft itself uses to hand these fields to
// asynchronous storage, in protobuf form: the library's own encoding,
// validated by its own decoder.
//
// It stays small: no entry carries data (ringleader elects, it does not
// replicate commands: a log holds the empty entry each new leader
// appends), and after every step the log is compacted to keepEntries
// behind the applied index, older ones folded into the snapshot. A leader
// sends a follower that fell further behind the snapshot (MsgSnap), as
// etcd does.
const keepEntries = 32

var marshal = proto.MarshalOptions{Deterministic: true}

// encodeDurable writes storage's state as a Durable, with the epoch and
// last vote raft's HardState implies.
func encodeDurable(hs *raftpb.HardState, snap *raftpb.Snapshot, ents []*raftpb.Entry, voted election.Durable) (election.Durable, error) {
	msg := &raftpb.Message{
		Type:     raftpb.MsgStorageAppend.Enum(),
		Term:     proto.Uint64(hs.GetTerm()),
		Vote:     proto.Uint64(hs.GetVote()),
		Commit:   proto.Uint64(hs.GetCommit()),
		Snapshot: &raftpb.Snapshot{Metadata: snap.GetMetadata()},
		Entries:  ents,
	}
	blob, err := marshal.Marshal(msg)
	if err != nil {
		return election.Durable{}, fmt.Errorf("raft: encoding durable state: %w", err)
	}
	// No size check here: the runtimes enforce election.MaxDurableBlob
	// and report a refusal (Sim.Err, event=durable-not-saved), which is
	// louder than a machine quietly not persisting.
	d := election.Durable{Epoch: hs.GetTerm(), VotedEpoch: voted.VotedEpoch, VotedFor: voted.VotedFor, Blob: blob}
	if hs.GetVote() != 0 {
		d.VotedEpoch, d.VotedFor = hs.GetTerm(), election.NodeID(hs.GetVote())
	}
	return d, nil
}

// restored is a durable blob read back.
type restored struct {
	hs   *raftpb.HardState
	snap *raftpb.Snapshot
	ents []*raftpb.Entry
}

// decodeDurable reads a blob encodeDurable wrote and checks what raft
// would otherwise panic on: a log that is not contiguous after its
// snapshot, or a commit index beyond the last entry.
func decodeDurable(blob []byte) (restored, error) {
	var msg raftpb.Message
	if err := proto.Unmarshal(blob, &msg); err != nil {
		return restored{}, fmt.Errorf("raft: durable blob: %w", err)
	}
	if msg.GetType() != raftpb.MsgStorageAppend {
		return restored{}, fmt.Errorf("raft: durable blob holds a %s, want %s", msg.GetType(), raftpb.MsgStorageAppend)
	}
	meta := msg.GetSnapshot().GetMetadata()
	if meta.GetIndex() == 0 {
		return restored{}, errors.New("raft: durable blob has no snapshot to start its log from")
	}
	last, lastTerm := meta.GetIndex(), meta.GetTerm()
	for _, e := range msg.GetEntries() {
		if e.GetIndex() != last+1 || e.GetTerm() < lastTerm {
			return restored{}, fmt.Errorf("raft: durable log broken at index %d term %d after index %d term %d", e.GetIndex(), e.GetTerm(), last, lastTerm)
		}
		last, lastTerm = e.GetIndex(), e.GetTerm()
	}
	if c := msg.GetCommit(); c < meta.GetIndex() || c > last {
		return restored{}, fmt.Errorf("raft: durable commit index %d outside the log [%d, %d]", c, meta.GetIndex(), last)
	}
	if msg.GetTerm() < lastTerm {
		return restored{}, fmt.Errorf("raft: durable term %d is below its last entry's term %d", msg.GetTerm(), lastTerm)
	}
	hs := &raftpb.HardState{Term: proto.Uint64(msg.GetTerm()), Vote: proto.Uint64(msg.GetVote()), Commit: proto.Uint64(msg.GetCommit())}
	return restored{hs: hs, snap: &raftpb.Snapshot{Metadata: meta}, ents: msg.GetEntries()}, nil
}
