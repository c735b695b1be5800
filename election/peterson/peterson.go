// Package peterson is Peterson's O(n log n) election on a unidirectional
// ring (Peterson, TOPLAS 4(4), 1982; Dolev, Klawe & Rodeh found the same
// idea the same year).
//
// Every node starts active holding its own ID as its temporary ID (tid). In
// each phase an active node sends its tid clockwise (the first message of
// the phase, Hop=1) and learns ntid, the tid of the nearest active node
// before it; it passes ntid on (the second message, Hop=2) and learns nntid,
// the tid two active nodes back. It stays active, adopting ntid, exactly when
// ntid is larger than both its own tid and nntid, i.e. when the active node
// before it holds a local maximum; otherwise it becomes a relay that only
// passes messages on. No two neighbouring active nodes both survive, so the
// active nodes at least halve each phase. An active node that receives its
// own tid as ntid is the last one.
//
// The last active node is not, in general, the node with the highest ID, but
// the tid it holds is the highest ID: the highest tid always survives (the
// node after its holder adopts it). The last node therefore announces that
// ID with ELECTED, and the node with that ID leads — which keeps the
// highest-ID-wins claim true.
package peterson

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/election/ringnet"
)

// Message types.
const (
	TypeElection = "ELECTION"
	TypeElected  = "ELECTED"
)

func init() {
	election.Register(election.Algorithm{
		Name:          "peterson",
		Title:         "Peterson's one-way ring election (Peterson, ACM TOPLAS 4(4), 1982; cf. Dolev, Klawe & Rodeh, J. Algorithms 3, 1982)",
		Topology:      "ring",
		New:           New,
		ElectionTypes: []string{TypeElection},
		AnnounceTypes: []string{TypeElected},
		Formula:       Formula,
		Claims:        ringnet.Claims,
		Seeded:        true,
	})
}

// Formula is Peterson's bound 2n⌊log₂ n⌋ + n: at most ⌊log₂ n⌋ phases with
// two or more active nodes, each costing 2n messages (every link carries one
// first and one second message), and a last phase in which the lone active
// node's tid goes round once (n messages).
func Formula(ids []election.NodeID) election.Formula {
	n := len(ids)
	return election.Formula{Name: "2n⌊log₂ n⌋ + n", Value: float64(2*n*FloorLog2(n) + n), Exact: false}
}

// FloorLog2 is ⌊log₂ n⌋ for n ≥ 1.
func FloorLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n)) - 1
}

type key struct{ phase, hop int32 }

type machine struct {
	ringnet.Core // by value: one allocation per node, not two
	awake        bool
	active       bool
	tid          election.NodeID
	ntid         election.NodeID
	phase        int32
	step         int32 // 1: waiting for the phase's first message, 2: for its second
	// x holds what a reordering network or a fault needs, made when
	// first needed: a fault-free run on FIFO links never does, and a
	// million nodes each holding two lists add up.
	x *extra
}

// extra is the part of a machine that FIFO links without faults never
// touch.
type extra struct {
	// early holds messages of later steps that arrived before this
	// node got there; FIFO links never need it, a reordering network does.
	// A short list, not a map: it is almost always empty.
	early []election.Message
	// relayed guards against a message circling for ever once every
	// active node it was meant for has been skipped as dead: a relay
	// passes each (phase, hop, tid) on at most once per epoch, which a
	// fault-free run never needs to repeat. A list searched in full: a
	// relay passes on two values a phase, about 2·log₂ n in an epoch.
	relayed []relayedValue
	// relayedMax is the latest step relayed: a message of a later step
	// cannot have been relayed, and a fault-free run sees nothing else.
	relayedMax key
}

// ext is m's extra part, made on first use.
func (m *machine) ext() *extra {
	if m.x == nil {
		m.x = &extra{}
	}
	return m.x
}

type relayedValue struct {
	key
	candidate election.NodeID
}

func keyOf(msg election.Message) key { return key{msg.Phase, msg.Hop} }

// takeEarly removes and returns the early message of step k, if any.
func (m *machine) takeEarly(k key) (election.Message, bool) {
	if m.x == nil {
		return election.Message{}, false
	}
	for i, e := range m.x.early {
		if keyOf(e) == k {
			m.x.early = slices.Delete(m.x.early, i, i+1)
			return e, true
		}
	}
	return election.Message{}, false
}

// hasEarly reports whether m holds early messages.
func (m *machine) hasEarly() bool { return m.x != nil && len(m.x.early) > 0 }

// New builds a Peterson node.
func New(cfg election.Config) (election.Machine, error) {
	m := &machine{}
	n := len(cfg.Members)
	core, err := ringnet.NewCore(cfg, ringnet.Options{
		Announce: TypeElected,
		Watch:    true,
		// Phases run one after the other, each at most 2n sequential
		// hops, then the last one (n) and the announcement (n).
		ElectionHops: (2*FloorLog2(n) + 2) * n,
	}, m)
	if err != nil {
		return nil, err
	}
	m.Core = *core
	return m, nil
}

func (m *machine) Reset() {
	m.awake, m.active = false, false
	m.tid, m.ntid, m.phase, m.step = election.None, election.None, 0, 0
	if x := m.x; x != nil {
		x.early, x.relayed, x.relayedMax = x.early[:0], x.relayed[:0], key{}
	}
}

func (m *machine) Initiate() {
	m.awake, m.active = true, true
	m.tid, m.phase = m.ID(), 0
	if m.x != nil {
		m.x.early = m.x.early[:0]
	}
	m.beginPhase()
}

func (m *machine) beginPhase() {
	m.step = 1
	m.send(1, m.tid)
}

func (m *machine) send(hop int32, v election.NodeID) {
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: v, Phase: m.phase, Hop: hop})
}

func (m *machine) Handle(msg election.Message) {
	if msg.Type != TypeElection {
		return
	}
	if !m.awake {
		if m.Decided() {
			return // learned the leader before any message of this election
		}
		// Woken by its predecessor: every node takes part.
		m.Initiate()
	}
	if !m.active {
		m.relay(msg) // relays keep relaying after the decision
		return
	}
	if m.Decided() {
		return
	}
	if msg.Phase < m.phase || (msg.Phase == m.phase && msg.Hop < m.step) {
		return // a step this node has done: a duplicate after a fault
	}
	if k := keyOf(msg); k == (key{m.phase, m.step}) && !m.hasEarly() {
		// The step this node waits for, and nothing held: what FIFO
		// links always bring. Taken at once rather than held and
		// found again.
		m.advance(msg)
	} else {
		m.takeEarly(k) // a later copy replaces an earlier one
		x := m.ext()
		x.early = append(x.early, msg)
	}
	for m.active && !m.Decided() {
		next, ok := m.takeEarly(key{m.phase, m.step})
		if !ok {
			return
		}
		m.advance(next)
	}
	if !m.active && m.hasEarly() {
		// Now a relay: pass on what arrived early, in order.
		early := slices.SortedFunc(slices.Values(m.x.early), func(a, b election.Message) int {
			return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Hop, b.Hop))
		})
		m.x.early = m.x.early[:0]
		for _, e := range early {
			m.relay(e)
		}
	}
}

func (m *machine) advance(msg election.Message) {
	if m.step == 1 {
		m.ntid = msg.Candidate
		if m.ntid == m.tid {
			// Own tid came back round: the last active node. tid is
			// the highest ID on the ring.
			m.Announce(m.tid, nil)
			return
		}
		m.step = 2
		m.send(2, m.ntid)
		return
	}
	nntid := msg.Candidate
	if m.ntid > m.tid && m.ntid > nntid {
		m.tid = m.ntid
		m.phase++
		m.beginPhase()
		return
	}
	m.active = false
}

func (m *machine) relay(msg election.Message) {
	if m.FaultFree() {
		// Nothing fails, so nothing circles: no guard to keep.
		m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: msg.Candidate, Phase: msg.Phase, Hop: msg.Hop})
		return
	}
	x := m.ext()
	v := relayedValue{keyOf(msg), msg.Candidate}
	later := v.phase > x.relayedMax.phase || v.phase == x.relayedMax.phase && v.hop > x.relayedMax.hop
	if later {
		x.relayedMax = v.key
	}
	if !later && slices.Contains(x.relayed, v) {
		// The value has gone round the ring without meeting an active
		// node: the active nodes it was meant for crashed or were
		// skipped, and this epoch's election may never finish (a
		// fault-free run never gets here). Start the next one now
		// rather than at the election timeout.
		if !m.Decided() {
			m.StartElection()
		}
		return
	}
	x.relayed = append(x.relayed, v)
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: msg.Candidate, Phase: msg.Phase, Hop: msg.Hop})
}

func (m *machine) Timer(string) {}
