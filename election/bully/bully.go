// Package bully is the Bully election (Garcia-Molina, "Elections in a
// Distributed Computing System", IEEE Trans. Computers C-31(1), 1982) on a
// complete graph, in two modes.
//
// Plain (Config.Quorum == election.NoQuorum): the textbook algorithm. A node
// that starts, or suspects its leader, sends ELECTION to every higher ID; a
// live higher node answers OK and runs its own election; a node that hears no
// OK within Timing.Answer leads and sends COORDINATOR to every lower ID. The
// leader's HEARTBEAT is the failure detector. Under a partition each side
// elects its own leader: split brain is part of the algorithm.
//
// Majority (Config.Quorum == election.Majority): the same bullying, but a
// candidate also needs VOTEs from a majority of the configured membership for
// a fresh epoch, and a leader holds a lease renewed by HEARTBEAT_ACKs from a
// majority. The lease is shorter than the time a voter waits after it last
// acknowledged a leader before it votes again, so an old leader has stepped
// down before a new one can exist. docs/bully.md has the protocol and the
// safety argument.
package bully

import (
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Message types. ELECTION, OK and COORDINATOR are the paper's; VOTE,
// HEARTBEAT_ACK, PREVOTE, PREVOTE_ACK and RELEASE exist only in majority
// mode.
const (
	// TypeElection: to a higher ID "are you alive?" (answered by OK); in
	// majority mode, to a lower ID also "vote for me in this epoch"
	// (answered by VOTE).
	TypeElection = "ELECTION"
	// TypeOK: "I am alive and outrank you; stand down".
	TypeOK = "OK"
	// TypeVote grants the sender's vote to Message.Candidate in
	// Message.Epoch (majority mode).
	TypeVote = "VOTE"
	// TypeCoordinator announces a new leader and its epoch.
	TypeCoordinator = "COORDINATOR"
	// TypeHeartbeat is the leader's periodic "still here" (and, in
	// majority mode, its lease renewal request, numbered by Seq).
	TypeHeartbeat = "HEARTBEAT"
	// TypeHeartbeatAck acknowledges a HEARTBEAT or COORDINATOR of round
	// Seq (majority mode).
	TypeHeartbeatAck = "HEARTBEAT_ACK"
	// TypePrevote asks a lower ID whether it would vote for the sender in
	// Message.Epoch, the epoch the sender would campaign for (majority
	// mode). Neither side commits to anything: the epoch is a proposal.
	TypePrevote = "PREVOTE"
	// TypePrevoteAck answers a PREVOTE of round Seq. Candidate is the
	// asker and Epoch the proposed epoch when the voter would grant;
	// Candidate is None and Epoch the voter's committed epoch when not.
	TypePrevoteAck = "PREVOTE_ACK"
	// TypeRelease is broadcast by a leader that stepped down from epoch
	// Message.Epoch because a higher candidate asked for its vote: its
	// followers' vote barriers need not run out (majority mode).
	TypeRelease = "RELEASE"
)

func init() {
	election.Register(Algorithm())
}

// Algorithm is Bully's registry entry.
func Algorithm() election.Algorithm {
	return election.Algorithm{
		Name:          "bully",
		Title:         "Bully election (Garcia-Molina, IEEE Trans. Computers C-31(1), 1982), optionally with a majority quorum and leases",
		Topology:      "complete",
		New:           New,
		ElectionTypes: []string{TypeElection, TypeOK, TypeVote, TypePrevote, TypePrevoteAck, TypeRelease},
		AnnounceTypes: []string{TypeCoordinator},
		Formula:       Formula,
		Claims:        Claims,
		Quorums:       []election.QuorumMode{election.NoQuorum, election.Majority},
		DefaultQuorum: election.NoQuorum,
		Seeded:        true,
	}
}

// Claims lists what each mode guarantees. Without a quorum each side of a
// partition elects its own leader, so neither NoSplitBrain nor EpochSafety
// holds (two sides can both move from epoch e to e+1).
func Claims(q election.QuorumMode) []election.Property {
	if q == election.Majority {
		return []election.Property{election.Agreement, election.HighestWins, election.Liveness, election.NoSplitBrain, election.EpochSafety}
	}
	return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
}

// PlainCount is the exact number of election messages (ELECTION + OK) of a
// fault-free plain run in which every node starts at once and every message
// arrives within Timing.Answer: every node but the highest sends ELECTION to
// each higher ID (n(n−1)/2), every node but the lowest and the highest
// answers OK to each lower ID ((n−1)(n−2)/2; the highest has already
// declared itself and answers with COORDINATOR instead). Total (n−1)².
func PlainCount(n int) int {
	if n <= 1 {
		return 0
	}
	return (n - 1) * (n - 1)
}

// QuorumCount is the same for majority mode, where PREVOTE and
// PREVOTE_ACK count as election messages too (ELECTION + OK + PREVOTE +
// PREVOTE_ACK + VOTE): the probes to higher IDs (n(n−1)/2), one OK for each
// probe (n(n−1)/2), and the highest node's pre-vote round, vote requests and
// votes (n−1 each, four times). Total (n−1)(n+4). It is exact when every
// probe reaches the highest node while it still pre-votes or collects votes
// (a constant delay, as in the simulator's default); a probe that arrives
// after it has won is answered with COORDINATOR instead of OK, so in general
// it is an upper bound.
func QuorumCount(n int) int {
	if n <= 1 {
		return 0
	}
	return (n - 1) * (n + 4)
}

// Formula is a bound because the registry's formula cannot see the quorum
// mode: the plain count is exactly (n−1)², the majority count at most
// (n−1)(n+4), and the bound is the larger. Both assume every message arrives
// within Timing.Answer, Bully's own synchrony assumption.
func Formula(ids []election.NodeID) election.Formula {
	n := len(ids)
	return election.Formula{
		Name:  "(n−1)² plain, ≤ (n−1)(n+4) with majority",
		Value: float64(max(PlainCount(n), QuorumCount(n))),
		Exact: false,
	}
}

// New builds one node's machine. It validates cfg itself (the registry's
// election.New does too) so that a direct caller gets the same errors.
func New(cfg election.Config) (election.Machine, error) {
	cfg.Timing = cfg.Timing.WithDefaults()
	cfg, err := cfg.WithRing()
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("bully: %w", err)
	}
	m := &machine{
		cfg:    cfg,
		quorum: cfg.Quorum == election.Majority,
		lease:  Lease(cfg.Timing),
	}
	// higher and lower are windows on the shared ascending member list,
	// not copies of it.
	sorted := cfg.Membership.Sorted()
	r := cfg.Membership.Rank(cfg.ID)
	m.higher, m.lower = sorted[r+1:len(sorted):len(sorted)], sorted[:r:r]
	return m, nil
}

// Lease is how long a majority-acknowledged heartbeat round keeps a leader in
// office, counted from the moment the round was sent: halfway between the
// heartbeat interval (a lease must outlive one round so that it can be
// renewed) and the suspicion timeout (a voter waits that long after its last
// acknowledgement before it votes again, so the lease must end first).
func Lease(t election.Timing) time.Duration {
	return (t.Heartbeat + t.Suspicion) / 2
}
