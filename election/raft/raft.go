// Package raft is Raft's leader election (Ongaro and Ousterhout, "In Search
// of an Understandable Consensus Algorithm", USENIX ATC 2014) as etcd runs
// it: every node is a go.etcd.io/raft/v3 RawNode, the library etcd itself
// uses, behind the election.Machine contract.
//
// The machine owns no goroutine. A "tick" timer drives RawNode.Tick; every
// received message is RawNode.Step; after each, the Ready loop persists
// the hard state and log (EffectPersist, before anything is sent), sends
// raft's messages (EffectSend, the protobuf form in Message.Payload) and
// advances. Views are raft's: its term is the epoch, its leader the leader,
// a pre-candidate a candidate. docs/raft.md has the tick choice, the
// durable state and how replay stays deterministic.
package raft

import (
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Option names (cluster: {algorithm: raft, options: {prevote: false}}).
const (
	// OptionPreVote: a node asks whether it could win before it raises its
	// term (Raft thesis §9.6), so a node that was cut off cannot depose a
	// healthy leader when it returns. On by default, as in etcd ≥ 3.5.
	OptionPreVote = "prevote"
	// OptionCheckQuorum: a leader that has not heard from a majority for an
	// election timeout steps down, and a follower that heard a leader
	// within the timeout ignores vote requests (the leader lease). On by
	// default, as in etcd.
	OptionCheckQuorum = "check_quorum"
)

// TicksPerHeartbeat is how many ticks make one heartbeat interval. Raft's
// election timeout is drawn uniformly from [ElectionTick, 2·ElectionTick)
// ticks, so the tick is the grain of that draw: with the default timing
// (100 ms heartbeat, 500 ms suspicion) a 25 ms tick gives 20 distinct
// timeouts between 500 ms and 1 s, enough that split votes stay rare,
// for 40 timer events per node per second (a 10 ms tick would cost 100).
const TicksPerHeartbeat = 4

// Ticks derives raft's clock from a scenario's timing: the tick is a
// quarter of the heartbeat, the heartbeat TicksPerHeartbeat ticks, and the
// election timeout the suspicion (at least one tick more than the
// heartbeat, as raft requires), so that raft's shortest election timeout
// is Bully's suspicion and the two are compared on the same timing.
func Ticks(t election.Timing) (tick time.Duration, heartbeatTicks, electionTicks int) {
	t = t.WithDefaults()
	tick = max(t.Heartbeat/TicksPerHeartbeat, time.Nanosecond)
	electionTicks = int((t.Suspicion + tick/2) / tick)
	return tick, TicksPerHeartbeat, max(electionTicks, TicksPerHeartbeat+1)
}

// Message types as they appear in Message.Type: raftpb's own names.
const (
	TypeVote          = "MsgVote"
	TypeVoteResp      = "MsgVoteResp"
	TypePreVote       = "MsgPreVote"
	TypePreVoteResp   = "MsgPreVoteResp"
	TypeTimeoutNow    = "MsgTimeoutNow"
	TypeApp           = "MsgApp"
	TypeAppResp       = "MsgAppResp"
	TypeHeartbeat     = "MsgHeartbeat"
	TypeHeartbeatResp = "MsgHeartbeatResp"
	TypeSnap          = "MsgSnap"
)

func init() {
	election.Register(election.Algorithm{
		Name:     "raft",
		Title:    "Raft leader election (Ongaro & Ousterhout, USENIX ATC 2014), etcd's go.etcd.io/raft/v3 v3.7.0",
		Topology: "complete",
		New:      New,
		// A new leader announces itself with its first append (the empty
		// entry every leader writes); heartbeats and their responses are
		// maintenance.
		ElectionTypes: []string{TypeVote, TypeVoteResp, TypePreVote, TypePreVoteResp, TypeTimeoutNow},
		AnnounceTypes: []string{TypeApp},
		Claims:        Claims,
		Quorums:       []election.QuorumMode{election.Majority},
		// Every call into the library holds raftMu (determinism.go).
		OneAtATime:    true,
		DefaultQuorum: election.Majority,
		QuorumWhy:     "a raft leader needs the votes of a majority of the membership, and without one raft elects nobody rather than two leaders",
		Options: []election.OptionSpec{
			{Name: OptionPreVote, Kind: election.OptionBool, Default: "true", Help: "pre-vote before raising the term, so a returning node cannot depose a healthy leader (etcd ≥ 3.5 default)"},
			{Name: OptionCheckQuorum, Kind: election.OptionBool, Default: "true", Help: "a leader that lost touch with a majority steps down after an election timeout; followers honour the leader's lease"},
		},
		Seeded: true,
	})
}

// Claims: a leader per term and agreement once the network heals, and a
// leader after the faults end. Not no-split-brain: a leader cut off in a
// minority keeps its role until check_quorum removes it (for the whole cut
// without check_quorum), while the majority elects a new one; ringleader
// still measures that overlap. Not bully-max: any node with an up-to-date
// log may win.
func Claims(election.QuorumMode) []election.Property {
	return []election.Property{election.Agreement, election.EpochSafety, election.Liveness}
}
