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
)

// Timer names the core owns. Algorithms may use any other name; the core
// hands those to Algorithm.Timer.
const (
	TimerSuspect   = "suspect"
	TimerHeartbeat = "heartbeat"
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
}

// Core is the shared ring machinery. Algorithms embed a *Core and implement
// Algorithm; the machine's Step and View are the core's.
type Core struct {
	cfg  election.Config
	opts Options
	alg  Algorithm
	pos  int // this node's index in cfg.Members

	epoch  uint64
	leader election.NodeID
	role   election.Role
	shown  election.View // last view emitted

	dead      map[election.NodeID]bool
	seq       uint64
	pending   map[uint64]hop
	announced bool // this node sent the current epoch's announcement
	// challenging: this node started the current epoch because it
	// learned of a leader with a lower ID than its own.
	challenging bool
	// sent: this node has sent a message of the current epoch's election.
	sent      bool
	coordSeen bool // this node has passed the current epoch's announcement on

	out   []election.Effect
	local []election.Message // messages a node sends itself when it is the only live node
}

// NewCore validates cfg and builds the shared part of a ring machine.
func NewCore(cfg election.Config, opts Options, alg Algorithm) (*Core, error) {
	cfg.Timing = cfg.Timing.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.ElectionTimeout <= 0 {
		opts.ElectionTimeout = cfg.Timing.Suspicion + time.Duration(max(opts.ElectionHops, 1))*HopTime(cfg.Timing)
	}
	return &Core{cfg: cfg, opts: opts, alg: alg, pos: cfg.Index(cfg.ID)}, nil
}

// Config returns the node's configuration (timing with defaults filled in).
func (c *Core) Config() election.Config { return c.cfg }

// ID is this node's ID.
func (c *Core) ID() election.NodeID { return c.cfg.ID }

// N is the configured ring size.
func (c *Core) N() int { return len(c.cfg.Members) }

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
	c.out = nil
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
	for len(c.local) > 0 {
		m := c.local[0]
		c.local = c.local[1:]
		c.receive(m)
	}
	if v := c.View(); v != c.shown {
		c.shown = v
		c.out = append(c.out, election.Effect{Kind: election.EffectView, View: v})
	}
	out := c.out
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
	c.dead = map[election.NodeID]bool{}
	c.pending = map[uint64]hop{}
	c.seq = 0
	c.announced, c.coordSeen = false, false
	c.local = nil
	c.alg.Reset()
	c.setTimer(TimerSuspect, c.cfg.Timing.Suspicion)
}

// StartElection moves to the next epoch and initiates an election in it.
func (c *Core) StartElection() {
	c.enter(c.epoch + 1)
	c.alg.Initiate()
}

// challenge starts an election because a leader with a lower ID than this
// node's leads: this node is higher than the best the others found.
func (c *Core) challenge() {
	c.enter(c.epoch + 1)
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
	c.setTimer(TimerSuspect, c.opts.ElectionTimeout)
}

func (c *Core) newEpoch(e uint64) {
	if c.role == election.Leader {
		c.cancelTimer(TimerHeartbeat)
	}
	c.epoch = e
	// A node found dead in an earlier epoch may have restarted: every
	// election probes the ring afresh.
	clear(c.dead)
	for seq := range c.pending {
		c.cancelTimer(ackName(seq))
	}
	clear(c.pending)
	c.announced, c.coordSeen, c.challenging, c.sent = false, false, false, false
	c.alg.Reset()
}

func (c *Core) receive(m election.Message) {
	if m.Type == TypeAck {
		if p, ok := c.pending[m.Seq]; ok && p.to == m.From {
			delete(c.pending, m.Seq)
			c.cancelTimer(ackName(m.Seq))
		}
		delete(c.dead, m.From)
		return
	}
	if m.From != c.cfg.ID {
		delete(c.dead, m.From)
		if m.Seq != 0 {
			// Acknowledge every hop, stale ones too: the ACK says "this
			// node is alive", not "I agree".
			c.out = append(c.out, election.Effect{Kind: election.EffectSend, Msg: election.Message{
				Type: TypeAck, From: c.cfg.ID, To: m.From, Epoch: m.Epoch, Seq: m.Seq,
			}})
		}
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
	if c.opts.Announce != "" && m.Type == c.opts.Announce {
		c.announcement(m)
		return
	}
	c.alg.Handle(m)
}

// heartbeat handles a leader's HEARTBEAT. A leader with a lower ID than this
// node's is not the highest live ID: this node calls an election above that
// leader's epoch (this is how a restarted or reconnected higher node takes
// over, as in the Bully algorithm, and how a node that an election skipped
// by mistake gets back in).
func (c *Core) heartbeat(m election.Message) {
	l, e := m.From, m.Epoch
	if e < c.epoch {
		if c.role == election.Candidate && !c.sent && l > c.cfg.ID {
			// This node suspected a leader that is alive (it was cut
			// off, say) and its election has reached nobody yet — the
			// variable-time ring waits silently for its slot. Nobody
			// else knows the newer epoch: go back to the leader.
			c.newEpoch(e)
			c.follow(l)
		}
		return
	}
	if l < c.cfg.ID {
		c.epoch = e
		c.challenge()
		return
	}
	if l == c.leader && e == c.epoch {
		if c.role == election.Follower {
			c.setTimer(TimerSuspect, c.cfg.Timing.Suspicion)
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
	if m.Candidate < c.cfg.ID {
		// This node was skipped (a lost acknowledgement made its
		// predecessor think it dead): the announced leader is not the
		// highest live ID. Challenge it at once.
		c.challenge()
		return
	}
	c.coordSeen = true
	c.Decide(m.Candidate)
	c.Forward(election.Clockwise, election.Message{Type: c.opts.Announce, Candidate: m.Candidate, Members: m.Members})
}

// Announce decides leader and sends the announcement clockwise; it goes
// round the ring once and stops when it is back here.
func (c *Core) Announce(leader election.NodeID, members []election.NodeID) {
	c.announced = true
	c.Decide(leader)
	if c.opts.Announce != "" {
		c.Forward(election.Clockwise, election.Message{Type: c.opts.Announce, Candidate: leader, Members: members})
	}
}

// Decide ends this node's election: it leads if leader is its own ID and
// follows leader otherwise.
func (c *Core) Decide(leader election.NodeID) {
	if leader == c.cfg.ID {
		c.leader, c.role = leader, election.Leader
		c.cancelTimer(TimerSuspect)
		c.setTimer(TimerHeartbeat, c.cfg.Timing.Heartbeat)
		return
	}
	c.follow(leader)
}

func (c *Core) follow(l election.NodeID) {
	if c.role == election.Leader {
		c.cancelTimer(TimerHeartbeat)
	}
	c.leader, c.role = l, election.Follower
	c.setTimer(TimerSuspect, c.cfg.Timing.Suspicion)
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
				Type: TypeHeartbeat, From: c.cfg.ID, Epoch: c.epoch, Candidate: c.cfg.ID,
			}})
			c.setTimer(TimerHeartbeat, c.cfg.Timing.Heartbeat)
		}
	case strings.HasPrefix(name, ackPrefix):
		seq, err := strconv.ParseUint(name[len(ackPrefix):], 10, 64)
		if err != nil {
			return
		}
		p, ok := c.pending[seq]
		if !ok {
			return
		}
		delete(c.pending, seq)
		// The successor did not acknowledge in time: treat it as dead
		// for this epoch and hand the message to the node after it.
		c.dead[p.to] = true
		if p.msg.Epoch == c.epoch {
			c.Forward(p.dir, p.msg)
		}
	default:
		c.alg.Timer(name)
	}
}

// NextLive is the first node in direction dir from this one that is not
// known dead; this node's own ID when every other node is.
func (c *Core) NextLive(dir election.Dir) election.NodeID {
	n := len(c.cfg.Members)
	step := 1
	if dir == election.CounterClockwise {
		step = n - 1
	}
	for i, k := (c.pos+step)%n, 1; k < n; i, k = (i+step)%n, k+1 {
		if id := c.cfg.Members[i]; !c.dead[id] {
			return id
		}
	}
	return c.cfg.ID
}

// Forward sends m one hop in direction dir to the next live node, in the
// current epoch, with a per-hop acknowledgement. When no other node is live
// the message is delivered to this node itself (not sent, not counted).
func (c *Core) Forward(dir election.Dir, m election.Message) {
	m.From, m.Epoch = c.cfg.ID, c.epoch
	c.sent = true
	to := c.NextLive(dir)
	if to == c.cfg.ID {
		m.To, m.Seq = to, 0
		c.local = append(c.local, m.Clone())
		return
	}
	c.seq++
	m.To, m.Seq = to, c.seq
	c.pending[c.seq] = hop{to: to, dir: dir, msg: m.Clone()}
	c.out = append(c.out,
		election.Effect{Kind: election.EffectSend, Msg: m},
		election.Effect{Kind: election.EffectSetTimer, Timer: ackName(c.seq), After: c.cfg.Timing.Answer},
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
