// Package ringnet is the machinery every ring election shares, so that each
// algorithm package holds only the algorithm from its paper:
//
//   - forwarding to the next live node on the ring: every ring hop carries a
//     sequence number and is acknowledged (ACK); a hop not acknowledged within
//     Timing.Answer marks that node dead for the current epoch and the message
//     goes on to the node after it, so a crashed node leaves no hole;
//   - a leader-heartbeat failure detector: the leader broadcasts HEARTBEAT
//     every Timing.Heartbeat, a follower that hears none for
//     Timing.Suspicion (or gets a peer-down hint for its leader) starts an
//     election in the next epoch;
//   - epochs: every message carries one, older ones are dropped, a newer one
//     moves the node into that election;
//   - the announcement that circulates once around the ring;
//   - views, emitted only when they change.
//
// The Core is a pure state machine like the algorithms that embed it: no
// goroutines, clock or I/O; timers are effects.
package ringnet

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Message types the core owns. Both are maintenance: they are never counted
// as election or announcement messages.
const (
	TypeHeartbeat = "HEARTBEAT"
	TypeAck       = "ACK"
	// TypePing asks a node whether it is alive; its ACK is the answer
	// (see Options.Watch). Maintenance, like the other two.
	TypePing = "PING"
)

// Timer names the core owns. Algorithms may use any other name; the core
// hands those to Algorithm.Timer.
const (
	TimerSuspect   = "suspect"
	TimerHeartbeat = "heartbeat"
	TimerWatch     = "watch"
	ackPrefix      = "ack/"
)

// Algorithm is the part of a ring election that differs between papers. The
// core calls it; it calls the core's Forward, Announce and Decide.
type Algorithm interface {
	// Reset forgets all per-election state; the core calls it whenever the
	// epoch changes.
	Reset()
	// Initiate starts this node's part in the election of the core's
	// current epoch (the node suspects the leader, or every node starts).
	Initiate()
	// Handle processes an algorithm message of the current epoch.
	Handle(m election.Message)
	// Timer is called for timers the core does not own.
	Timer(name string)
}

// Options configure a Core.
type Options struct {
	// Announce is the message type of the announcement that circulates
	// once after a decision (COORDINATOR, ELECTED). Empty: the algorithm
	// needs none.
	Announce string
	// ElectionHops is the longest chain of sequential hops a fault-free
	// election of this algorithm needs, announcement included. A node
	// that stays undecided for Suspicion + ElectionHops·Answer/4 starts
	// the next epoch: the election's message was lost with a crashed or
	// paused node. A quarter of Answer per hop is generous (Answer bounds
	// a round trip, and hops in the simulator and on NATS take
	// milliseconds) yet keeps a stalled election inside the liveness
	// bound for small rings.
	ElectionHops int
	// Watch makes an undecided node watch the ring every Timing.Answer
	// and start the next epoch as soon as it learns that the ring
	// changed under the running election, instead of waiting for the
	// election timeout (which for HS and Peterson grows with n past the
	// checkers' liveness bound):
	//   - a node it marked dead in this epoch is alive: it sends
	//     anything, or answers the PING sent to every node marked dead.
	//     The marks a partition or a lost message left no longer match
	//     the ring, and the skipped node may hold state the algorithm
	//     needs (HS replies retrace their probes; Peterson's active
	//     nodes wait for their predecessor's two values);
	//   - a neighbour that took part in this epoch (it was heard from)
	//     stops answering: it crashed after its last hop, and whatever
	//     only it would have sent will never come.
	// A fault-free election marks nobody dead and loses nobody, so it
	// never restarts; it sends PINGs (maintenance) only to a neighbour
	// it has not heard from for a whole Timing.Answer.
	Watch bool
	// ElectionTimeout, when set, replaces the ElectionHops rule (the
	// variable-time ring waits whole slots, not hops).
	ElectionTimeout time.Duration
}

// HopTime is the time budget per sequential hop of an election.
func HopTime(t election.Timing) time.Duration { return t.WithDefaults().Answer / 4 }

type hop struct {
	to  election.NodeID
	dir election.Dir
	msg election.Message
	// heard: something arrived from to since the hop was last sent, so
	// to is alive and the message or its ACK was lost on the way.
	heard bool
	// resent counts the times the hop went to the same node again.
	resent int
	// ping: the hop is a watch PING (see Options.Watch), not a message
	// to pass on.
	ping bool
}

// maxResend bounds how often a hop goes again to a successor that is
// alive but did not acknowledge it (a one-way cut lets its messages reach
// us and ours never reach it): after that the successor is skipped.
const maxResend = 3

// fingerprint identifies a hop's content, so that a resent hop that had
// arrived the first time (only its ACK was lost) is recognised and not
// handled twice.
type fingerprint struct {
	typ       string
	candidate election.NodeID
	phase     int32
	hop       int32
	dir       election.Dir
	reply     bool
	members   int
}

func fingerprintOf(m election.Message) fingerprint {
	return fingerprint{m.Type, m.Candidate, m.Phase, m.Hop, m.Dir, m.Reply, len(m.Members)}
}

// Core is the shared ring machinery. Algorithms embed a Core (by value,
// copied from NewCore's result before the first Step: a million-node ring
// then touches one object per node and message, not two) and implement
// Algorithm; the machine's Step and View are the core's.
type Core struct {
	// sh is what every core of the cluster holds alike: one copy, not a
	// million (a core was 416 bytes, 184 of them its own Config).
	sh  *shared
	alg Algorithm
	id  election.NodeID
	// next is the clockwise neighbour, where every hop of a one-way ring
	// goes while nobody is marked dead: read here, in a line the step
	// has loaded already, rather than in the member list, where a
	// million-node ring's next position is a cache miss of its own.
	next election.NodeID

	epoch  uint64
	leader election.NodeID
	role   election.Role
	shown  election.View // last view emitted

	seq uint64
	// f is the failure detector's and the hops' bookkeeping, made when
	// first written: a fault-free election never writes it, and a
	// million cores each holding five map headers and a list add up.
	f *ledger

	announced bool // this node sent the current epoch's announcement
	// challenging: this node started the current epoch because it
	// learned of a leader with a lower ID than its own.
	challenging bool
	// sent: this node has sent a message of the current epoch's election.
	sent      bool
	coordSeen bool // this node has passed the current epoch's announcement on
	// pos is this node's index in the members; 32 bits, beside the
	// flags, keep a core in fewer cache lines.
	pos int32

	out []election.Effect
}

// ledger is what a core keeps about hops and peers beyond the election's
// own state (Core.f).
type ledger struct {
	dead    map[election.NodeID]bool
	pending map[uint64]hop
	// got holds the hops of the current epoch already handled, by sender
	// and sequence number: a hop resent because its ACK was lost is
	// acknowledged again and otherwise ignored.
	got map[election.NodeID]map[uint64]fingerprint
	// alive: nodes heard from in the current epoch; recent: since the
	// last watch (Options.Watch).
	alive, recent map[election.NodeID]bool
	local         []election.Message // messages a node sends itself when it is the only live node
}

// ledger is c's ledger, made on first use.
func (c *Core) ledger() *ledger {
	if c.f == nil {
		c.f = &ledger{}
	}
	return c.f
}

// dead reports whether id is marked dead in this epoch.
func (c *Core) dead(id election.NodeID) bool { return c.f != nil && c.f.dead[id] }

// pending is the hop waiting for the ACK of seq.
func (c *Core) pending(seq uint64) (hop, bool) {
	if c.f == nil {
		return hop{}, false
	}
	h, ok := c.f.pending[seq]
	return h, ok
}

// shared is the part of a core's configuration that every node of a
// cluster has alike, kept once per Membership (election.Membership.Shared).
type shared struct {
	sharedKey
	ring    *election.Membership
	members []election.NodeID
}

// sharedKey is what shared is made from.
type sharedKey struct {
	timing    election.Timing
	opts      Options
	faultFree bool
	effects   *election.EffectBuffer
}

// NewCore validates cfg and builds the shared part of a ring machine.
func NewCore(cfg election.Config, opts Options, alg Algorithm) (*Core, error) {
	cfg.Timing = cfg.Timing.WithDefaults()
	// The member list and its lookups are shared (cfg.Membership), never
	// copied: a simulated ring of a million nodes holds one.
	cfg, err := cfg.WithRing()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.ElectionTimeout <= 0 {
		opts.ElectionTimeout = cfg.Timing.Suspicion + time.Duration(max(opts.ElectionHops, 1))*HopTime(cfg.Timing)
	}
	key := sharedKey{timing: cfg.Timing, opts: opts, faultFree: cfg.FaultFree, effects: cfg.Effects}
	ring := cfg.Membership
	sh := ring.Shared(key, func() any { return &shared{sharedKey: key, ring: ring, members: ring.Members()} }).(*shared)
	pos := ring.Index(cfg.ID)
	return &Core{sh: sh, alg: alg, id: cfg.ID, next: sh.members[(pos+1)%len(sh.members)], pos: int32(pos)}, nil
}

// Membership is the ring's membership, shared by every node.
func (c *Core) Membership() *election.Membership { return c.sh.ring }

// FaultFree reports whether the runtime promised a run in which nothing
// fails (election.Config.FaultFree): guards against what only faults can
// cause may then be skipped.
func (c *Core) FaultFree() bool { return c.sh.faultFree }

// ID is this node's ID.
func (c *Core) ID() election.NodeID { return c.id }

// N is the configured ring size.
func (c *Core) N() int { return len(c.sh.members) }

// Epoch is the current epoch.
func (c *Core) Epoch() uint64 { return c.epoch }

// Leader is the leader of the current epoch, None while undecided.
func (c *Core) Leader() election.NodeID { return c.leader }

// Decided reports whether this node knows the current epoch's leader.
func (c *Core) Decided() bool { return c.role == election.Leader || c.role == election.Follower }

// View is the node's current view.
func (c *Core) View() election.View {
	return election.View{Leader: c.leader, Epoch: c.epoch, Role: c.role}
}

// Step feeds one event to the node.
func (c *Core) Step(ev election.Event) []election.Effect {
	c.out = c.sh.effects.Begin()
	switch ev.Kind {
	case election.EventStart:
		c.start()
	case election.EventReceive:
		c.receive(ev.Msg)
	case election.EventTimer:
		c.timer(ev.Timer)
	case election.EventPeerDown:
		if ev.Peer == c.leader && c.role == election.Follower {
			c.StartElection()
		}
	}
	for c.f != nil && len(c.f.local) > 0 {
		m := c.f.local[0]
		c.f.local = c.f.local[1:]
		c.receive(m)
	}
	if v := c.View(); v != c.shown {
		c.shown = v
		c.out = append(c.out, election.Effect{Kind: election.EffectView, View: v})
	}
	out := c.sh.effects.End(c.out)
	c.out = nil
	return out
}

// start is a first start or a restart: the state is fresh. The node does not
// elect at once: a restarted node cannot know the current epoch, and an
// election in a stale epoch would be dropped (or, worse, mixed into the
// finished one). It waits one suspicion timeout for a heartbeat that tells
// it the epoch and the leader; on a first start no heartbeat comes and every
// node starts the election together when the timeout fires.
func (c *Core) start() {
	c.epoch, c.leader, c.role = 0, election.None, election.Undecided
	// The maps are made when first written: a fault-free election of a
	// million nodes marks nobody dead, and a read of a nil map touches
	// no memory.
	c.f = nil
	c.seq = 0
	c.announced, c.coordSeen = false, false
	c.alg.Reset()
	c.setTimer(TimerSuspect, c.sh.timing.Suspicion)
}

// StartElection moves to the next epoch and initiates an election in it.
func (c *Core) StartElection() {
	c.enter(election.NextEpoch(c.epoch))
	c.alg.Initiate()
}

// challenge starts an election because a leader with a lower ID than this
// node's leads: this node is higher than the best the others found.
func (c *Core) challenge() {
	c.enter(election.NextEpoch(c.epoch))
	c.challenging = true
	c.alg.Initiate()
}

// Challenging reports whether this node started the current epoch's
// election because it learned of a leader with a lower ID than its own.
func (c *Core) Challenging() bool { return c.challenging }

// enter moves the node into epoch e as an undecided candidate.
func (c *Core) enter(e uint64) {
	c.newEpoch(e)
	c.leader, c.role = election.None, election.Candidate
	c.setTimer(TimerSuspect, c.sh.opts.ElectionTimeout)
	if c.sh.opts.Watch && !c.sh.faultFree {
		c.setTimer(TimerWatch, c.sh.timing.Answer)
	}
}

func (c *Core) newEpoch(e uint64) {
	if c.role == election.Leader {
		c.cancelTimer(TimerHeartbeat)
	}
	c.epoch = e
	// A node found dead in an earlier epoch may have restarted: every
	// election probes the ring afresh.
	if f := c.f; f != nil {
		clear(f.dead)
		for seq := range f.pending {
			c.cancelTimer(ackName(seq))
		}
		clear(f.pending)
		f.got = nil
		clear(f.alive)
		clear(f.recent)
	}
	c.announced, c.coordSeen, c.challenging, c.sent = false, false, false, false
	c.alg.Reset()
}

func (c *Core) receive(m election.Message) {
	epoch := c.epoch
	revived := c.sh.opts.Watch && m.From != c.id && c.dead(m.From)
	c.deliver(m)
	if revived && c.epoch == epoch && c.role == election.Candidate {
		// A node this one skipped as dead is alive: see Options.Watch.
		c.StartElection()
	}
}

func (c *Core) deliver(m election.Message) {
	if m.Type == TypeAck {
		// An ACK names the hop by sequence number and epoch: a node
		// that restarted numbers its hops from 1 again, and an ACK of
		// a hop its previous boot sent (delivered late, after a pause
		// or a partition) must not pass for one of the new hop's.
		if p, ok := c.pending(m.Seq); ok && p.to == m.From && p.msg.Epoch == m.Epoch {
			delete(c.f.pending, m.Seq)
			c.cancelTimer(ackName(m.Seq))
		}
		c.heardFrom(m.From)
		return
	}
	if m.From != c.id {
		c.heardFrom(m.From)
		if m.Seq != 0 {
			// Acknowledge every hop, stale ones too: the ACK says "this
			// node is alive", not "I agree".
			c.out = append(c.out, election.Effect{Kind: election.EffectSend, Msg: election.Message{
				Type: TypeAck, From: c.id, To: m.From, Epoch: m.Epoch, Seq: m.Seq,
			}})
		}
	}
	if m.Type == TypePing {
		return // the ACK was the answer
	}
	if m.Type == TypeHeartbeat {
		c.heartbeat(m)
		return
	}
	if m.Epoch < c.epoch {
		return // stale: from an election this node has left behind
	}
	if m.Epoch > c.epoch {
		c.enter(m.Epoch)
	}
	if m.Seq != 0 && m.From != c.id && c.duplicate(m) {
		return
	}
	if c.sh.opts.Announce != "" && m.Type == c.sh.opts.Announce {
		c.announcement(m)
		return
	}
	c.alg.Handle(m)
}

// heardFrom forgives a node marked dead and notes, for every hop still
// waiting for its ACK, that it is alive.
func (c *Core) heardFrom(id election.NodeID) {
	if c.sh.faultFree {
		return // nobody is marked dead, no hop waits, nothing is watched
	}
	f := c.ledger()
	delete(f.dead, id)
	if f.alive == nil {
		f.alive, f.recent = map[election.NodeID]bool{}, map[election.NodeID]bool{}
	}
	f.alive[id], f.recent[id] = true, true
	for seq, p := range f.pending {
		if p.to == id && !p.heard {
			p.heard = true
			f.pending[seq] = p
		}
	}
}

// duplicate records a hop of the current epoch and reports whether the same
// hop was handled already.
func (c *Core) duplicate(m election.Message) bool {
	fp := fingerprintOf(m)
	f := c.ledger()
	if f.got == nil {
		f.got = map[election.NodeID]map[uint64]fingerprint{}
	}
	from := f.got[m.From]
	if from == nil {
		from = map[uint64]fingerprint{}
		f.got[m.From] = from
	}
	if g, ok := from[m.Seq]; ok && g == fp {
		return true
	}
	from[m.Seq] = fp
	return false
}

// heartbeat handles a leader's HEARTBEAT. A leader with a lower ID than this
// node's is not the highest live ID: this node calls an election above that
// leader's epoch (this is how a restarted or reconnected higher node takes
// over, as in the Bully algorithm, and how a node that an election skipped
// by mistake gets back in).
func (c *Core) heartbeat(m election.Message) {
	l, e := m.From, m.Epoch
	if e < c.epoch {
		if c.role == election.Candidate && !c.sent && l > c.id {
			// This node suspected a leader that is alive (it was cut
			// off, say) and its election has reached nobody yet — the
			// variable-time ring waits silently for its slot. Nobody
			// else knows the newer epoch: go back to the leader.
			c.newEpoch(e)
			c.follow(l)
		}
		return
	}
	if l < c.id {
		c.epoch = e
		c.challenge()
		return
	}
	if l == c.leader && e == c.epoch {
		if c.role == election.Follower {
			c.setTimer(TimerSuspect, c.sh.timing.Suspicion)
		}
		return
	}
	if e == c.epoch && c.leader > l {
		return // a higher leader is already known in this epoch
	}
	if e > c.epoch {
		c.newEpoch(e)
	}
	c.follow(l)
}

func (c *Core) announcement(m election.Message) {
	if c.announced || c.coordSeen {
		return // back at the sender, or seen already: it has gone round once
	}
	if m.Candidate < c.id {
		// This node was skipped (a lost acknowledgement made its
		// predecessor think it dead): the announced leader is not the
		// highest live ID. Challenge it at once.
		c.challenge()
		return
	}
	c.coordSeen = true
	fwd := election.Message{Type: c.sh.opts.Announce, Candidate: m.Candidate, Members: m.Members}
	if m.Hop == announceAhead && m.Candidate != c.id {
		c.await(m.Candidate)
		fwd.Hop = announceAhead
	} else {
		c.Decide(m.Candidate)
	}
	c.Forward(election.Clockwise, fwd)
}

// announceAhead, in an announcement's Hop, says that the leader it names
// is still ahead on the ring: the announcer is not the leader (Peterson's
// last active node holds the highest ID, it is not its owner), and the
// announcement has not reached the leader yet. Zero, as when the leader
// announces itself, says the leader has it and is heartbeating.
const announceAhead = 1

// Announce decides leader and sends the announcement clockwise; it goes
// round the ring once and stops when it is back here.
func (c *Core) Announce(leader election.NodeID, members []election.NodeID) {
	c.announced = true
	m := election.Message{Type: c.sh.opts.Announce, Candidate: leader, Members: members}
	if leader != c.id && c.sh.opts.Announce != "" {
		c.await(leader)
		m.Hop = announceAhead
	} else {
		c.Decide(leader)
	}
	if c.sh.opts.Announce != "" {
		c.Forward(election.Clockwise, m)
	}
}

// Decide ends this node's election: it leads if leader is its own ID and
// follows leader otherwise.
func (c *Core) Decide(leader election.NodeID) {
	if leader == c.id {
		c.leader, c.role = leader, election.Leader
		c.cancelTimer(TimerSuspect)
		if !c.sh.faultFree { // nothing fails: no failure detector to feed
			c.setTimer(TimerHeartbeat, c.sh.timing.Heartbeat)
		}
		return
	}
	c.follow(leader)
}

func (c *Core) follow(l election.NodeID) { c.followFor(l, c.sh.timing.Suspicion) }

// await follows l, a leader that learns it leads only when the
// announcement, which this node is passing on, reaches it. Its first
// heartbeat comes one Heartbeat after that, so the suspicion timeout is
// extended by the announcement's way to l: HopTime per ring position from
// here to l. Without it a follower far enough before the leader suspects
// the leader as it takes office, on every election (Peterson at n ≥ 400
// with 1 ms hops and default timing).
func (c *Core) await(l election.NodeID) {
	c.followFor(l, c.sh.timing.Suspicion+time.Duration(c.distance(l))*HopTime(c.sh.timing))
}

// distance is the number of clockwise ring positions from this node to id
// (dead or alive), 0 for this node or an unknown ID.
func (c *Core) distance(id election.NodeID) int {
	i := c.sh.ring.Index(id)
	if i < 0 {
		return 0
	}
	n := len(c.sh.members)
	return (i - int(c.pos) + n) % n
}

func (c *Core) followFor(l election.NodeID, suspicion time.Duration) {
	if c.role == election.Leader {
		c.cancelTimer(TimerHeartbeat)
	}
	c.leader, c.role = l, election.Follower
	if c.sh.faultFree {
		c.cancelTimer(TimerSuspect) // nothing fails: nobody to suspect
		return
	}
	c.setTimer(TimerSuspect, suspicion)
}

func (c *Core) timer(name string) {
	switch {
	case name == TimerSuspect:
		if c.role != election.Leader {
			c.StartElection()
		}
	case name == TimerHeartbeat:
		if c.role == election.Leader {
			c.out = append(c.out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{
				Type: TypeHeartbeat, From: c.id, Epoch: c.epoch, Candidate: c.id,
			}})
			c.setTimer(TimerHeartbeat, c.sh.timing.Heartbeat)
		}
	case name == TimerWatch:
		c.watch()
	case strings.HasPrefix(name, ackPrefix):
		seq, err := strconv.ParseUint(name[len(ackPrefix):], 10, 64)
		if err != nil {
			return
		}
		p, ok := c.pending(seq)
		if !ok {
			return
		}
		if p.ping {
			delete(c.f.pending, seq)
			if !p.heard && p.msg.Epoch == c.epoch && c.role == election.Candidate {
				// A neighbour that took part in this epoch is gone:
				// see Options.Watch.
				c.markDead(p.to)
				c.StartElection()
			}
			return
		}
		if p.heard && p.resent < maxResend && p.msg.Epoch == c.epoch {
			// The successor is alive (it has sent something since):
			// the hop or its ACK was lost. Send it again, to the
			// same node, with the same sequence number.
			p.heard = false
			p.resent++
			c.f.pending[seq] = p
			c.out = append(c.out,
				election.Effect{Kind: election.EffectSend, Msg: p.msg.Clone()},
				election.Effect{Kind: election.EffectSetTimer, Timer: name, After: c.sh.timing.Answer},
			)
			return
		}
		delete(c.f.pending, seq)
		// The successor did not acknowledge in time: treat it as dead
		// for this epoch and hand the message to the node after it.
		c.markDead(p.to)
		if p.msg.Epoch == c.epoch {
			c.Forward(p.dir, p.msg)
		}
	default:
		c.alg.Timer(name)
	}
}

// watch runs every Timing.Answer while the node is undecided (see
// Options.Watch). It asks every node marked dead whether it is alive again
// (an answer starts the next epoch, in receive), and each neighbour that
// took part in this epoch but has been silent since the last watch whether
// it is still there (no answer starts the next epoch, in timer).
func (c *Core) watch() {
	if c.role != election.Candidate {
		return
	}
	f := c.ledger()
	if len(f.dead) > 0 {
		// In ring order, as the members are listed; the dead are few,
		// the members may be a million.
		dead := make([]election.NodeID, 0, len(f.dead))
		for id, d := range f.dead {
			if d {
				dead = append(dead, id)
			}
		}
		slices.SortFunc(dead, func(a, b election.NodeID) int { return c.sh.ring.Index(a) - c.sh.ring.Index(b) })
		for _, id := range dead {
			c.ping(id, false)
		}
	}
	watched := map[election.NodeID]bool{}
	for _, p := range f.pending {
		if p.ping {
			watched[p.to] = true
		}
	}
	for _, d := range []election.Dir{election.Clockwise, election.CounterClockwise} {
		if id := c.NextLive(d); id != c.id && f.alive[id] && !f.recent[id] && !watched[id] {
			watched[id] = true
			c.ping(id, true)
		}
	}
	clear(f.recent)
	c.setTimer(TimerWatch, c.sh.timing.Answer)
}

// ping sends a PING to id; answered tells whether an unanswered one starts
// the next epoch.
func (c *Core) ping(id election.NodeID, answered bool) {
	c.seq++
	m := election.Message{Type: TypePing, From: c.id, To: id, Epoch: c.epoch, Seq: c.seq}
	c.out = append(c.out, election.Effect{Kind: election.EffectSend, Msg: m})
	if answered {
		c.waitAck(c.seq, hop{to: id, msg: m, ping: true})
		c.out = append(c.out, election.Effect{Kind: election.EffectSetTimer, Timer: ackName(c.seq), After: c.sh.timing.Answer})
	}
}

// NextLive is the first node in direction dir from this one that is not
// known dead; this node's own ID when every other node is.
func (c *Core) NextLive(dir election.Dir) election.NodeID {
	if dir == election.Clockwise && (c.f == nil || len(c.f.dead) == 0) {
		return c.next // the node itself when it is the only member
	}
	n := len(c.sh.members)
	step := 1
	if dir == election.CounterClockwise {
		step = n - 1
	}
	for i, k := (int(c.pos)+step)%n, 1; k < n; i, k = (i+step)%n, k+1 {
		if id := c.sh.members[i]; !c.dead(id) {
			return id
		}
	}
	return c.id
}

// Skips reports whether this node, sending in direction dir, would pass id
// by as dead: id is marked dead and lies before the next live node.
func (c *Core) Skips(dir election.Dir, id election.NodeID) bool {
	if !c.dead(id) {
		return false
	}
	n := len(c.sh.members)
	step := 1
	if dir == election.CounterClockwise {
		step = n - 1
	}
	for i, k := (int(c.pos)+step)%n, 1; k < n; i, k = (i+step)%n, k+1 {
		switch m := c.sh.members[i]; {
		case m == id:
			return true
		case !c.dead(m):
			return false
		}
	}
	return false
}

func (c *Core) markDead(id election.NodeID) {
	f := c.ledger()
	if f.dead == nil {
		f.dead = map[election.NodeID]bool{}
	}
	f.dead[id] = true
}

// waitAck notes a hop that waits for its acknowledgement.
func (c *Core) waitAck(seq uint64, h hop) {
	f := c.ledger()
	if f.pending == nil {
		f.pending = map[uint64]hop{}
	}
	f.pending[seq] = h
}

// Forgive clears a dead mark: the next hop towards id goes to id itself
// (and marks it dead again if it does not answer).
func (c *Core) Forgive(id election.NodeID) {
	if c.f != nil {
		delete(c.f.dead, id)
	}
}

// Forward sends m one hop in direction dir to the next live node, in the
// current epoch, with a per-hop acknowledgement (none when
// Config.FaultFree promises that nothing fails). When no other node is live
// the message is delivered to this node itself (not sent, not counted).
func (c *Core) Forward(dir election.Dir, m election.Message) {
	m.From, m.Epoch = c.id, c.epoch
	c.sent = true
	to := c.NextLive(dir)
	if to == c.id {
		m.To, m.Seq = to, 0
		f := c.ledger()
		f.local = append(f.local, m.Clone())
		return
	}
	if c.sh.faultFree {
		// Nothing fails: no acknowledgement, no sequence number, no
		// duplicate to recognise.
		m.To, m.Seq = to, 0
		c.out = append(c.out, election.Effect{Kind: election.EffectSend, Msg: m})
		return
	}
	c.seq++
	m.To, m.Seq = to, c.seq
	c.waitAck(c.seq, hop{to: to, dir: dir, msg: m.Clone()})
	c.out = append(c.out,
		election.Effect{Kind: election.EffectSend, Msg: m},
		election.Effect{Kind: election.EffectSetTimer, Timer: ackName(c.seq), After: c.sh.timing.Answer},
	)
}

// SetTimer and CancelTimer let algorithms use their own timers.
func (c *Core) SetTimer(name string, after time.Duration) { c.setTimer(name, after) }
func (c *Core) CancelTimer(name string)                   { c.cancelTimer(name) }

func (c *Core) setTimer(name string, after time.Duration) {
	c.out = append(c.out, election.Effect{Kind: election.EffectSetTimer, Timer: name, After: after})
}

func (c *Core) cancelTimer(name string) {
	c.out = append(c.out, election.Effect{Kind: election.EffectCancelTimer, Timer: name})
}

func ackName(seq uint64) string { return ackPrefix + strconv.FormatUint(seq, 10) }
