package raft

import (
	"fmt"
	"io"
	"log"
	"math"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/ringleader-dev/ringleader/election"
)

// TimerTick is the one timer: each firing is one RawNode.Tick.
const TimerTick = "tick"

// maxMsgSize bounds the entries of one append, far inside wire.MaxSize
// (entries here carry no data, so appends are tens of bytes anyway).
const maxMsgSize = 16 << 10

// silent is raft's logger: ringleader records views and messages itself,
// and raft's chatter on stderr would interleave with the node's log.
var silent raft.Logger = quietLogger{&raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}}

// quietLogger drops raft's debug, info, warning and error lines without
// formatting them (a DefaultLogger on io.Discard still formats every line:
// a twentieth of the explorer's time on raft); Fatal and Panic are the
// embedded logger's, so they still end the process or panic.
type quietLogger struct{ *raft.DefaultLogger }

func (quietLogger) Debug(...any)            {}
func (quietLogger) Debugf(string, ...any)   {}
func (quietLogger) Info(...any)             {}
func (quietLogger) Infof(string, ...any)    {}
func (quietLogger) Warning(...any)          {}
func (quietLogger) Warningf(string, ...any) {}
func (quietLogger) Error(...any)            {}
func (quietLogger) Errorf(string, ...any)   {}

type machine struct {
	cfg     election.Config
	rn      *raft.RawNode
	store   *raft.MemoryStorage
	conf    *raftpb.ConfState
	tick    time.Duration
	seeded  io.Reader // nil unless the run replays: see determinism.go
	view    election.View
	voted   election.Durable // the last vote raft made, kept past term changes
	applied uint64
	snaps   []uint64 // peers sent a snapshot in this step
	out     []election.Effect
}

// New builds one node's raft machine, restoring its log and hard state
// from cfg.Durable after a restart.
func New(cfg election.Config) (election.Machine, error) {
	cfg.Timing = cfg.Timing.WithDefaults()
	cfg, err := cfg.WithRing()
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil && cfg.Quorum != election.Majority {
		err = fmt.Errorf("quorum %s: raft runs only with a majority", cfg.Quorum.Text())
	}
	if err != nil {
		return nil, fmt.Errorf("raft: %w", err)
	}
	m := &machine{cfg: cfg, store: raft.NewMemoryStorage(), voted: cfg.Durable}
	if cfg.Replay {
		m.seeded = seededReader{cfg.Rand}
	}
	voters := make([]uint64, 0, cfg.Membership.Len())
	for _, id := range cfg.Membership.Sorted() {
		voters = append(voters, uint64(id))
	}
	m.conf = &raftpb.ConfState{Voters: voters}
	if err := m.restore(cfg.Durable); err != nil {
		return nil, fmt.Errorf("raft: node %d: %w", cfg.ID, err)
	}
	tick, hb, et := Ticks(cfg.Timing)
	m.tick = tick
	rc := &raft.Config{
		ID:              uint64(cfg.ID),
		ElectionTick:    et,
		HeartbeatTick:   hb,
		Storage:         m.store,
		Applied:         m.applied,
		MaxSizePerMsg:   maxMsgSize,
		MaxInflightMsgs: 64,
		CheckQuorum:     cfg.Options.Bool(OptionCheckQuorum),
		PreVote:         cfg.Options.Bool(OptionPreVote),
		Logger:          silent,
	}
	// Building the node draws its first election timeout.
	m.inRaft(func() { m.rn, err = raft.NewRawNode(rc) })
	if err != nil {
		return nil, fmt.Errorf("raft: node %d: %w", cfg.ID, err)
	}
	return m, nil
}

// restore fills the storage: on a first start, a log that starts at a
// snapshot (index 1, term 1) holding the membership, the same on every
// node, so that no configuration change has to be replicated; after a
// restart, what the node persisted.
func (m *machine) restore(d election.Durable) error {
	if len(d.Blob) == 0 {
		boot := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{ConfState: m.conf, Index: proto.Uint64(1), Term: proto.Uint64(1)}}
		if err := m.store.ApplySnapshot(boot); err != nil {
			return err
		}
		m.applied = 1
		if d.Epoch == 0 {
			return nil
		}
		// An epoch without a log (durable state from before this
		// machine): keep the term and the vote, which is what keeps a
		// restarted voter from voting twice.
		hs := &raftpb.HardState{Term: proto.Uint64(d.Epoch), Commit: proto.Uint64(1)}
		if d.VotedEpoch == d.Epoch && d.VotedFor != election.None {
			hs.Vote = proto.Uint64(uint64(d.VotedFor))
		}
		return m.store.SetHardState(hs)
	}
	r, err := decodeDurable(d.Blob)
	if err != nil {
		return err
	}
	if err := r.snap.GetMetadata().GetConfState().Equivalent(m.conf); err != nil {
		return fmt.Errorf("durable membership is not the configured one: %w", err)
	}
	if err := m.store.ApplySnapshot(r.snap); err != nil {
		return err
	}
	if err := m.store.Append(r.ents); err != nil {
		return err
	}
	m.applied = r.hs.GetCommit()
	return m.store.SetHardState(r.hs)
}

func (m *machine) View() election.View { return m.view }

func (m *machine) Step(ev election.Event) []election.Effect {
	m.out = m.cfg.Effects.Begin()
	m.inRaft(func() {
		switch ev.Kind {
		case election.EventStart:
			m.armTick()
		case election.EventTimer:
			if ev.Timer != TimerTick {
				return
			}
			m.rn.Tick()
			m.armTick()
		case election.EventReceive:
			m.receive(ev.Msg)
		case election.EventPeerDown:
			// Raft has its own failure detector (heartbeats and the
			// election timeout); the hint decides nothing here.
		}
		m.drain()
		m.updateView()
	})
	out := m.cfg.Effects.End(m.out)
	m.out = nil
	return out
}

func (m *machine) armTick() {
	m.out = append(m.out, election.Effect{Kind: election.EffectSetTimer, Timer: TimerTick, After: m.tick})
}

// receive steps a peer's message into raft. A payload that does not decode,
// or whose header disagrees with the envelope the runtime vouches for
// (sender, recipient, type, term), is dropped: raft would otherwise trust
// a forged sender. Raft panics on one message a leader never sends: a
// heartbeat whose commit index lies beyond this node's log (a leader
// commits a follower only up to what it matched); that one is dropped
// too, so that no input from the network can crash a node, while a real
// bug (a restarted node that lost its log) still shows as raft's panic.
func (m *machine) receive(env election.Message) {
	var msg raftpb.Message
	if proto.Unmarshal(env.Payload, &msg) != nil {
		return
	}
	if msg.GetFrom() != uint64(env.From) || msg.GetTo() != uint64(m.cfg.ID) || msg.GetType().String() != env.Type ||
		msg.GetTerm() != env.Epoch || m.cfg.Index(env.From) < 0 || env.From == m.cfg.ID {
		return
	}
	if msg.GetType() == raftpb.MsgHeartbeat {
		if last, _ := m.store.LastIndex(); msg.GetCommit() > last { // after drain, storage holds raft's whole log
			return
		}
	}
	_ = m.rn.Step(&msg) // errors: local or unknown-peer messages, dropped by raft
}

// drain is the Ready loop: persist, then send, then advance, until raft
// has nothing left (a node's own vote is stepped inside Advance, and may
// produce more).
func (m *machine) drain() {
	for m.rn.HasReady() {
		rd := m.rn.Ready()
		changed := false
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := m.store.ApplySnapshot(rd.Snapshot); err == nil {
				m.applied = rd.Snapshot.GetMetadata().GetIndex()
				changed = true
			}
		}
		if len(rd.Entries) > 0 {
			_ = m.store.Append(rd.Entries) // raft hands only entries that follow the log
			changed = true
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			_ = m.store.SetHardState(rd.HardState)
			changed = true
		}
		if changed {
			m.persist()
		}
		for _, msg := range rd.Messages {
			m.send(msg)
		}
		for _, e := range rd.CommittedEntries {
			m.applied = e.GetIndex() // entries carry nothing to apply
		}
		m.rn.Advance(rd)
		// A snapshot is one message here: report it delivered, so the
		// leader probes the follower again (a lost one is resent).
		for _, to := range m.snaps {
			m.rn.ReportSnapshot(to, raft.SnapshotFinish)
		}
		m.snaps = m.snaps[:0]
	}
	m.compact()
}

// persist emits the whole durable state (it is small: see durable.go).
func (m *machine) persist() {
	hs, _, _ := m.store.InitialState()
	snap, _ := m.store.Snapshot()
	first, _ := m.store.FirstIndex()
	last, _ := m.store.LastIndex()
	var ents []*raftpb.Entry
	if last >= first {
		ents, _ = m.store.Entries(first, last+1, math.MaxUint64)
	}
	d, err := encodeDurable(hs, snap, ents, m.voted)
	if err != nil {
		return // protobuf does not fail on messages it built itself
	}
	m.voted.VotedEpoch, m.voted.VotedFor = d.VotedEpoch, d.VotedFor
	m.out = append(m.out, election.Effect{Kind: election.EffectPersist, Durable: &d})
}

// compact folds the log into the snapshot up to keepEntries behind the
// applied index, once it holds twice that many.
//
// The snapshot's index is read as the first index less one (the storage
// keeps a dummy entry at it), not from Snapshot, which clones the whole
// snapshot: after every step, that clone was a third of the explorer's
// time on raft.
func (m *machine) compact() {
	first, _ := m.store.FirstIndex()
	base := first - 1
	if m.applied < base+2*keepEntries {
		return
	}
	at := m.applied - keepEntries
	if _, err := m.store.CreateSnapshot(at, m.conf, nil); err == nil {
		_ = m.store.Compact(at)
	}
}

func (m *machine) send(msg *raftpb.Message) {
	payload, err := marshal.Marshal(msg)
	if err != nil {
		return
	}
	if msg.GetType() == raftpb.MsgSnap {
		m.snaps = append(m.snaps, msg.GetTo())
	}
	m.out = append(m.out, election.Effect{Kind: election.EffectSend, Msg: election.Message{
		Type: msg.GetType().String(), From: m.cfg.ID, To: election.NodeID(msg.GetTo()),
		Epoch: msg.GetTerm(), Payload: payload,
	}})
}

// updateView emits raft's view when it changed: its term is the epoch, a
// pre-candidate is a candidate, a follower that knows no leader is
// undecided.
func (m *machine) updateView() {
	st := m.rn.BasicStatus()
	v := election.View{Leader: election.NodeID(st.Lead), Epoch: st.HardState.GetTerm()}
	switch st.RaftState {
	case raft.StateLeader:
		v.Role = election.Leader
	case raft.StateCandidate, raft.StatePreCandidate:
		v.Role = election.Candidate
	default:
		v.Role = election.Follower
		if st.Lead == raft.None {
			v.Role = election.Undecided
		}
	}
	if v == m.view {
		return
	}
	m.view = v
	m.out = append(m.out, election.Effect{Kind: election.EffectView, View: v})
}
