// Package election is the pure core of ringleader: every leader-election
// algorithm is a deterministic state machine that is handed one Event at a
// time and answers with Effects (messages to send, timers to set or cancel, a
// new View, state to persist).
//
// Nothing in a Machine owns a goroutine, reads a clock, does I/O or touches
// global randomness. Time reaches it only as timer events, randomness only
// through Config.Rand. The simulator (package sim) and the NATS node runtime
// (package node) are the two worlds that drive the same machines; that split
// is what makes a simulated run reproducible from its seed and a container run
// comparable with it. The shape follows etcd's raft package.
package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// NodeID identifies a node. IDs are positive; 0 means "nobody" (for example
// an undecided view's leader, or a broadcast's recipient).
type NodeID int

// AppendIDs appends ids to b as "1,2,3": how every text of the project
// (fault targets, labels, verdicts, transcripts) writes a list of nodes,
// in whatever brackets it puts around it.
func AppendIDs(b []byte, ids []NodeID) []byte {
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return b
}

// FirstIDs is the membership of n nodes numbered 1 to n, in order: what a
// cluster given by its size (--n, a scenario's nodes: n) runs.
func FirstIDs(n int) []NodeID {
	ids := make([]NodeID, max(n, 0))
	for i := range ids {
		ids[i] = NodeID(i + 1)
	}
	return ids
}

// None is the zero NodeID: no leader, no recipient.
const None NodeID = 0

// Role is what a node believes its own part to be.
type Role string

const (
	// Undecided: the node knows no leader and is not campaigning.
	Undecided Role = "undecided"
	// Candidate: the node takes part in an election it has not yet decided.
	Candidate Role = "candidate"
	// Follower: the node believes another node leads.
	Follower Role = "follower"
	// Leader: the node believes it leads.
	Leader Role = "leader"
)

// MaxEpoch is the largest epoch any node adopts, sends or persists:
// 2^53 − 1, the largest integer every JSON reader holds exactly. A cluster
// that held an election every millisecond would need 285,000 years to get
// there, so an epoch above it is forged or corrupt: the wire refuses it
// (wire.BadEpoch) and a node refuses durable state that holds one.
// NextEpoch saturates at it, so epoch arithmetic never wraps.
const MaxEpoch uint64 = 1<<53 - 1

// NextEpoch is the epoch after e: the one place an algorithm takes a newer
// epoch. It saturates instead of wrapping: at MaxEpoch (or beyond it, from
// a message nobody should have accepted) it returns e itself, so no epoch
// ever goes down, and a cluster whose epochs are used up elects nobody
// rather than reusing one.
func NextEpoch(e uint64) uint64 {
	if e >= MaxEpoch {
		return e
	}
	return e + 1
}

// View is what one node believes at one moment. Views are the testbed's
// product: the harness records every change and the checkers judge them.
type View struct {
	Leader NodeID `json:"leader"`
	Epoch  uint64 `json:"epoch"`
	Role   Role   `json:"role"`
}

// String is {leader=5 epoch=2 role=leader}; a node that has no view (one
// that is down, or has not started) has no role, and reads {no view}.
func (v View) String() string {
	if v.Role == "" && v.Leader == None && v.Epoch == 0 {
		return "{no view}"
	}
	return fmt.Sprintf("{leader=%d epoch=%d role=%s}", v.Leader, v.Epoch, v.Role)
}

// Dir is a direction on a ring: +1 towards the successor (clockwise, the
// order of Config.Members), -1 towards the predecessor.
type Dir int8

const (
	Clockwise        Dir = 1
	CounterClockwise Dir = -1
)

// Message is the one message shape every algorithm uses. Type names follow
// the literature (ELECTION, OK, COORDINATOR, ...). The optional fields carry
// what a particular algorithm needs; unused ones stay zero and are omitted on
// the wire. One flat shape keeps the wire format, the history and the fuzzed
// decoder the same for every algorithm.
type Message struct {
	Type  string `json:"type"`
	From  NodeID `json:"from"`
	To    NodeID `json:"to"`
	Epoch uint64 `json:"epoch"`

	// Candidate is the ID a ring message carries (Chang–Roberts, HS,
	// Peterson, variable-time) or the node a vote is for.
	Candidate NodeID `json:"candidate,omitempty"`
	// Members is an accumulated member list (the textbook ring) or the
	// membership a COORDINATOR announces.
	Members []NodeID `json:"members,omitempty"`
	// Seq numbers a message for per-hop acknowledgements.
	Seq uint64 `json:"seq,omitempty"`
	// Phase is a phase or round number (HS, Peterson, variable-time).
	// Phase and Hop are 32-bit, and Dir and Reply sit side by side, so
	// that a Message stays 120 bytes: the simulator copies Messages
	// inside every Event and Effect, and each 8 bytes more costs the
	// explorer about 1 % (sim/benchmarks).
	Phase int32 `json:"phase,omitempty"`
	// Hop counts hops travelled or remaining (HS TTL).
	Hop int32 `json:"hop,omitempty"`
	// Dir is the direction a bidirectional ring message travels.
	Dir Dir `json:"dir,omitempty"`
	// Reply marks a reply travelling back (HS) or a granted vote.
	Reply bool `json:"reply,omitempty"`
	// Payload is opaque to ringleader: bytes an algorithm encodes its own
	// way (a Raft message's protobuf form, a foreign program's state).
	// The runtimes carry it unread; the wire bounds it only through the
	// bound on the whole encoded message (wire.MaxSize). JSON writes it in
	// standard base64, as encoding/json does any []byte.
	Payload []byte `json:"payload,omitempty"`
}

// Clone returns a deep copy (Members and Payload are the reference fields).
func (m Message) Clone() Message {
	m.Members = slices.Clone(m.Members)
	m.Payload = slices.Clone(m.Payload)
	return m
}

// EventKind says what happened to a machine.
type EventKind int

const (
	// EventStart is the first event a machine ever sees, or the first after
	// a crash and restart (then Config.Durable holds what it persisted).
	EventStart EventKind = iota + 1
	// EventReceive delivers Event.Msg.
	EventReceive
	// EventTimer says the timer named Event.Timer fired.
	EventTimer
	// EventPeerDown is a hint from the runtime that Event.Peer is gone
	// (for example NATS answered "no responders" or a route closed). It may
	// be wrong or late; an algorithm may use it to start early, never to
	// decide safety.
	EventPeerDown
)

func (k EventKind) String() string {
	if b, err := k.MarshalText(); err == nil {
		return string(b)
	}
	return fmt.Sprintf("event(%d)", int(k))
}

// Event is one input to a machine. Its JSON form is part of the contract
// other languages speak (docs/contract.md): fields a kind does not use are
// left out.
type Event struct {
	Kind  EventKind `json:"kind"`
	Msg   Message   `json:"msg,omitzero"`    // EventReceive
	Timer string    `json:"timer,omitempty"` // EventTimer
	Peer  NodeID    `json:"peer,omitempty"`  // EventPeerDown
	// Now is the runtime's monotonic clock when the event is delivered,
	// from an origin fixed for the machine's life (virtual time in the
	// simulator). Time is an input, as raft's Tick is: a machine may
	// compare readings, for example to refuse to act on a lease that ran
	// out while it could not run (a paused process's timers all fire at
	// once on thaw, in no useful order), but it never reads a clock
	// itself. Runtimes that cannot tell time leave it zero, and machines
	// must then fall back on their timers. JSON: integer nanoseconds.
	Now time.Duration `json:"now_ns"`
}

// EffectKind says what a machine wants done.
type EffectKind int

const (
	// EffectSend sends Effect.Msg to Effect.Msg.To. A send to a node that
	// is dead or cut off is lost silently, as on core NATS.
	EffectSend EffectKind = iota + 1
	// EffectBroadcast sends a copy of Effect.Msg to every other member;
	// the runtime fills in To for each copy. It counts as n−1 messages.
	EffectBroadcast
	// EffectSetTimer (re)arms the timer Effect.Timer to fire after
	// Effect.After. Setting an armed timer replaces it.
	EffectSetTimer
	// EffectCancelTimer disarms Effect.Timer; a no-op when it is not armed.
	EffectCancelTimer
	// EffectView announces a new view. Machines emit it only when the view
	// actually changes.
	EffectView
	// EffectPersist asks the runtime to store Effect.Durable so that it is
	// handed back in Config.Durable after a crash and restart.
	EffectPersist
)

func (k EffectKind) String() string {
	if b, err := k.MarshalText(); err == nil {
		return string(b)
	}
	return fmt.Sprintf("effect(%d)", int(k))
}

// Effect is one output of a machine. Its JSON form is part of the contract
// (docs/contract.md): fields a kind does not use are left out.
type Effect struct {
	Kind  EffectKind `json:"kind"`
	Msg   Message    `json:"msg,omitzero"`    // EffectSend, EffectBroadcast
	Timer string     `json:"timer,omitempty"` // EffectSetTimer, EffectCancelTimer
	// After is the timer's delay (EffectSetTimer). JSON: integer
	// nanoseconds.
	After time.Duration `json:"after_ns,omitempty"`
	View  View          `json:"view,omitzero"` // EffectView
	// Durable is the state to keep (EffectPersist; nil keeps the zero
	// state). A pointer, because every Effect carries the field and the
	// simulator copies Effects in its inner loop: inline, Durable's 48
	// bytes would cost every send and timer for the rare persist.
	Durable *Durable `json:"durable,omitempty"`
}

// Persisted is the state an EffectPersist asks the runtime to keep: the
// zero state when Durable is nil.
func (e *Effect) Persisted() Durable {
	if e.Durable == nil {
		return Durable{}
	}
	return *e.Durable
}

// Durable is the state an algorithm needs to survive a crash, as a raft
// node's HardState: the highest epoch it has seen and the epoch it last voted
// in (so a restarted voter cannot vote twice in one epoch), and an opaque
// Blob for whatever else the algorithm must keep (a Raft log's tail, a
// foreign program's state), at most MaxDurableBlob bytes.
type Durable struct {
	Epoch      uint64 `json:"epoch"`
	VotedEpoch uint64 `json:"voted_epoch"`
	VotedFor   NodeID `json:"voted_for"`
	// Blob is opaque to ringleader; JSON writes it in standard base64.
	Blob []byte `json:"blob,omitempty"`
}

// Machine is one node's algorithm state.
type Machine interface {
	// Step feeds one event and returns what the machine wants done, in
	// order. Step must not retain the returned slice's messages' Members
	// slices after returning (callers may hand them to other goroutines).
	Step(Event) []Effect
	// View is the machine's current view.
	View() View
}

// QuorumMode says whether a leader needs a majority.
type QuorumMode string

const (
	// QuorumDefault: no mode was given; Algorithm.ResolveQuorum makes it
	// the algorithm's default. A machine never sees it.
	QuorumDefault QuorumMode = ""
	// NoQuorum: any node may lead the nodes it can reach (split brain is
	// possible under partitions, as in the papers).
	NoQuorum QuorumMode = "none"
	// Majority: a leader needs votes from a majority of the configured
	// membership and holds a lease (see package bully).
	Majority QuorumMode = "majority"
)

// ParseQuorum reads a quorum mode as scenario files, flags and environment
// variables write it: "none", "majority", or nothing (QuorumDefault: the
// algorithm's default, resolved by Algorithm.ResolveQuorum).
func ParseQuorum(s string) (QuorumMode, error) {
	switch QuorumMode(s) {
	case QuorumDefault, NoQuorum, Majority:
		return QuorumMode(s), nil
	}
	return QuorumDefault, fmt.Errorf("quorum %q: want none or majority (or nothing, for the algorithm's default)", s)
}

// String is the mode as people write it: "none", "majority", or "" when
// not given (so that it travels in flags and environment variables as
// it came).
func (q QuorumMode) String() string { return string(q) }

// Text is the mode for a message: as String, with "default" for a mode
// not given.
func (q QuorumMode) Text() string {
	if q == QuorumDefault {
		return "default"
	}
	return string(q)
}

// Timing holds the failure-detection and protocol timeouts. The same values
// mean virtual time in the simulator and wall time in the node runtime.
type Timing struct {
	// Heartbeat is how often a leader tells followers it is alive.
	Heartbeat time.Duration `json:"heartbeat" yaml:"heartbeat"`
	// Suspicion is how long a follower waits without hearing the leader
	// before it suspects the leader and starts an election.
	Suspicion time.Duration `json:"suspicion" yaml:"suspicion"`
	// Answer is how long a node waits for an answer (OK, vote, hop ack)
	// before it treats the peer as dead.
	Answer time.Duration `json:"answer" yaml:"answer"`
}

// DefaultTiming is used when a Timing field is zero. Suspicion is several
// heartbeats so that one lost heartbeat does not cause an election.
var DefaultTiming = Timing{
	Heartbeat: 100 * time.Millisecond,
	Suspicion: 500 * time.Millisecond,
	Answer:    200 * time.Millisecond,
}

// TimingPeersPerBase is how many followers a leader heartbeats per
// DefaultTiming.Heartbeat at most when the timing is left to the defaults:
// past it, DefaultTimingFor stretches every timeout in proportion, so that
// a leader's heartbeat load stays that of a 16-node cluster and a
// follower's suspicion stays as many heartbeats long. The route pings grow
// by the same rule (package routes). Measured on 2 cores: 64 containers
// with the 16-node timing (500 ms suspicion) elected without end while
// they started, and settled with two seconds (docs/performance.md).
const TimingPeersPerBase = 15

// DefaultTimingFor is the default timing of a cluster of n nodes:
// DefaultTiming up to TimingPeersPerBase+1 nodes, then stretched by
// (n−1)/TimingPeersPerBase (420 ms, 2.1 s and 840 ms at 64).
func DefaultTimingFor(n int) Timing {
	peers := n - 1
	if peers <= TimingPeersPerBase {
		return DefaultTiming
	}
	// The heartbeat in whole 10 ms, rounded up so the load never
	// exceeds the base; the other two keep their ratios to it.
	const grain = 10 * time.Millisecond
	d := DefaultTiming
	hb := (d.Heartbeat*time.Duration(peers)/TimingPeersPerBase + grain - 1) / grain * grain
	return Timing{Heartbeat: hb, Suspicion: hb * d.Suspicion / d.Heartbeat, Answer: hb * d.Answer / d.Heartbeat}
}

// WithDefaultsFor fills zero fields from DefaultTimingFor(n).
func (t Timing) WithDefaultsFor(n int) Timing {
	d := DefaultTimingFor(n)
	if t.Heartbeat <= 0 {
		t.Heartbeat = d.Heartbeat
	}
	if t.Suspicion <= 0 {
		t.Suspicion = d.Suspicion
	}
	if t.Answer <= 0 {
		t.Answer = d.Answer
	}
	return t
}

// WithDefaults fills zero fields from DefaultTiming.
func (t Timing) WithDefaults() Timing { return t.WithDefaultsFor(0) }

// Validate reports a timing that cannot work.
func (t Timing) Validate() error {
	if t.Heartbeat <= 0 || t.Suspicion <= 0 || t.Answer <= 0 {
		return fmt.Errorf("timing: heartbeat, suspicion and answer must be positive (got %v, %v, %v)", t.Heartbeat, t.Suspicion, t.Answer)
	}
	if t.Suspicion <= t.Heartbeat {
		return fmt.Errorf("timing: suspicion (%v) must be longer than heartbeat (%v), or every follower suspects a live leader", t.Suspicion, t.Heartbeat)
	}
	return nil
}

// Config is everything a machine is built from.
type Config struct {
	// ID is this node's ID; it must be in Members.
	ID NodeID
	// Members is the whole configured membership. For ring algorithms
	// its order is the ring: Members[i+1] is Members[i]'s successor.
	Members []NodeID
	// Quorum is a resolved mode (NoQuorum or Majority), never
	// QuorumDefault: see Algorithm.Resolve.
	Quorum QuorumMode
	// Options are the algorithm's options, resolved (every declared
	// option present, in canonical text): see Algorithm.Resolve.
	Options Options
	Timing  Timing
	// Rand is the machine's only source of randomness; the runtime seeds
	// it (from the run's seed in the simulator).
	Rand *rand.Rand
	// Seed is what Rand was made from (Seed.Rand), for a machine that
	// hands its work to another process (package program). Runtimes set
	// both.
	Seed Seed
	// Durable is what the machine persisted before a crash (zero on a
	// first start).
	Durable Durable
	// Replay says the runtime replays runs from their seed (the
	// simulator and its explorer): every random choice must then come
	// from Rand, even one a wrapped library makes with its own source
	// (package raft routes etcd raft's crypto/rand draws through Rand).
	// Runtimes of real processes leave it false, and such a library
	// keeps its own randomness.
	Replay bool
	// Membership, when set, is Members validated once with its lookups,
	// shared read-only by every machine of the cluster (Members may then
	// be left empty). A runtime that builds many machines (the
	// simulator) sets it so that no machine copies or re-validates the
	// member list; without it each machine builds its own.
	Membership *Membership
	// FaultFree promises a run in which nothing fails: no crash, pause,
	// cut, loss or delay beyond the network's own. The machine then runs
	// no failure detector: it sends no heartbeats, pings or per-hop
	// acknowledgements and suspects nobody, so that a run counts the
	// election's own messages only (the simulator's complexity runs,
	// without --heartbeats). Never set it where anything can fail: a
	// crashed leader would never be replaced.
	FaultFree bool
	// Effects, when set, is where the slices Step returns come from,
	// shared by every machine the runtime steps from one goroutine (see
	// EffectBuffer). Nil: each step allocates its own.
	Effects *EffectBuffer
}

// Ring returns the shared Membership, or builds one from Members (O(n):
// callers that build many machines set Config.Membership instead).
func (c Config) Ring() (*Membership, error) {
	if c.Membership != nil {
		return c.Membership, nil
	}
	m, err := NewMembership(c.Members)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", c.ID, err)
	}
	return m, nil
}

// WithRing returns c with Membership set (built from Members when nil)
// and Members its member list.
func (c Config) WithRing() (Config, error) {
	r, err := c.Ring()
	if err != nil {
		return c, err
	}
	c.Membership, c.Members = r, r.Members()
	return c, nil
}

// Validate checks the parts of a Config every algorithm relies on. With
// a shared Membership it costs O(1); without one, O(n).
func (c Config) Validate() error {
	if c.ID <= 0 {
		return fmt.Errorf("node ID %d: IDs must be positive", c.ID)
	}
	r, err := c.Ring()
	if err != nil {
		return err
	}
	if c.Membership != nil && len(c.Members) != 0 && len(c.Members) != r.Len() {
		return fmt.Errorf("node %d: Members (%d IDs) is not the shared Membership (%d IDs)", c.ID, len(c.Members), r.Len())
	}
	if r.Index(c.ID) < 0 {
		return fmt.Errorf("node %d is not in the membership %s", c.ID, shortIDs(r.Members()))
	}
	switch c.Quorum {
	case NoQuorum, Majority:
	case QuorumDefault:
		return fmt.Errorf("node %d: quorum mode not resolved (Algorithm.Resolve gives the algorithm's default)", c.ID)
	default:
		return fmt.Errorf("quorum %q: want %s or %s", c.Quorum, NoQuorum, Majority)
	}
	if c.Rand == nil {
		return fmt.Errorf("node %d: Config.Rand is nil (the runtime must seed one)", c.ID)
	}
	return c.Timing.Validate()
}

// Index returns the position of id in Members, or -1 (O(1) with a shared
// Membership, O(n) without).
func (c Config) Index(id NodeID) int {
	if c.Membership != nil {
		return c.Membership.Index(id)
	}
	return slices.Index(c.Members, id)
}

// Successor returns the member after id on the ring (wrapping).
func (c Config) Successor(id NodeID) NodeID {
	return c.Members[(c.Index(id)+1)%len(c.Members)]
}

// Predecessor returns the member before id on the ring (wrapping).
func (c Config) Predecessor(id NodeID) NodeID {
	n := len(c.Members)
	return c.Members[(c.Index(id)-1+n)%n]
}

// MajoritySize is the smallest majority of the configured membership.
func (c Config) MajoritySize() int { return len(c.Members)/2 + 1 }
