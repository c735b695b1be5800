// Package hs is the Hirschberg–Sinclair ring election (1980) on a
// bidirectional ring. A candidate works in phases i = 0, 1, 2, …: in phase i
// it sends an ELECTION probe carrying its ID both ways, to travel 2^i hops.
// A node swallows a probe with a smaller ID than its own, passes a larger one
// on, and the node at distance 2^i turns it into a REPLY that travels back.
// A candidate that gets both replies goes on to phase i+1; one that receives
// its own probe has gone round the ring unbeaten and wins.
package hs

import (
	"math/bits"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

// Message types: probes are ELECTION, the answers REPLY (Reply=true).
const (
	TypeElection = "ELECTION"
	TypeReply    = "REPLY"
	TypeElected  = "ELECTED"
)

func init() {
	election.Register(election.Algorithm{
		Name:          "hs",
		Title:         "Hirschberg–Sinclair bidirectional ring election (Hirschberg & Sinclair, CACM 23(11), 1980)",
		Topology:      "bidirectional-ring",
		New:           New,
		ElectionTypes: []string{TypeElection, TypeReply},
		AnnounceTypes: []string{TypeElected},
		Formula:       Formula,
		Claims:        ringnet.Claims,
		Seeded:        true,
	})
}

// Formula is the published upper bound 8n(1+⌈log₂ n⌉) on probes and
// replies: at most 1+⌈log₂ n⌉ phases, and in each the surviving candidates
// (at most one in every 2^(i−1)+1 consecutive nodes) send at most 4·2^i
// messages each, at most 8n in all.
func Formula(ids []election.NodeID) election.Formula {
	n := len(ids)
	return election.Formula{Name: "8n(1+⌈log₂ n⌉)", Value: float64(8 * n * (1 + CeilLog2(n))), Exact: false}
}

// CeilLog2 is ⌈log₂ n⌉ for n ≥ 1.
func CeilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

type machine struct {
	ringnet.Core // by value: one allocation per node, not two
	awake        bool
	phase        int32
	// replied records which of the phase's two probes (by the direction
	// it was sent in) has been answered.
	replied map[election.Dir]bool
}

// New builds a Hirschberg–Sinclair node.
func New(cfg election.Config) (election.Machine, error) {
	m := &machine{}
	n := len(cfg.Members)
	core, err := ringnet.NewCore(cfg, ringnet.Options{
		Announce: TypeElected,
		Watch:    true,
		// Phase i takes 2·2^i sequential hops out and back, all phases
		// together under 4·2^⌈log₂ n⌉ ≤ 8n; the announcement n more.
		ElectionHops: 9 * n,
	}, m)
	if err != nil {
		return nil, err
	}
	m.Core = *core
	return m, nil
}

func (m *machine) Reset() { m.awake, m.phase, m.replied = false, 0, nil }

func (m *machine) Initiate() {
	m.awake, m.phase = true, 0
	m.probe()
}

// probe sends this phase's two probes. (A candidate does not re-probe when
// replies are late: a defeated candidate never hears that it lost, so it
// would re-probe until the end of a slow but fault-free election and spoil
// the count. A lost probe is left to the election timeout.)
func (m *machine) probe() {
	if m.replied == nil {
		m.replied = map[election.Dir]bool{}
	}
	for _, d := range []election.Dir{election.Clockwise, election.CounterClockwise} {
		m.Forward(d, election.Message{Type: TypeElection, Candidate: m.ID(), Phase: m.phase, Hop: 1, Dir: d})
	}
}

// Handle applies the paper's rules. A node that already knows the leader
// still relays, swallows and answers probes and relays replies (so counts do
// not depend on delays), but never becomes a candidate, advances a phase or
// wins again in this epoch.
func (m *machine) Handle(msg election.Message) {
	if !m.awake && !m.Decided() {
		// A node woken by a probe becomes a candidate too, so that the
		// highest ID always competes.
		m.Initiate()
	}
	switch msg.Type {
	case TypeElection:
		m.onProbe(msg)
	case TypeReply:
		m.onReply(msg)
	}
}

func (m *machine) onProbe(msg election.Message) {
	switch {
	case msg.Candidate == m.ID():
		if !m.Decided() {
			m.Announce(m.ID(), nil) // round the ring unbeaten
		}
	case msg.Candidate < m.ID():
		// swallowed
	case msg.Hop < 1<<msg.Phase:
		m.Forward(msg.Dir, election.Message{Type: TypeElection, Candidate: msg.Candidate, Phase: msg.Phase, Hop: msg.Hop + 1, Dir: msg.Dir})
	default:
		// The probe's last hop: answer back towards its sender. A
		// reply's Hop counts the hops it has travelled.
		m.Forward(-msg.Dir, election.Message{Type: TypeReply, Candidate: msg.Candidate, Phase: msg.Phase, Hop: 1, Dir: -msg.Dir, Reply: true})
	}
}

func (m *machine) onReply(msg election.Message) {
	if msg.Candidate != m.ID() {
		// Normally a reply retraces its probe's path. After a
		// partition heals, neighbours may disagree for the rest of the
		// epoch about who is alive, and the way back can be longer than
		// the way out; a reply is only dropped once it has gone round
		// the whole ring (its candidate is gone).
		if int(msg.Hop) >= m.N() {
			// The reply has gone round the ring without meeting its
			// candidate: the candidate crashed or is cut off, and this
			// epoch's election may never finish (a fault-free run
			// never gets here). Start the next one now rather than at
			// the election timeout.
			if !m.Decided() {
				m.StartElection()
			}
			return
		}
		if m.Skips(msg.Dir, msg.Candidate) {
			// This node marked the candidate dead, yet the candidate's
			// probe got through to where this reply was made: the mark
			// is out of date (a partition has healed), or neighbours
			// disagree about the ring. Try the candidate itself rather
			// than carrying its reply past it.
			m.Forgive(msg.Candidate)
		}
		m.Forward(msg.Dir, election.Message{Type: TypeReply, Candidate: msg.Candidate, Phase: msg.Phase, Hop: msg.Hop + 1, Dir: msg.Dir, Reply: true})
		return
	}
	if msg.Phase != m.phase || m.Decided() {
		return
	}
	// A reply travelling clockwise answers the counter-clockwise probe.
	m.replied[-msg.Dir] = true
	if m.replied[election.Clockwise] && m.replied[election.CounterClockwise] {
		m.phase++
		clear(m.replied)
		m.probe()
	}
}

func (m *machine) Timer(string) {}
