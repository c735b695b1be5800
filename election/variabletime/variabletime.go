// Package variabletime is the synchronous "variable-time" ring election of
// the lecture notes, in the TimeSlice form (Lynch, Distributed Algorithms,
// §3.5): time is cut into slots of n rounds, one slot per ID, and only the
// owner of a slot may start a token in it. A node whose slot comes while it
// has seen no token declares itself leader and sends an ELECTION token with
// its ID round the ring; every other node adopts the ID, cancels its own slot
// and relays the token; the token stops when it is back at its owner.
//
// Variant: the slots are ordered by decreasing ID rank in the configured
// membership (slot k belongs to the k-th highest ID), so the highest live ID
// speaks first and wins — the textbook orders by increasing ID and elects the
// lowest; ranking keeps the wait at most n·n rounds rather than proportional
// to the ID values. A round lasts Timing.Answer; a slot's n rounds leave a
// token time to pass every node (one hop per round, skipped dead nodes
// included) before the next slot opens. A fault-free election costs exactly
// n messages.
//
// A node that hears the heartbeat of a leader with a lower ID (it restarted,
// or a partition healed) does not wait for its slot: the last election found
// no live node above that leader, so this node's slot is effectively first.
//
// It needs synchrony — every node starting the election at the same instant
// and hops shorter than a round — which only the simulator can honestly
// promise, hence SimOnly. A node that nevertheless receives a token with a
// lower ID than its own (its clock started late) swallows it and declares
// itself, so the highest ID still wins.
package variabletime

import (
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

// TypeElection is the token.
const TypeElection = "ELECTION"

// TimerSlot fires when this node's slot opens.
const TimerSlot = "slot"

func init() {
	election.Register(election.Algorithm{
		Name:          "variable-time",
		Title:         "Synchronous variable-time ring election, TimeSlice variant (Lynch, Distributed Algorithms, 1996, §3.5)",
		Topology:      "ring",
		New:           New,
		ElectionTypes: []string{TypeElection},
		Formula:       Formula,
		Claims:        ringnet.Claims,
		SimOnly:       true,
		Seeded:        true,
	})
}

// Formula: the first slot's token goes round once: n messages, exactly.
func Formula(ids []election.NodeID) election.Formula {
	n := len(ids)
	if n <= 1 {
		n = 0
	}
	return election.Formula{Name: "n", Value: float64(n), Exact: true}
}

type machine struct {
	ringnet.Core               // by value: one allocation per node, not two
	rank         int           // 0 for the highest configured ID
	round        time.Duration // one synchronous round
	// relayed is the token this node last passed on in this epoch. The
	// leader's first heartbeat may overtake its token on a slow ring;
	// the node then knows the leader but must still pass the token on.
	relayed election.NodeID
}

// New builds a variable-time node.
func New(cfg election.Config) (election.Machine, error) {
	m := &machine{}
	t := cfg.Timing.WithDefaults()
	n := len(cfg.Members)
	core, err := ringnet.NewCore(cfg, ringnet.Options{
		// The last slot opens after (n−1)·n rounds; its token needs n more.
		ElectionTimeout: t.Suspicion + time.Duration(n*n+n)*t.Answer,
	}, m)
	if err != nil {
		return nil, err
	}
	m.Core = *core
	// rank counts the members above this one, from the shared sorted
	// list (the membership NewCore filled in).
	ring := core.Membership()
	m.rank = ring.Len() - 1 - ring.Rank(cfg.ID)
	m.round = t.Answer
	return m, nil
}

func (m *machine) Reset() {
	m.relayed = election.None
	m.CancelTimer(TimerSlot)
}

func (m *machine) Initiate() {
	// A challenger has heard a lower leader's heartbeat: every node the
	// last election reached is lower, so its slot is, in effect, first.
	if m.rank == 0 || m.Challenging() {
		m.declare()
		return
	}
	m.SetTimer(TimerSlot, time.Duration(m.rank*m.N())*m.round)
}

func (m *machine) Timer(name string) {
	if name == TimerSlot && !m.Decided() {
		m.declare()
	}
}

func (m *machine) declare() {
	m.CancelTimer(TimerSlot)
	m.Decide(m.ID())
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: m.ID()})
}

func (m *machine) Handle(msg election.Message) {
	c := msg.Candidate
	switch {
	case msg.Type != TypeElection || c == m.ID():
		// back at its owner: every node has it
	case c < m.Leader() || c == m.relayed:
		// a lower or repeated token: swallowed
	case c < m.ID():
		// Out of step: this node's slot comes first.
		if !m.Decided() {
			m.declare()
		}
	default:
		m.CancelTimer(TimerSlot)
		if m.Leader() != c {
			m.Decide(c)
		}
		m.relayed = c
		m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: c})
	}
}
