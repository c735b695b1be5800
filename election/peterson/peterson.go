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
	"maps"
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

type key struct{ phase, hop int }

type machine struct {
	*ringnet.Core
	awake  bool
	active bool
	tid    election.NodeID
	ntid   election.NodeID
	phase  int
	step   int // 1: waiting for the phase's first message, 2: for its second
	// early holds messages of later steps that arrived before this
	// node got there; FIFO links never need it, a reordering network does.
	early map[key]election.Message
	// relayed guards against a message circling for ever once every
	// active node it was meant for has been skipped as dead: a relay
	// passes each (phase, hop, tid) on at most once per epoch, which a
	// fault-free run never needs to repeat.
	relayed map[key]map[election.NodeID]bool
}

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
	m.Core = core
	return m, nil
}

func (m *machine) Reset() {
	m.awake, m.active = false, false
	m.tid, m.ntid, m.phase, m.step = election.None, election.None, 0, 0
	m.early, m.relayed = nil, nil
}

func (m *machine) Initiate() {
	m.awake, m.active = true, true
	m.tid, m.phase = m.ID(), 0
	m.early = map[key]election.Message{}
	m.beginPhase()
}

func (m *machine) beginPhase() {
	m.step = 1
	m.send(1, m.tid)
}

func (m *machine) send(hop int, v election.NodeID) {
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
	m.early[key{msg.Phase, msg.Hop}] = msg
	for m.active && !m.Decided() {
		next, ok := m.early[key{m.phase, m.step}]
		if !ok {
			return
		}
		delete(m.early, key{m.phase, m.step})
		m.advance(next)
	}
	if !m.active {
		// Now a relay: pass on what arrived early, in order.
		keys := slices.SortedFunc(maps.Keys(m.early), func(a, b key) int {
			return cmp.Or(cmp.Compare(a.phase, b.phase), cmp.Compare(a.hop, b.hop))
		})
		for _, k := range keys {
			m.relay(m.early[k])
		}
		clear(m.early)
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
	k := key{msg.Phase, msg.Hop}
	if m.relayed == nil {
		m.relayed = map[key]map[election.NodeID]bool{}
	}
	if m.relayed[k] == nil {
		m.relayed[k] = map[election.NodeID]bool{}
	}
	if m.relayed[k][msg.Candidate] {
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
	m.relayed[k][msg.Candidate] = true
	m.Forward(election.Clockwise, election.Message{Type: TypeElection, Candidate: msg.Candidate, Phase: msg.Phase, Hop: msg.Hop})
}

func (m *machine) Timer(string) {}
