// Package ring is the textbook ring election with a member list (as taught
// from Tanenbaum & van Steen's Distributed Systems): an ELECTION message
// collects the IDs of the live nodes it passes; back at its initiator the
// highest collected ID is the leader, and a COORDINATOR message carrying the
// leader and the member list goes round once. Dead successors are skipped by
// the per-hop acknowledgement of package ringnet.
//
// Concurrent initiators: in the textbook every initiator's message goes
// round in full and every initiator announces the same result. Here a node
// that already takes part drops an ELECTION started by a lower initiator,
// and a node that does not yet take part answers one by starting its own
// (the Chang–Roberts rule applied to initiator IDs). Exactly one message
// survives — the highest initiator's, which has passed every live node — so
// exactly one COORDINATOR circulates, and the count is the Chang–Roberts hop
// sum.
package ring

import (
	"slices"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/changroberts"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

// Message types, as in the textbook.
const (
	TypeElection    = "ELECTION"
	TypeCoordinator = "COORDINATOR"
)

func init() {
	election.Register(election.Algorithm{
		Name:          "ring",
		Title:         "Ring election with a member list (textbook; Tanenbaum & van Steen, Distributed Systems)",
		Topology:      "ring",
		New:           New,
		ElectionTypes: []string{TypeElection},
		AnnounceTypes: []string{TypeCoordinator},
		Formula:       Formula,
		Claims:        ringnet.Claims,
		Seeded:        true,
	})
}

// Formula: with every node starting at once, each initiator's list travels
// to the next larger initiator, the highest one's all the way round: the
// Chang–Roberts hop sum, exactly.
func Formula(ids []election.NodeID) election.Formula {
	return election.Formula{Name: "Σ hops to the next larger ID", Value: float64(changroberts.HopSum(ids)), Exact: true}
}

type machine struct {
	ringnet.Core // by value: one allocation per node, not two
	participant  bool
}

// New builds a ring node.
func New(cfg election.Config) (election.Machine, error) {
	m := &machine{}
	core, err := ringnet.NewCore(cfg, ringnet.Options{
		Announce: TypeCoordinator,
		// ELECTION then COORDINATOR: at most 2n sequential hops.
		ElectionHops: 2 * len(cfg.Members),
	}, m)
	if err != nil {
		return nil, err
	}
	m.Core = *core
	return m, nil
}

func (m *machine) Reset() { m.participant = false }

func (m *machine) Initiate() {
	m.participant = true
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: m.ID(), Members: []election.NodeID{m.ID()}})
}

// Handle applies the rules above; a node that already knows the leader
// still relays lists of higher initiators (so counts do not depend on
// delays) but never starts or announces again in this epoch.
func (m *machine) Handle(msg election.Message) {
	if msg.Type != TypeElection {
		return
	}
	switch {
	case msg.Candidate == m.ID():
		// Back at its initiator: the list holds every live node.
		if !m.Decided() {
			m.Announce(slices.Max(msg.Members), msg.Members)
		}
	case slices.Contains(msg.Members, m.ID()):
		// Its initiator died after sending it: drop it rather than
		// let it circle for ever.
	case msg.Candidate > m.ID():
		m.participant = true
		list := make([]election.NodeID, len(msg.Members), len(msg.Members)+1)
		copy(list, msg.Members)
		m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: msg.Candidate, Members: append(list, m.ID())})
	case !m.participant && !m.Decided():
		m.Initiate()
	}
}

func (m *machine) Timer(string) {}
