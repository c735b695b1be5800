// Package changroberts is the Chang–Roberts ring election (1979): a
// unidirectional ring, one candidate ID per ELECTION message and a
// participant flag. A node forwards a larger ID, swallows a smaller one when
// it already takes part, and replaces a smaller one with its own when it does
// not. The ID that comes back to its owner is the largest; the owner sends
// ELECTED round the ring once.
package changroberts

import (
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

// Message types, as in the paper.
const (
	TypeElection = "ELECTION"
	TypeElected  = "ELECTED"
)

func init() {
	election.Register(election.Algorithm{
		Name:          "changroberts",
		Title:         "Chang–Roberts ring election (Chang & Roberts, CACM 22(5), 1979)",
		Topology:      "ring",
		New:           New,
		ElectionTypes: []string{TypeElection},
		AnnounceTypes: []string{TypeElected},
		Formula:       Formula,
		Claims:        ringnet.Claims,
		Seeded:        true,
	})
}

// Formula is the exact count of ELECTION messages when every node starts at
// once with no faults: each ID travels clockwise until it meets a larger one,
// the largest all the way round (n hops). One node sends nothing: it is its
// own ring.
func Formula(ids []election.NodeID) election.Formula {
	return election.Formula{Name: "Σ hops to the next larger ID", Value: float64(HopSum(ids)), Exact: true}
}

// HopSum is the sum over nodes of the clockwise hops from each node to the
// next larger ID (n for the largest); 0 for a ring of one. It runs in O(n)
// with a monotonic stack over the ring walked twice.
func HopSum(ids []election.NodeID) int {
	n := len(ids)
	if n <= 1 {
		return 0
	}
	next := make([]int, n) // hops to the next larger, 0 = not yet found
	var stack []int
	for k := 0; k < 2*n; k++ {
		i := k % n
		for len(stack) > 0 && ids[stack[len(stack)-1]] < ids[i] {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if next[j] == 0 {
				next[j] = (i - j + n) % n
			}
		}
		if k < n {
			stack = append(stack, i)
		}
	}
	sum := 0
	for _, h := range next {
		if h == 0 {
			h = n // the largest: round the whole ring
		}
		sum += h
	}
	return sum
}

type machine struct {
	ringnet.Core // by value: one allocation per node, not two
	participant  bool
	// forwarded guards against a message whose owner was skipped as dead
	// going round for ever: a node passes each candidate on at most once
	// per epoch, which a fault-free run never needs to repeat. A set of
	// runs, not a map: on a 10,000-node worst ring a node passes up to
	// 10,000 candidates on, 50 million in all.
	forwarded ringnet.IDSet
}

// New builds a Chang–Roberts node.
func New(cfg election.Config) (election.Machine, error) {
	m := &machine{}
	core, err := ringnet.NewCore(cfg, ringnet.Options{
		Announce: TypeElected,
		// ELECTION then ELECTED: at most 2n sequential hops.
		ElectionHops: 2 * len(cfg.Members),
	}, m)
	if err != nil {
		return nil, err
	}
	m.Core = *core
	return m, nil
}

func (m *machine) Reset() {
	m.participant = false
	m.forwarded.Clear()
}

func (m *machine) Initiate() {
	m.participant = true
	m.send(m.ID())
}

func (m *machine) send(c election.NodeID) {
	if !m.FaultFree() && !m.forwarded.Add(c) {
		return // nothing fails, so nothing circles: no guard to keep
	}
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: c})
}

// Handle applies the paper's rules. A node that already knows the leader
// (from ELECTED, or from the leader's first heartbeat overtaking a slow
// ELECTION) still relays larger IDs and swallows smaller ones, so every ID
// travels exactly to the next larger one whatever the delays; it only never
// starts anything again in this epoch.
func (m *machine) Handle(msg election.Message) {
	if msg.Type != TypeElection {
		return
	}
	switch c := msg.Candidate; {
	case c == m.ID():
		if !m.Decided() {
			m.Announce(c, nil)
		}
	case c > m.ID():
		m.participant = true
		m.send(c)
	case !m.participant && !m.Decided():
		m.participant = true
		m.send(m.ID())
	}
}

func (m *machine) Timer(string) {}
