// Package sim runs election machines against an in-memory network under
// virtual time. One seed fixes everything: the network's delays and losses
// and every machine's Config.Rand, so a seed replays a run exactly, down to
// the bytes of its history.
//
// The model, in brief (docs/simulator.md has the long form):
//   - Time is virtual. Events (message deliveries, timer expiries) sit in a
//     heap ordered by time and then by the order they were scheduled; the
//     simulator pops them one by one. Nothing reads a wall clock.
//   - Every directed link is FIFO, as one NATS connection is: a message
//     never overtakes an earlier one on the same link.
//   - A message is lost when its link is cut (when sent or when it would
//     arrive), when the loss draw says so, or when its recipient is down on
//     arrival. Lost messages are counted, never received.
//   - A killed or stopped node loses its machine, its timers and whatever
//     was queued for it; a restart builds a new machine from the node's last
//     persisted Durable state. A paused node processes nothing: messages for
//     it and its expiring timers wait and are handled in a burst on resume.
package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/prefetch"
)

// Options configure one simulated cluster.
type Options struct {
	// Algorithm is a registered algorithm's name.
	Algorithm string
	// Members in ring order.
	Members []election.NodeID
	// Quorum and Options may be left unset: New resolves them to the
	// algorithm's defaults (election.Algorithm.Resolve), and Options()
	// reports what it resolved.
	Quorum  election.QuorumMode
	Options election.Options
	// Timing; zero fields take election.DefaultTiming.
	Timing election.Timing
	Seed   int64
	// Delay is every message's delay; the zero value is a constant 1 ms.
	Delay Dist
	// Loss is the probability (0..1) that any message is lost.
	Loss float64
	// OmitMessages leaves send and recv records out of the history. The
	// explorer sets it: its checkers judge views and faults only, and
	// messages are most of a history's bulk. Counts are kept either way.
	OmitMessages bool
	// Hints models the runtime's failure hints; the zero value is
	// DefaultHints.
	Hints Hints
	// FaultFree builds every machine with election.Config.FaultFree: no
	// failure detector (heartbeats, pings, hop acknowledgements), so a
	// fault-free run sends the election's own messages only. Faults are
	// refused, and Loss must be zero: nothing may fail.
	FaultFree bool
	// MaxMemory is the memory budget in bytes (memory.go): past it,
	// looked at every few thousand events and messages sent, the run
	// stops and Err says so with a *CapError. Zero: DefaultMaxMemory;
	// NoMemoryLimit: none.
	MaxMemory int64
}

// Counts are messages sent, by type and class. A broadcast counts once per
// recipient.
type Counts struct {
	ByType map[string]int `json:"by_type"`
	// Election, Announce and Maintenance classify ByType with the
	// algorithm's ElectionTypes and AnnounceTypes.
	Election    int `json:"election"`
	Announce    int `json:"announce"`
	Maintenance int `json:"maintenance"`
	// Delivered messages reached a running machine; Lost ones did not
	// (cut, lossy link, recipient down, unknown recipient).
	Delivered int `json:"delivered"`
	Lost      int `json:"lost"`
}

// Total is every message sent.
func (c Counts) Total() int { return c.Election + c.Announce + c.Maintenance }

// node is one member's process. The simulator keeps its nodes by value in
// one slice, and only what every message or timer of a run touches is
// here; what faults, pauses, persists and history records need sits out of
// line in nodeExt. A million-node ring walks its nodes a message each, and
// every byte here is a byte of each cache line it loads.
type node struct {
	id  election.NodeID
	m   election.Machine
	idx int32 // index in Sim.nodes
	// boot counts the node's boots; a timer or hint of an earlier boot
	// is stale.
	boot   uint32
	up     bool
	paused bool
	// skewed: a clock fault skewed the node's clock (x.clk).
	skewed bool
	// jammed: a jam is in force on this node (chaos.Jam): what it sends
	// and what is sent to it is held where it arrives (x.jam).
	jammed bool
	// crasher: m can fail by itself (external.go), asked once per boot
	// rather than once per step.
	crasher bool
	seq     uint64 // the node's history records so far
	// x is the rest, made when first needed (ext): a fault-free run
	// without a history never needs it.
	x *nodeExt
	// A node is a cache line: its timers (Sim.armed) and random source
	// (Sim.rands) sit in slices of their own beside it, and this pads
	// the rest, so that no node straddles two lines.
	_ [8]byte
}

// nodeRand is a node's random source: every boot's Config.Rand is r, over
// pcg reseeded for the boot (build), the stream election.Seed.Rand would
// give without two allocations per boot. A boot's machine is dropped
// before the next boot's draws.
type nodeRand struct {
	pcg rand.PCG
	r   rand.Rand
}

// nodeExt is the part of a node that a fault-free run without a history
// does not touch.
type nodeExt struct {
	// bootID names the boot in history records; made at the first
	// record of the boot (Sim.bootID).
	bootID  string
	durable election.Durable
	held    []event // what arrived while paused, in order
	// Per-node network faults (chaos Loss and Delay).
	loss          float64
	delay, jitter time.Duration
	// jam is what this node holds as receiver, in arrival order, until
	// its link is no longer jammed (faults.go, releaseJam).
	jam []event
	// clk is the node's clock when a clock fault skewed it (skewed);
	// jumped is the sum of the jumps it took, to follow the world model.
	clk    clock.Clock
	jumped time.Duration
	// pauses counts this node's pauses, so a hint about one pause is
	// not delivered during the next.
	pauses uint64
	// routesLost lists the peers (indices) whose routes to this node timed
	// out while it was paused: it hears of each when it thaws (hints.go).
	routesLost []int32
	// refused is what the simulator refused of what this boot's machine
	// asked (refuseType): checkCrashed crashes the node for it.
	refused error
}

// ext is n's out-of-line part, made on first use.
func (n *node) ext() *nodeExt {
	if n.x == nil {
		n.x = &nodeExt{}
	}
	return n.x
}

// heldLen is how many events n holds while paused.
func (n *node) heldLen() int {
	if n.x == nil {
		return 0
	}
	return len(n.x.held)
}

// armed lists a node's timers by name: the armed ones, and disarmed ones
// whose event is still queued. A node has a handful at a time, so a list
// searched in full beats a map, and a million nodes do not each hold one.
type armed []armedTimer

// armedTimer is one timer of a node. A timer re-armed while its event is
// queued, due no later than the new deadline, keeps that event rather than
// queueing another (see Sim.armTimer): queued names the event in the
// queue, and gen, at and seq the latest arming, which that event carries
// forward when it comes up.
type armedTimer struct {
	name string
	gen  uint64        // the armed generation; 0: disarmed
	at   time.Duration // when the armed timer fires
	seq  uint64        // its arming's place among the events of that instant
	// queued is the generation of the timer's event in the queue (0:
	// none), due at queuedAt.
	queued   uint64
	queuedAt time.Duration
	// local is the deadline on the node's clock: at itself unless a
	// clock fault skews it.
	local time.Duration
}

// sameString is a == b, asked first of the two strings' memory: a
// machine names its timers and message types with the same few strings
// every time, so a match is mostly one pointer compare rather than a call
// to compare bytes. Strings that differ, or are equal in other memory,
// fall through to ==.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// index is the named timer's place in a, or -1.
func (a armed) index(name string) int {
	for i := range a {
		if sameString(a[i].name, name) {
			return i
		}
	}
	return -1
}

// find is the named timer, or nil.
func (a armed) find(name string) *armedTimer {
	if i := a.index(name); i >= 0 {
		return &a[i]
	}
	return nil
}

// queuedFor is the timer whose queued event has generation gen, or nil:
// a timer event names its timer so (generations are never reused), which
// spares every queued event a string.
func (a armed) queuedFor(gen uint64) *armedTimer {
	if i := a.indexQueued(gen); i >= 0 {
		return &a[i]
	}
	return nil
}

// indexQueued is queuedFor's place in a, or -1.
func (a armed) indexQueued(gen uint64) int {
	for i := range a {
		if a[i].queued == gen {
			return i
		}
	}
	return -1
}

// disarm disarms the named timer. It is forgotten unless its event is
// still queued: a re-arm may use that event yet.
func (a *armed) disarm(name string) {
	i := a.index(name)
	switch {
	case i < 0:
	case (*a)[i].queued != 0:
		(*a)[i].gen = 0
	default:
		a.removeAt(i)
	}
}

// removeAt forgets the timer at place i (names are unique in a list, so
// this is the remove-by-name it replaces, without the second search).
func (a *armed) removeAt(i int) {
	last := len(*a) - 1
	(*a)[i] = (*a)[last]
	(*a)[last] = armedTimer{}
	*a = (*a)[:last]
}

// Sim is one simulated cluster. It is not safe for concurrent use: the
// explorer runs one Sim per goroutine.
type Sim struct {
	alg     election.Algorithm
	opts    Options
	timing  election.Timing
	sink    history.Sink
	sinkErr error

	// events counts the events processed and messages sent, for the
	// memory look every memoryCheckEvery of them; budget is the memory budget in force (0:
	// none), meter reads the process's memory, and memErr is set once
	// the budget is passed: every run loop then stops.
	events uint64
	budget int64
	meter  *memoryMeter
	memErr *CapError

	now   time.Duration
	queue eventQueue
	seq   uint64
	gen   uint64

	nodes []node
	// armed and rands are each node's armed timers and random source, by
	// node index.
	armed []armed
	rands []nodeRand
	ring  *election.Membership
	// effects is the buffer every machine's Step returns its effects in:
	// step is done with them before it steps any machine again.
	effects election.EffectBuffer
	// names are the message types seen, in the order first seen: a queued
	// message holds its type as an index here (packedMsg.typ), and types
	// has its class and count at the same index. Both outlive Reset (the
	// algorithm, and so each type's class, stays): only the counts start
	// over, so that the table does not grow with every schedule, unless
	// a program that makes types up filled it (dropTypes).
	names []string
	types []typeStat
	// typeIDs finds a name's index once names has typeMapFrom of them.
	typeIDs map[string]uint16
	// typeCache finds a type's index by where its name's bytes are
	// (typeSlot): a machine sends the same few string constants, so a
	// message's type is mostly one pointer compare away from its index.
	typeCache [typeSlots]typeSlot
	// refs holds the Members and Payload of queued messages that carry
	// either (packedMsg.refs), refsFree the unused entries.
	refs     []msgRefs
	refsFree []int32
	net      *rand.Rand
	// netSrc is net's source, kept so that Reset can reseed it.
	netSrc *rand.PCG
	// linkLast is the latest arrival scheduled on each directed link
	// (from<<32 | to), which keeps links FIFO. With one constant delay
	// for every message FIFO holds by itself (equal delays, ties broken
	// by scheduling order), so tracking starts only once delays can
	// differ: a non-constant distribution or a delay fault.
	linkLast map[uint64]time.Duration
	// linkLastDense is linkLast for small clusters (the explorer's), by
	// from·n+to: a slice index rather than a map write per message.
	linkLastDense []time.Duration
	// cuts are the links the physics has cut: state.Cut as of the last
	// reconcile, so that the next one sees what a fault changed.
	cuts map[[2]election.NodeID]bool
	// cutDense mirrors cuts for the same small clusters, by from·n+to: a
	// message's cut check without hashing a pair.
	cutDense  []bool
	trackFIFO bool

	// maxSent caps the messages sent (every class); zero: no cap. The
	// send that would exceed it is not made and sets overCap, which ends
	// runUntilQuiet after that event: the counts stop at the cap exactly.
	maxSent int
	overCap bool

	// perNode: some node has had a loss or delay fault (Node.loss,
	// delay, jitter may be set).
	perNode bool
	// jamming: some node is jammed or holds jammed messages.
	jamming bool
	started bool
	heals   uint64 // heals so far: a cut's hint is void after one
	// state is the world model. Its Views lag behind: a view effect
	// goes to views, by node index, and reaches state.Views when
	// something reads the model (model). A million-node election
	// changes three million views, and a map of a million views was
	// its largest table but for the machines.
	state chaos.State
	// warm: the cluster is large enough for process to warm the lines
	// of messages ahead (warmAhead).
	warm bool
	// views is each node's latest view; viewDue marks the ones not yet
	// in state.Views, listed in dueViews.
	views        []election.View
	viewDue      []bool
	dueViews     []int32
	stateChanged bool
	counts       Counts
	// inflight counts election and announce messages on the wire;
	// lastActivity is when one was last sent or a view last changed.
	inflight     int
	lastActivity time.Duration
	// crashes lists the machines that failed by themselves (external.go).
	crashes []Crash
	// viewBlock is the block keepView carves view records' copies from.
	viewBlock []election.View
}

// New builds a cluster; nothing runs until Start. sink may be nil.
func New(opts Options, sink history.Sink) (*Sim, error) {
	alg, err := election.Lookup(opts.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if opts.Quorum, opts.Options, err = alg.Resolve(opts.Quorum, opts.Options); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if len(opts.Members) == 0 {
		return nil, fmt.Errorf("sim: no members")
	}
	if err := opts.Delay.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if opts.Loss < 0 || opts.Loss > 1 {
		return nil, fmt.Errorf("sim: loss %v must be between 0 and 1", opts.Loss)
	}
	if opts.FaultFree && opts.Loss > 0 {
		return nil, fmt.Errorf("sim: loss %v in a fault-free run: with no failure detector a lost message is never replaced", opts.Loss)
	}
	if err := CheckNodes(len(opts.Members), opts.MaxMemory); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s := &Sim{
		alg:       alg,
		opts:      opts,
		timing:    opts.Timing.WithDefaults(),
		sink:      sink,
		netSrc:    rand.NewPCG(uint64(opts.Seed), netStream),
		linkLast:  map[uint64]time.Duration{},
		cuts:      map[[2]election.NodeID]bool{},
		state:     chaos.NewState(),
		counts:    Counts{},
		trackFIFO: opts.Delay.Kind != DistConstant,
		effects:   election.EffectBuffer{Reuse: true},
		budget:    budgetOf(opts.MaxMemory),
		meter:     newMemoryMeter(),
	}
	s.net = rand.New(s.netSrc)
	// Validate the membership once here, with a fake Rand, rather than
	// leaving it to n machines.
	// The one Membership every machine shares: no machine copies or
	// re-validates the member list.
	ring, err := election.NewMembership(opts.Members)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s.ring = ring
	probe := election.Config{ID: opts.Members[0], Membership: ring, Quorum: opts.Quorum, Timing: s.timing, Rand: s.net}
	if err := probe.Validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s.nodes = make([]node, len(opts.Members))
	s.armed = make([]armed, len(opts.Members))
	s.rands = make([]nodeRand, len(opts.Members))
	s.warm = len(opts.Members) >= warmFrom
	for i := range s.rands {
		s.rands[i].r = *rand.New(&s.rands[i].pcg)
	}
	s.views = make([]election.View, len(opts.Members))
	s.viewDue = make([]bool, len(opts.Members))
	if len(opts.Members) <= 64 {
		s.linkLastDense = make([]time.Duration, len(opts.Members)*len(opts.Members))
		s.cutDense = make([]bool, len(opts.Members)*len(opts.Members))
	}
	for i, id := range opts.Members {
		s.nodes[i] = node{id: id, idx: int32(i)}
	}
	// Machines are built now, not in Start, so that Start measures the
	// election alone (building 10,000 machines is the algorithm's cost).
	for i := range s.nodes {
		if err := s.build(&s.nodes[i]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// netStream is the PCG stream of the network's random source ("net").
const netStream = 0x6e6574

// Reset puts the cluster back to what New(opts with Seed: seed, sink) would
// build, keeping the memory it grew: the event queue's slab, the nodes,
// the state's maps. The explorer plays thousands of short schedules on one
// cluster shape, and building each afresh was a tenth of its work. Nothing
// of the previous run shows through: the same seed gives the same run,
// byte for byte, on a reset simulator as on a new one.
func (s *Sim) Reset(seed int64, sink history.Sink) error {
	s.opts.Seed = seed
	s.sink, s.sinkErr, s.memErr = sink, nil, nil
	s.now, s.seq, s.gen = 0, 0, 0
	s.queue.reset()
	s.dropTypes()
	for i := range s.types {
		s.types[i].count = 0
	}
	s.netSrc.Seed(uint64(seed), netStream)
	clear(s.linkLast)
	clear(s.linkLastDense)
	s.trackFIFO = s.opts.Delay.Kind != DistConstant
	s.perNode, s.jamming, s.started, s.heals = false, false, false, 0
	s.state.Clear()
	clear(s.views)
	clear(s.viewDue)
	s.dueViews = s.dueViews[:0]
	clear(s.cuts)
	clear(s.cutDense)
	s.stateChanged = false
	s.counts = Counts{}
	s.overCap = false
	s.inflight, s.lastActivity = 0, 0
	s.crashes = nil
	clear(s.refs)
	s.refs, s.refsFree = s.refs[:0], s.refsFree[:0]
	for i := range s.nodes {
		n := &s.nodes[i]
		s.release(n) // before its machine is forgotten
		x := n.x
		if x != nil {
			*x = nodeExt{held: emptied(x.held)}
		}
		*n = node{id: n.id, idx: n.idx, x: x}
		s.armed[i] = s.armed[i][:0]
		if err := s.build(n); err != nil {
			return err
		}
	}
	return nil
}

// emptied is held with nothing in it and its room kept: a node that is
// paused again, in the next schedule of an exploration as often as not,
// holds its events without growing a new list.
func emptied(held []event) []event { return held[:0] }

// Algorithm is the algorithm the cluster runs.
func (s *Sim) Algorithm() election.Algorithm { return s.alg }

// Members in ring order.
func (s *Sim) Members() []election.NodeID { return slices.Clone(s.opts.Members) }

// Quorum and Options are the cluster's, resolved.
func (s *Sim) Quorum() election.QuorumMode { return s.opts.Quorum }
func (s *Sim) Options() election.Options   { return s.opts.Options }

// Timing with defaults filled in.
func (s *Sim) Timing() election.Timing { return s.timing }

// Err is the first error the history sink returned, or the first persist
// the simulator refused (a Durable blob over election.MaxDurableBlob), or
// else the *CapError of a run stopped at its memory budget, if any.
func (s *Sim) Err() error {
	if s.sinkErr == nil && s.memErr != nil {
		return s.memErr
	}
	return s.sinkErr
}

// build makes a node's next machine (a new boot). Every boot gets its own
// random stream derived from the seed, the node and the boot number.
func (s *Sim) build(n *node) error {
	s.release(n)
	n.boot++
	seed := election.Seed{uint64(s.opts.Seed), uint64(n.id)<<24 | uint64(n.boot)}
	rnd := &s.rands[n.idx]
	rnd.pcg.Seed(seed[0], seed[1])
	cfg := election.Config{
		ID:         n.id,
		Members:    s.opts.Members, // shared: machines must not modify it
		Membership: s.ring,
		Quorum:     s.opts.Quorum,
		Options:    s.opts.Options,
		Timing:     s.timing,
		Rand:       &rnd.r, // seed.Rand()'s stream
		Seed:       seed,
		Durable:    n.durable(),
		Replay:     true,
		FaultFree:  s.opts.FaultFree,
		Effects:    &s.effects,
	}
	m, err := s.alg.New(cfg)
	if err != nil {
		return fmt.Errorf("sim: node %d: %w", n.id, err)
	}
	n.m = m
	_, n.crasher = m.(election.Crasher)
	n.seq = 0
	s.armed[n.idx] = s.armed[n.idx][:0]
	n.skewed = false // a new process has no clock that took jumps
	if x := n.x; x != nil {
		x.bootID = ""
		x.held = emptied(x.held)
		x.routesLost = nil // nor stale routes
		x.jumped = 0
		x.refused = nil
	}
	return nil
}

// durable is what n last persisted.
func (n *node) durable() election.Durable {
	if n.x == nil {
		return election.Durable{}
	}
	return n.x.durable
}

// bootID names n's boot in history records, made at its first record.
func (n *node) bootID() string {
	x := n.ext()
	if x.bootID == "" {
		x.bootID = "sim-" + strconv.Itoa(int(n.id)) + "-" + strconv.Itoa(int(n.boot))
	}
	return x.bootID
}

// Start boots every member at the current virtual time, in ring order. No
// message can arrive before every node has started unless Delay is 0.
// Calling it again does nothing: crashed nodes come back with Restart.
func (s *Sim) Start() {
	if s.started {
		return
	}
	s.started = true
	if len(s.state.Up) == 0 && len(s.nodes) > 64 {
		// Made at its size: grown entry by entry, a million nodes'
		// map left twice its size behind.
		s.state.Up = make(map[election.NodeID]bool, len(s.nodes))
	}
	for i := range s.nodes {
		s.state.Up[s.nodes[i].id] = true
	}
	s.stateChanged = true
	for i := range s.nodes {
		s.boot(&s.nodes[i])
	}
}

// boot starts n's new machine; the world model already has it up, with
// no view until it says so.
func (s *Sim) boot(n *node) {
	n.up, n.paused = true, false
	s.views[n.idx], s.viewDue[n.idx] = election.View{}, false
	delete(s.state.Views, n.id)
	if s.sink != nil {
		s.emit(s.nodeRecord(n, history.KindBoot))
	}
	s.step(n, election.Event{Kind: election.EventStart})
}

// Now is the virtual time since the start.
func (s *Sim) Now() time.Duration { return s.now }

// Time is Now on the history's clock.
func (s *Sim) Time() time.Time { return history.SimOrigin.Add(s.now) }

// Counts returns a copy of the message counts so far.
func (s *Sim) Counts() Counts {
	c := s.counts
	c.ByType = make(map[string]int, len(s.types))
	for i, t := range s.types {
		if t.count > 0 { // seen in this run, not only before a Reset
			c.ByType[s.names[i]] = t.count
		}
	}
	return c
}

// State is a snapshot of the cluster.
func (s *Sim) State() chaos.State {
	return s.model().Clone()
}

// View is node id's current view (zero if it has none or is unknown).
func (s *Sim) View(id election.NodeID) election.View { return s.model().Views[id] }

// model is the world model with every view in it.
func (s *Sim) model() *chaos.State {
	for _, i := range s.dueViews {
		if s.viewDue[i] {
			s.viewDue[i] = false
			s.state.Views[s.nodes[i].id] = s.views[i]
		}
	}
	s.dueViews = s.dueViews[:0]
	return &s.state
}

// setView notes n's new view, for state.Views when next read (model).
func (s *Sim) setView(n *node, v election.View) {
	s.views[n.idx] = v
	if !s.viewDue[n.idx] {
		s.viewDue[n.idx] = true
		s.dueViews = append(s.dueViews, n.idx)
	}
}

// RunFor processes every event up to now+d and leaves the clock at now+d,
// unless the memory budget stops it first (Err then says so).
func (s *Sim) RunFor(d time.Duration) {
	end := s.now + d
	for !s.tick() {
		e := s.queue.popDue(end)
		if e == nil {
			s.now = end
			return
		}
		s.process(e)
	}
	// Stopped at the memory budget: Err says so.
}

// RunUntil processes events until cond holds or d has passed; cond sees the
// live state (it must not keep or modify it) and is evaluated first and then
// after every event that changed a view or a node's status. It reports
// whether cond held; the clock stops at the instant it did, or at now+d.
func (s *Sim) RunUntil(d time.Duration, cond func(chaos.State) bool) bool {
	end := s.now + d
	if cond(*s.model()) {
		return true
	}
	s.stateChanged = false
	for !s.tick() {
		e := s.queue.popDue(end)
		if e == nil {
			break
		}
		s.process(e)
		if s.stateChanged {
			s.stateChanged = false
			if cond(*s.model()) {
				return true
			}
		}
	}
	if s.memErr == nil { // else stopped at the memory budget: Err says so
		s.now = end
	}
	return false
}

// QuietWindow is how long RunUntilQuiet waits, with no election or announce
// message on the wire, for a view to change before calling the cluster
// quiet: long enough to cover any protocol timeout (a suspicion, then an
// unanswered election) that could still move a view.
func (s *Sim) QuietWindow() time.Duration { return 2 * (s.timing.Suspicion + s.timing.Answer) }

// RunUntilQuiet runs until no election or announce message is in flight and
// no view has changed for QuietWindow (or nothing at all is left to happen).
// The clock stops at the instant the last activity ended plus the window;
// it reports false if that did not come within max. Meant for fault-free
// runs: heartbeats (maintenance) do not count as activity.
func (s *Sim) RunUntilQuiet(max time.Duration) bool {
	quiet, _ := s.runUntilQuiet(max, nil)
	return quiet
}

// runUntilQuiet is RunUntilQuiet, watched by w when it is not nil: w's
// progress is reported every few thousand events, and its message cap
// (maxSent) ends the run at the first message over it (the error).
func (s *Sim) runUntilQuiet(max time.Duration, w *watch) (bool, error) {
	end := s.now + max
	window := s.QuietWindow()
	for k := uint32(0); ; k++ {
		if s.inflight == 0 {
			quietAt := s.lastActivity + window
			if quietAt < s.now {
				quietAt = s.now
			}
			if s.queue.len() == 0 || s.queue.next() > quietAt {
				if quietAt > end {
					s.now = end
					return false, nil
				}
				// Run what is due by then (nothing that matters) so
				// the clock does not move backwards later.
				s.now = quietAt
				return true, nil
			}
		}
		if s.queue.len() == 0 {
			return true, nil
		}
		if s.queue.next() > end {
			s.now = end
			return false, nil
		}
		if w != nil && k%4096 == 0 {
			w.report(s)
		}
		if s.tick() {
			s.memErr.At.Elapsed = w.progress(s).Elapsed
			return false, s.memErr
		}
		s.process(s.queue.pop())
		if s.overCap {
			return false, &CapError{Cap: "messages", Limit: int64(s.maxSent), At: w.progress(s)}
		}
	}
}

func (s *Sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	s.queue.push(e)
}

// process handles e, which points into the queue: everything step needs of
// it is copied out before step can push (and so reuse e's slot).
func (s *Sim) process(e *event) {
	s.now = e.at
	n := &s.nodes[e.node]
	if s.warm {
		s.warmAhead()
	}
	switch e.kind {
	case evDeliver:
		if e.counted && !e.arrived {
			s.inflight--
		}
		if !n.up {
			s.lose(e)
			return
		}
		if !e.arrived && s.isCut(e.from, e.node) {
			s.lose(e)
			return
		}
		if s.jamming && !e.arrived && (n.jammed || s.nodes[e.from].jammed) {
			s.holdJammed(n, e)
			return
		}
		if n.paused {
			e.arrived = true
			x := n.ext()
			x.held = append(x.held, *e)
			return
		}
		s.counts.Delivered++
		ev := election.Event{Kind: election.EventReceive}
		s.unpack(&ev.Msg, e, n.id) // in place: a Message is 120 bytes
		s.dropRefs(e)
		if s.sink != nil && !s.opts.OmitMessages {
			r := s.nodeRecord(n, history.KindRecv)
			c := ev.Msg.Clone()
			r.Msg = &c
			s.emit(r)
		}
		// step, written out: an Event is 160 bytes, and passing it
		// to step copied it once more than the machine's Step does.
		ev.Now = s.nodeNow(n)
		s.carryOut(n, n.m.Step(ev))
	case evHint:
		if !n.up || n.boot != e.boot || !s.hintDue(*e) {
			return // its receiver restarted, or what it stood for is over
		}
		if n.paused {
			x := n.ext()
			x.held = append(x.held, *e)
			return
		}
		s.hintDelivered(*e)
		s.step(n, election.Event{Kind: election.EventPeerDown, Peer: s.nodes[e.from].id})
	case evTimer:
		if !n.up || n.boot != e.boot {
			return // its node died
		}
		a := &s.armed[n.idx]
		i := a.indexQueued(e.gen)
		if i < 0 {
			return // an event that a re-arm earlier than it replaced
		}
		if t := &(*a)[i]; t.gen != e.gen {
			s.timerMoved(n, i)
			return
		}
		if n.paused {
			x := n.ext()
			x.held = append(x.held, *e)
			return
		}
		name := (*a)[i].name
		a.removeAt(i)
		s.carryOut(n, n.m.Step(election.Event{Kind: election.EventTimer, Timer: name, Now: s.nodeNow(n)}))
	}
}

// lose counts e, a message, as lost.
func (s *Sim) lose(e *event) {
	s.counts.Lost++
	s.dropRefs(e)
}

// msgRefs are a queued message's reference fields (packedMsg.refs).
type msgRefs struct {
	members []election.NodeID
	payload []byte
}

// pack writes m into p, a zeroed queued message, its type's name being
// names[typ]. Field by field into place: the explorer packs some 700
// messages a schedule, and a packedMsg built and then copied in cost it
// more than the 120-byte copy it replaced.
func (s *Sim) pack(p *packedMsg, m *election.Message, typ uint16) {
	p.epoch, p.seq, p.candidate = m.Epoch, m.Seq, m.Candidate
	p.phase, p.hop, p.typ, p.dir, p.reply = m.Phase, m.Hop, typ, m.Dir, m.Reply
	if m.Members != nil || m.Payload != nil {
		r := msgRefs{members: m.Members, payload: m.Payload}
		if k := len(s.refsFree); k > 0 {
			p.refs = s.refsFree[k-1] + 1
			s.refsFree = s.refsFree[:k-1]
			s.refs[p.refs-1] = r
		} else {
			s.refs = append(s.refs, r)
			p.refs = int32(len(s.refs))
		}
	}
}

// message is the message e delivers, as it was sent.
func (s *Sim) message(e *event) election.Message {
	var m election.Message
	s.unpack(&m, e, s.nodes[e.node].id)
	return m
}

// unpack writes the message e delivers to node to, as it was sent, into
// *m, which is zero: field by field, as pack.
func (s *Sim) unpack(m *election.Message, e *event, to election.NodeID) {
	p := &e.msg
	m.Type, m.From, m.To = s.names[p.typ], s.nodes[e.from].id, to
	m.Epoch, m.Candidate, m.Seq = p.epoch, p.candidate, p.seq
	m.Phase, m.Hop, m.Dir, m.Reply = p.phase, p.hop, p.dir, p.reply
	if p.refs != 0 {
		r := &s.refs[p.refs-1]
		m.Members, m.Payload = r.members, r.payload
	}
}

// dropRefs frees e's entry in refs, if it has one: its message was
// delivered or lost.
func (s *Sim) dropRefs(e *event) {
	if e.kind != evDeliver || e.msg.refs == 0 {
		return
	}
	s.refs[e.msg.refs-1] = msgRefs{}
	s.refsFree = append(s.refsFree, e.msg.refs-1)
	e.msg.refs = 0
}

// armTimer (re)arms n's timer name to fire at at. When the timer's event
// is still queued and due no later, it stays the only one: timerMoved
// carries it on to at when it comes up. A follower re-arms its suspicion
// timer at every heartbeat, and each re-arm used to queue an event that
// the next one made stale, to be popped and dropped: most of the timer
// events the explorer handled. The seq is drawn here either way, so the
// timer fires exactly where a fresh event would have.
func (s *Sim) armTimer(n *node, name string, at, local time.Duration) {
	s.gen++
	s.seq++
	a := &s.armed[n.idx]
	t := a.find(name)
	if t == nil {
		*a = append(*a, armedTimer{name: name})
		t = &(*a)[len(*a)-1]
	}
	t.gen, t.at, t.seq, t.local = s.gen, at, s.seq, local
	if t.queued != 0 && t.queuedAt <= at {
		return
	}
	t.queued, t.queuedAt = t.gen, at
	s.queueTimer(n, t)
}

// setSkewedTimer arms n's timer to fire after d on the node's clock,
// which a clock fault skewed: after d/rate of virtual time, its deadline
// being on the node's clock.
func (s *Sim) setSkewedTimer(n *node, name string, d time.Duration) {
	clk := &n.x.clk
	local := clk.Read(s.now) + d
	s.armTimer(n, name, s.now+clk.Until(s.now, local), local)
}

// queueTimer queues the event of n's timer t, due at t.at.
func (s *Sim) queueTimer(n *node, t *armedTimer) {
	s.queue.pushTimer(t.at, t.seq, n.idx, n.boot, t.gen)
}

// timerMoved handles a timer's queued event that came up after the timer
// was re-armed (to fire no earlier) or disarmed: the event moves on to the
// latest deadline, or the timer (at place i of n's list) is forgotten.
func (s *Sim) timerMoved(n *node, i int) {
	t := &s.armed[n.idx][i]
	if t.gen == 0 {
		s.armed[n.idx].removeAt(i)
		return
	}
	t.queued, t.queuedAt = t.gen, t.at
	s.queueTimer(n, t)
}

type msgClass uint8

const (
	classMaintenance msgClass = iota
	classElection
	classAnnounce
	// classRefused is no type's: countType's answer for a new type the
	// run has no room for (MaxTypes).
	classRefused
)

// typeStat is what the simulator knows of one message type (Sim.types).
type typeStat struct {
	class msgClass
	count int // messages of the type sent in this run
}

// typeSlots is the size of Sim.typeCache: a power of two, and more than
// the types any algorithm sends.
const typeSlots = 16

// typeSlot remembers one type name's memory and its index; id1 is the
// index + 1, 0 for a slot never filled.
type typeSlot struct {
	data *byte
	len  int
	id1  uint16
}

// typeSlotOf is where in Sim.typeCache the type named t is looked for: a
// hash of its bytes' address. Which slot a name lands in changes only how
// fast it is found, never what is found.
func typeSlotOf(t string) int {
	return int(uint64(uintptr(unsafe.Pointer(unsafe.StringData(t)))) * 0x9e3779b97f4a7c15 >> 60)
}

// MaxTypes is how many distinct message types one run can send: a queued
// message holds its type as a 16-bit index (packedMsg.typ), and a type
// slot holds that index + 1. An algorithm sends a handful; only a program
// that makes up a type per message (say "vote-17") reaches it, and the
// simulator refuses the type it cannot name (Sim.refuseType).
const MaxTypes = 1<<16 - 2

// typesKeptByReset is how many type names Reset keeps. A run of an
// algorithm names the same few types as the run before it, and keeping
// them saves looking each up again; a table beyond this was filled by a
// program that makes types up, and starts empty, so that only one run's
// types can ever fill it.
const typesKeptByReset = 1024

// typeMapFrom is the table size from which typeIndex finds names in a map
// rather than by a scan of names.
const typeMapFrom = 16

// countType counts one message of type t and returns its class and its
// index in names; the class is classRefused, and nothing is counted, when
// t is new and the run already has MaxTypes types.
func (s *Sim) countType(t string) (msgClass, uint16) {
	c := &s.typeCache[typeSlotOf(t)]
	id := c.id1 - 1
	if c.id1 == 0 || c.data != unsafe.StringData(t) || c.len != len(t) {
		var ok bool
		if id, ok = s.typeIndex(t); !ok {
			return classRefused, 0
		}
		*c = typeSlot{data: unsafe.StringData(t), len: len(t), id1: id + 1}
	}
	st := &s.types[id]
	st.count++
	return st.class, id
}

// typeIndex is the index of the type named t in names, added with its
// class when it is new; ok is false when it is new and there is no room.
func (s *Sim) typeIndex(t string) (uint16, bool) {
	if s.typeIDs != nil {
		if id, found := s.typeIDs[t]; found {
			return id, true
		}
	} else {
		for i, name := range s.names {
			if name == t {
				return uint16(i), true
			}
		}
	}
	if len(s.names) >= MaxTypes {
		return 0, false
	}
	c := classMaintenance
	switch {
	case s.alg.IsElection(t):
		c = classElection
	case s.alg.IsAnnounce(t):
		c = classAnnounce
	}
	id := uint16(len(s.names))
	s.names = append(s.names, t)
	s.types = append(s.types, typeStat{class: c})
	switch {
	case s.typeIDs != nil:
		s.typeIDs[t] = id
	case len(s.names) == typeMapFrom:
		// A table this big is a program's making types up: a scan of
		// it per message would make a run quadratic in its types.
		s.typeIDs = make(map[string]uint16, 2*typeMapFrom)
		for i, name := range s.names {
			s.typeIDs[name] = uint16(i)
		}
	}
	return id, true
}

// refuseType is a message of a new type t that the run has no room for
// (MaxTypes): it is not sent. A machine that can fail by itself (a
// program, election.Crasher) has broken the protocol and crashes, as a
// program that wrote a bad answer does (checkCrashed); in any other
// machine it is a bug, which the run reports through Err.
func (s *Sim) refuseType(from *node, t string) {
	err := fmt.Errorf("node %d sent a message of type %q, more than the %d distinct message types one run can hold (sim.MaxTypes)", from.id, bounded(t), MaxTypes)
	if !from.crasher {
		if s.sinkErr == nil {
			s.sinkErr = fmt.Errorf("sim: %w", err)
		}
		return
	}
	if x := from.ext(); x.refused == nil {
		x.refused = err
	}
}

// bounded is t cut to a length an error message can quote.
func bounded(t string) string {
	const most = 64
	if len(t) <= most {
		return t
	}
	return t[:most] + "…"
}

// dropTypes empties the type table once it holds more names than a Reset
// keeps (typesKeptByReset).
func (s *Sim) dropTypes() {
	if len(s.names) <= typesKeptByReset {
		return
	}
	s.names, s.types, s.typeIDs = s.names[:0], s.types[:0], nil
	clear(s.typeCache[:])
}

// lookupIndex finds a member's node index.
func (s *Sim) lookupIndex(id election.NodeID) (int32, bool) {
	i := s.ring.Index(id)
	return int32(i), i >= 0
}

// recipient finds the node index of to, a message's recipient from node
// index fi. A ring's messages go to a neighbour: its node, which the
// delivery will load anyway, is read next to the sender's, rather than
// the ID table, where a random ring's next ID is anywhere. A small
// cluster (one with the dense link tables) goes to its ID table at once:
// it is a few words, always in the cache, and most of its messages are
// not to a neighbour.
func (s *Sim) recipient(fi int32, to election.NodeID) (int32, bool) {
	if s.cutDense != nil {
		return s.lookupIndex(to)
	}
	if next := int(fi) + 1; next < len(s.nodes) && s.nodes[next].id == to {
		return int32(next), true
	}
	if prev := int(fi) - 1; prev >= 0 && s.nodes[prev].id == to {
		return int32(prev), true
	}
	return s.lookupIndex(to)
}

// step feeds one event to n's machine and carries out its effects in order.
func (s *Sim) step(n *node, ev election.Event) {
	ev.Now = s.nodeNow(n)
	s.carryOut(n, n.m.Step(ev))
}

// nodeNow is the time on n's clock, Event.Now of what it handles now.
func (s *Sim) nodeNow(n *node) time.Duration {
	if n.skewed {
		return n.x.clk.Read(s.now)
	}
	return s.now
}

// carryOut carries out, in order, the effects n's machine returned from
// one step.
func (s *Sim) carryOut(n *node, effects []election.Effect) {
	for i := range effects {
		e := &effects[i] // by pointer: an Effect is a couple of hundred bytes
		switch e.Kind {
		case election.EffectSend:
			s.send(n, &e.Msg) // the effect is the simulator's own (Reuse)
		case election.EffectBroadcast:
			s.broadcast(n, &e.Msg)
		case election.EffectSetTimer:
			// The skewed case is a call of its own: the common one
			// stays inline in this loop.
			if n.skewed {
				s.setSkewedTimer(n, e.Timer, e.After)
			} else {
				s.armTimer(n, e.Timer, s.now+e.After, s.now+e.After)
			}
		case election.EffectCancelTimer:
			s.armed[n.idx].disarm(e.Timer)
		case election.EffectView:
			// Every view effect is recorded, repeats included:
			// the history is what the machine said.
			s.setView(n, e.View)
			s.stateChanged = true
			s.lastActivity = s.now
			if s.sink != nil {
				r := s.nodeRecord(n, history.KindView)
				r.View = s.keepView(e.View)
				s.emit(r)
			}
		case election.EffectPersist:
			// A blob over the bound is the machine's bug: the node keeps
			// its previous state, as a node whose disk refused the
			// write, and the run reports it through Err.
			d := e.Persisted()
			if err := d.CheckSize(); err != nil {
				if s.sinkErr == nil {
					s.sinkErr = fmt.Errorf("sim: node %d: persist refused: %w", n.id, err)
				}
				continue
			}
			n.ext().durable = d.Clone()
		}
	}
	if n.crasher { // only a program can fail by itself
		s.checkCrashed(n)
	}
}

// broadcast sends m, which is the simulator's own (Reuse), to every
// member but from. The members are the nodes in order, so each recipient's
// index is known without a lookup; and m itself goes out, its To set for
// each, unless it holds slices that each copy must have to itself.
func (s *Sim) broadcast(from *node, m *election.Message) {
	refs := m.Members != nil || m.Payload != nil
	for i, to := range s.opts.Members {
		if to == from.id {
			continue
		}
		m.To = to
		if refs {
			c := m.Clone()
			s.sendTo(from, &c, int32(i))
			continue
		}
		s.sendTo(from, m, int32(i))
	}
}

// send puts one message on the wire. The sender is the runtime's to name,
// as a NATS subject is, so From is always the real sender (send sets it
// in m, which is the caller's to give away).
func (s *Sim) send(from *node, m *election.Message) {
	ti, ok := s.recipient(from.idx, m.To)
	if !ok {
		ti = -1
	}
	s.sendTo(from, m, ti)
}

// sendTo is send to the node at index ti (m.To's), or to nobody when ti
// is −1: m.To is not a member.
func (s *Sim) sendTo(from *node, m *election.Message, ti int32) {
	if s.maxSent > 0 && s.counts.Total() >= s.maxSent {
		s.overCap = true
		return
	}
	if s.tick() {
		// Past the memory budget: one step can send a message to
		// every node (n² at a Bully start), so sends count too.
		return
	}
	m.From = from.id
	class, typ := s.countType(m.Type)
	switch class {
	case classElection:
		s.counts.Election++
	case classAnnounce:
		s.counts.Announce++
	case classRefused:
		s.refuseType(from, m.Type)
		return
	default:
		s.counts.Maintenance++
	}
	if s.sink != nil && !s.opts.OmitMessages {
		r := s.nodeRecord(from, history.KindSend)
		c := m.Clone()
		r.Msg = &c
		s.emit(r)
	}
	if ti < 0 {
		s.counts.Lost++
		return
	}
	// The recipient's own loss and delay are looked at only once some
	// node has had any: a million-node ring need not touch the
	// recipient's memory twice per message.
	var to *node
	p := s.opts.Loss
	if s.perNode {
		to = &s.nodes[ti]
		p = max(p, from.ext().loss, to.ext().loss)
	}
	if p > 0 && s.net.Float64() < p {
		s.counts.Lost++
		return
	}
	if s.isCut(from.idx, ti) {
		s.counts.Lost++
		return
	}
	d := s.opts.Delay.samplePCG(s.netSrc, s.net) // s.net is over s.netSrc
	if s.perNode {
		d += s.extraDelay(from) + s.extraDelay(to)
	}
	at := s.now + d
	fi := from.idx
	if s.trackFIFO {
		if s.linkLastDense != nil {
			l := int(fi)*len(s.nodes) + int(ti)
			at = max(at, s.linkLastDense[l]) // FIFO: never overtake the previous message on this link
			s.linkLastDense[l] = at
		} else {
			link := uint64(fi)<<32 | uint64(ti)
			if last, ok := s.linkLast[link]; ok && last > at {
				at = last // FIFO: never overtake the previous message on this link
			}
			s.linkLast[link] = at
		}
	}
	counted := class != classMaintenance
	if counted {
		s.inflight++
		s.lastActivity = s.now
	}
	s.seq++
	e := s.queue.placeLane(at, s.seq)
	e.kind, e.node, e.from, e.counted = evDeliver, ti, fi, counted
	s.pack(&e.msg, m, typ)
}

// isCut reports whether the link from node index fi to ti is cut.
func (s *Sim) isCut(fi, ti int32) bool {
	if len(s.state.Cut) == 0 {
		return false
	}
	if s.cutDense != nil {
		return s.cutDense[int(fi)*len(s.nodes)+int(ti)]
	}
	return s.state.Cut[[2]election.NodeID{s.nodes[fi].id, s.nodes[ti].id}]
}

// extraDelay is what a delay fault on n adds to one message: uniform in
// [delay − jitter, delay + jitter], never below zero — the meaning the
// container backend's delay reader gives it too (chaos.DelayJitter).
func (s *Sim) extraDelay(n *node) time.Duration {
	x := n.ext()
	if x.delay == 0 && x.jitter == 0 {
		return 0
	}
	d := x.delay
	if x.jitter > 0 {
		d += time.Duration(s.net.Int64N(2*int64(x.jitter)+1)) - x.jitter
	}
	return max(d, 0)
}

// keepView is a copy of v for a history record to point to. Copies are
// carved from blocks of views that are never reused, so a record keeps its
// view however long a sink keeps the record: one allocation per 64 view
// records rather than one each (a view record was the simulator's most
// frequent allocation in the explorer).
func (s *Sim) keepView(v election.View) *election.View {
	if len(s.viewBlock) == cap(s.viewBlock) {
		s.viewBlock = make([]election.View, 0, 64)
	}
	s.viewBlock = append(s.viewBlock, v)
	return &s.viewBlock[len(s.viewBlock)-1]
}

func (s *Sim) nodeRecord(n *node, kind history.Kind) history.Record {
	n.seq++
	return history.Record{Time: history.SimOrigin.Add(s.now), Process: "node", Kind: kind, Node: n.id, Boot: n.bootID(), Seq: n.seq}
}

func (s *Sim) emit(r history.Record) {
	if err := s.sink.Append(r); err != nil && s.sinkErr == nil {
		s.sinkErr = err
	}
}

func idsString(ids []election.NodeID) string { return string(election.AppendIDs(nil, ids)) }

// warmFrom is the cluster size from which process asks for the lines the
// next messages will need (warmAhead): below it a cluster's nodes and
// machines stay in the cache, and asking costs more than it saves.
var warmFrom = 1 << 14 // a variable only for TestWarmingAheadChangesNothing

// The distances, in events on the lane, at which warmAhead asks for a
// node's line and then, once that has arrived, for its machine's.
const (
	warmNode    = 16
	warmMachine = 8
)

// warmAhead asks the processor for the nodes of the message warmNode
// events ahead on the lane (its receiver, its sender, whose ID unpack
// reads, and the node after the receiver, which recipient looks at first),
// and for the machine of the one warmMachine ahead, whose node it asked
// for earlier. Nothing is read but the queue and a node already asked
// for; nothing is written.
func (s *Sim) warmAhead() {
	q := &s.queue
	if i := q.head + warmNode; i < len(q.lane) {
		e := &q.lane[i]
		prefetch.Line(unsafe.Pointer(&s.nodes[e.node]))
		prefetch.Line(unsafe.Pointer(&s.nodes[e.from]))
		if next := int(e.node) + 1; next < len(s.nodes) {
			prefetch.Line(unsafe.Pointer(&s.nodes[next]))
		}
	}
	if i := q.head + warmMachine; i < len(q.lane) {
		if m := machineData(s.nodes[q.lane[i].node].m); m != nil {
			// Three lines: a ring machine is 192 bytes (Peterson's
			// is; prefetching past a smaller one costs nothing).
			prefetch.Line(m)
			prefetch.Line(unsafe.Add(m, 64))
			prefetch.Line(unsafe.Add(m, 128))
		}
	}
}

// machineData is where the machine behind m is in memory: the data word
// of the interface (every machine is a pointer to its struct), or nil.
func machineData(m election.Machine) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&m))[1]
}
