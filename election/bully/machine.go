package bully

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Timer names. Lease timers are "lease/<round>", one per heartbeat round
// still waiting for its majority or holding the lease.
const (
	timerAnswer      = "answer"      // probing: how long higher IDs have to answer OK
	timerCoordinator = "coordinator" // got OK: how long the COORDINATOR may take
	timerPrevote     = "prevote"     // majority: how long pre-vote answers may take
	timerVotes       = "votes"       // majority: how long votes may take
	timerSuspect     = "suspect"     // follower: leader silence; majority: also the vote barrier
	timerHeartbeat   = "heartbeat"   // leader: next HEARTBEAT round
	leasePrefix      = "lease/"
)

// phase is where a node is in the protocol.
type phase int

const (
	idle       phase = iota // undecided, not campaigning (majority: maybe voted or pledged)
	following               // follows leader
	probing                 // sent ELECTION to every higher ID, waiting for an OK
	awaiting                // got an OK, waiting for the COORDINATOR
	prevoting               // majority: asked every lower ID whether it would vote, committing to nothing
	collecting              // majority: asked every lower ID for its vote
	leading                 // plain: leader; majority: won the epoch (role leader only with a lease)
)

type machine struct {
	cfg           election.Config
	quorum        bool
	lease         time.Duration
	higher, lower []election.NodeID // ascending

	// epoch: plain, the highest epoch seen (a leader's term). Majority,
	// the highest epoch this node committed to by voting for another,
	// following a leader or winning; messages below it are stale.
	epoch      uint64
	votedEpoch uint64 // majority: the last vote granted, durable
	votedFor   election.NodeID
	seen       uint64 // majority: the highest epoch in any message

	phase  phase
	leader election.NodeID // following

	round     uint64  // this node's elections, echoed by OK, PREVOTE_ACK and VOTE
	candEpoch uint64  // majority: the epoch campaigned for (not durable)
	votes     peerSet // majority, collecting: who voted for this node

	// Majority, pre-vote. grants are the lower IDs that would vote for
	// this node in this round; asked is the epoch last proposed to them.
	// noMajority says the last pre-vote round found no majority in time
	// (the node was cut off, or refused); reask, that this round may
	// still send its PREVOTEs again on hearing from a peer.
	grants     peerSet
	asked      uint64
	noMajority bool
	reask      bool

	// Majority only.
	barrier     bool            // timerSuspect is armed: no vote leaves before it fires
	acked       election.NodeID // whose claim (or vote request) armed the barrier; None after a restart
	ackedEpoch  uint64          // the epoch of that claim or vote: a RELEASE must name it
	leaderAlive bool            // following, and no peer-down hint for the leader
	pledgeTo    election.NodeID
	pledgeEpoch uint64
	pledgeSeq   uint64

	hb         uint64        // last heartbeat round sent
	pending    []hbRound     // majority leader: rounds still waiting for a majority, oldest first
	leaseUntil time.Duration // majority leader: the lease's end, in Event.Now time
	now        time.Duration // Event.Now of the event being handled
	leaseRound uint64        // round whose majority holds the lease
	leaseName  string        // its timer's name
	termRound  uint64        // the COORDINATOR round that opened this term
	hasLease   bool

	// down holds peers the runtime hinted are gone, until they are heard
	// from again. A probing node whose every higher peer is down stops
	// waiting for an OK that cannot come.
	down peerSet
	// suspected (plain): the leader this node followed when a lower
	// node's probe drew it into an election; its suspicion timer still
	// runs, and if it fires, that leader counts as down.
	suspected election.NodeID

	view      election.View
	published bool
	// armed has a bit (timerBit) for each fixed-name timer the runtime
	// holds armed: set by setTimer, cleared by cancelTimer and when the
	// timer fires. A cancel of a timer that is not armed is a no-op for
	// every runtime, and most cancels are of that kind (a follower
	// cancels four election timers at each heartbeat), so cancelTimer
	// leaves them out instead of handing the runtime a pile of
	// 200-byte effects to ignore.
	armed uint8
	// out collects one Step's effects, which Step returns. It is carved
	// from slab, a block of effects allocated a few dozen steps at a time:
	// an Effect is 200 bytes, and a fresh slice per step (grown
	// by append through 1, 2, 4, 8 entries) was most of what the simulator
	// allocated. The slice Step returns has its capacity cut to its length
	// and the slab moves past it, so the caller owns it outright: nothing
	// the machine does later writes to it, and appending to it reallocates.
	out  []election.Effect
	slab []election.Effect // unused rest of the current block: len 0, cap what is left
}

// hbRound is a majority leader's heartbeat round still waiting for its
// majority: when it left, who acknowledged it, and its lease timer's name
// (made once: the round's timer is set, and maybe cancelled, by name). A
// leader has a handful pending at once; their slots, acks included, are
// reused round after round rather than each round making two maps.
type hbRound struct {
	n      uint64
	sentAt time.Duration // Event.Now when it left
	timer  string
	acks   []election.NodeID
}

// pendingRound is the pending round n, or nil.
func (m *machine) pendingRound(n uint64) *hbRound {
	for i := range m.pending {
		if m.pending[i].n == n {
			return &m.pending[i]
		}
	}
	return nil
}

// addRound makes round n pending, sent now.
func (m *machine) addRound(n uint64) {
	if len(m.pending) < cap(m.pending) {
		m.pending = m.pending[:len(m.pending)+1]
	} else {
		m.pending = append(m.pending, hbRound{})
	}
	r := &m.pending[len(m.pending)-1]
	r.n, r.sentAt, r.timer, r.acks = n, m.now, leaseTimer(n), r.acks[:0]
}

// dropRound forgets pending round i, keeping its slot for a later round.
func (m *machine) dropRound(i int) {
	acks := m.pending[i].acks
	last := len(m.pending) - 1
	copy(m.pending[i:], m.pending[i+1:])
	m.pending[last] = hbRound{acks: acks[:0]}
	m.pending = m.pending[:last]
}

// slabSize is how many effects one slab block holds; slabMin is the least
// room a step starts with (more than most steps emit), so that a step rarely
// outgrows the block and has to reallocate.
const (
	slabSize = 32
	slabMin  = 8
)

func (m *machine) View() election.View { return m.view }

func (m *machine) Step(ev election.Event) []election.Effect {
	shared := m.cfg.Effects != nil
	switch {
	case shared:
		// The runtime's buffer, shared by every machine it steps (the
		// simulator's allocates nothing): no slab per node.
		m.out = m.cfg.Effects.Begin()
	case cap(m.slab) < slabMin:
		m.slab = make([]election.Effect, 0, slabSize)
		fallthrough
	default:
		m.out = m.slab
	}
	m.now = ev.Now
	if m.quorum && m.phase == leading && m.hasLease && m.now > 0 && m.now >= m.leaseUntil {
		// The lease ran out while this node could not run: a paused
		// leader thaws with every overdue timer firing at once, and the
		// heartbeat timer may come before the lease timer. Step down
		// before acting on anything, exactly as the lease timer would.
		m.campaign()
	}
	switch ev.Kind {
	case election.EventStart:
		m.start()
	case election.EventReceive:
		m.receive(&ev.Msg) // by pointer: a Message is 120 bytes, read, never kept
	case election.EventTimer:
		m.armed &^= timerBit(ev.Timer) // a timer that fired is no longer armed
		m.timer(ev.Timer)
	case election.EventPeerDown:
		m.peerDown(ev.Peer)
	}
	m.publish()
	if shared {
		out := m.cfg.Effects.End(m.out)
		m.out = nil
		return out
	}
	out := m.out[:len(m.out):len(m.out)]
	m.out = nil
	if len(out) == 0 {
		return nil
	}
	// out began as the slab and only grew by append, which reallocates
	// only beyond the capacity: so it is still in the slab exactly when it
	// fits there.
	if len(out) <= cap(m.slab) {
		m.slab = m.slab[len(out):len(out)] // move past what is now the caller's
	} else {
		m.slab = nil // out outgrew the slab and was reallocated; start a new block
	}
	return out
}

// --- effects -------------------------------------------------------------

// effect adds an effect of kind k to m.out and returns it to be filled in
// place: an Effect is 192 bytes, and appending one built apart copied it
// once more, on every message and timer.
func (m *machine) effect(k election.EffectKind) *election.Effect {
	if n := len(m.out); n < cap(m.out) {
		m.out = m.out[:n+1]
	} else {
		m.out = append(m.out, election.Effect{})
	}
	e := &m.out[len(m.out)-1]
	*e = election.Effect{Kind: k}
	return e
}

func (m *machine) send(to election.NodeID, msg election.Message) {
	msg.From, msg.To = m.cfg.ID, to
	m.effect(election.EffectSend).Msg = msg
}

func (m *machine) broadcast(msg election.Message) {
	msg.From = m.cfg.ID
	m.out = append(m.out, election.Effect{Kind: election.EffectBroadcast, Msg: msg})
}

func (m *machine) setTimer(name string, after time.Duration) {
	m.armed |= timerBit(name)
	e := m.effect(election.EffectSetTimer)
	e.Timer, e.After = name, after
}

// cancelTimer disarms a timer; one of the fixed names that is not armed
// needs no effect (see machine.armed). Lease timers are always cancelled.
func (m *machine) cancelTimer(name string) {
	bit := timerBit(name)
	if bit != 0 && m.armed&bit == 0 {
		return
	}
	m.armed &^= bit
	m.out = append(m.out, election.Effect{Kind: election.EffectCancelTimer, Timer: name})
}

// timerBit is a fixed-name timer's bit in machine.armed, 0 for a lease
// timer (their names are per round; m.pending tracks them).
func timerBit(name string) uint8 {
	switch name {
	case timerAnswer:
		return bitAnswer
	case timerCoordinator:
		return bitCoordinator
	case timerPrevote:
		return bitPrevote
	case timerVotes:
		return bitVotes
	case timerSuspect:
		return 1 << 4
	case timerHeartbeat:
		return 1 << 5
	}
	return 0
}

const (
	bitAnswer uint8 = 1 << iota
	bitCoordinator
	bitPrevote
	bitVotes
	// electionTimers are the timers of a node running for leader.
	electionTimers = bitAnswer | bitCoordinator | bitPrevote | bitVotes
)

func (m *machine) persist() {
	m.out = append(m.out, election.Effect{Kind: election.EffectPersist, Durable: &election.Durable{
		Epoch: m.epoch, VotedEpoch: m.votedEpoch, VotedFor: m.votedFor,
	}})
}

// setEpoch raises the epoch and persists it.
func (m *machine) setEpoch(e uint64) {
	if e > m.epoch {
		m.epoch = e
		m.persist()
	}
}

// publish emits the view when it changed. Step calls it last; a step-down
// calls it at once so that the view is out before any vote it enables.
func (m *machine) publish() {
	v := election.View{Epoch: m.epoch, Role: election.Undecided}
	switch m.phase {
	case following:
		v.Leader, v.Role = m.leader, election.Follower
	case probing, awaiting, prevoting, collecting:
		v.Role = election.Candidate
	case leading:
		if !m.quorum || m.hasLease {
			v.Leader, v.Role = m.cfg.ID, election.Leader
		} else {
			v.Role = election.Candidate
		}
	}
	if m.published && v == m.view {
		return
	}
	m.view, m.published = v, true
	m.out = append(m.out, election.Effect{Kind: election.EffectView, View: v})
}

// jitter spreads retries so that two candidates that failed together do not
// retry together forever.
func (m *machine) jitter() time.Duration {
	return time.Duration(m.cfg.Rand.Int64N(int64(m.cfg.Timing.Answer/2) + 1))
}

// --- events --------------------------------------------------------------

func (m *machine) start() {
	d := m.cfg.Durable
	m.epoch, m.votedEpoch, m.votedFor, m.seen = d.Epoch, d.VotedEpoch, d.VotedFor, d.Epoch
	if m.quorum && d.Epoch > 0 {
		// A restart: this node may have acknowledged a leader an
		// instant before it crashed, and that leader's lease may rest
		// on it. Treat the boot as that acknowledgement.
		m.armBarrier(election.None, 0)
	}
	m.campaign()
}

func (m *machine) timer(name string) {
	switch {
	case name == timerAnswer:
		if m.phase == probing {
			if m.quorum {
				m.prevote()
			} else {
				m.lead()
			}
		}
	case name == timerCoordinator:
		if m.phase == awaiting {
			m.campaign()
		}
	case name == timerPrevote:
		if m.phase == prevoting {
			// No majority would vote for this node: it is cut off,
			// or outranked by the leader the others follow. Start
			// over without raising the epoch; and from now on, the
			// first word from any peer asks again at once.
			m.noMajority = true
			m.campaign()
		}
	case name == timerVotes:
		if m.phase == collecting {
			m.campaign()
		}
	case name == timerSuspect:
		m.suspectFired()
	case name == timerHeartbeat:
		if m.phase == leading {
			m.heartbeat(TypeHeartbeat)
			m.setTimer(timerHeartbeat, m.cfg.Timing.Heartbeat)
		}
	case strings.HasPrefix(name, leasePrefix):
		r, err := strconv.ParseUint(name[len(leasePrefix):], 10, 64)
		if err != nil || m.phase != leading {
			return
		}
		for i := range m.pending {
			if m.pending[i].n == r {
				m.dropRound(i)
				break
			}
		}
		if (m.hasLease && r == m.leaseRound) || (!m.hasLease && r == m.termRound) {
			// No later round reached a majority in time (or the
			// term never got its first lease): step down now,
			// while the lease still covers this instant, and run
			// for a new epoch. A leader that merely lost a round
			// or two wins it back in a round trip; a minority
			// leader keeps trying without winning, and its
			// followers, voting for it, show no leader.
			m.campaign()
		}
	}
}

func (m *machine) suspectFired() {
	if !m.quorum {
		if m.phase == following {
			// The leader has sent nothing for a whole suspicion
			// timeout: as good a sign as a peer-down hint. Asking it
			// again and waiting out Answer for an OK it would have
			// had every chance to send only lengthens the failover
			// (1.36 × the suspicion timeout in containers before).
			// It is still asked: a live leader answers with its
			// COORDINATOR, and a node that led meanwhile is bullied
			// back by its heartbeats.
			m.markDown(m.leader)
			m.campaign()
		}
		if m.phase == probing && m.suspected != election.None {
			// The leader this node followed when a lower node
			// dragged it into this election has now been silent a
			// whole suspicion timeout too.
			m.markDown(m.suspected)
			m.suspected = election.None
			if m.higherAllDown() {
				m.cancelTimer(timerAnswer)
				m.timer(timerAnswer)
			}
		}
		return
	}
	m.barrier = false
	// The barrier has passed: every lease this node's acknowledgements
	// supported has run out.
	if m.keepPledge() {
		return
	}
	switch m.phase {
	case following, idle:
		m.leaderAlive = false
		m.campaign()
	case collecting:
		m.countVotes()
	}
}

// markDown notes that p is believed gone until it is heard from again.
// A hint about a node that is not a member is not kept: nothing asks
// about one (messages from it are ignored, and it is never higher).
func (m *machine) markDown(p election.NodeID) {
	if i := m.cfg.Index(p); i >= 0 {
		m.down.add(i, m.cfg.Membership.Len())
	}
}

// isDown reports whether p was hinted gone and not heard from since.
func (m *machine) isDown(p election.NodeID) bool { return m.down.has(m.cfg.Index(p)) }

// peerSet is a set of members by ring position (Config.Index). Every
// message a node receives takes its sender out of the down set, and a
// candidate counts its votes and pre-vote grants in one each round, so the
// set is a slice and a count, not a map: nothing to hash or allocate
// again, and only a count to look at while it is empty.
type peerSet struct {
	in []bool // by ring position; nil until the first peer is added
	n  int    // how many are in
}

// add puts position i of a membership of size members in the set.
func (p *peerSet) add(i, members int) {
	if p.in == nil {
		p.in = make([]bool, members)
	}
	if !p.in[i] {
		p.in[i] = true
		p.n++
	}
}

// remove takes position i out of the set.
func (p *peerSet) remove(i int) {
	if p.n > 0 && p.in[i] {
		p.in[i] = false
		p.n--
	}
}

// clear empties the set, keeping its room.
func (p *peerSet) clear() {
	if p.n > 0 {
		clear(p.in)
		p.n = 0
	}
}

// has reports whether position i is in the set (i < 0: a non-member, never).
func (p *peerSet) has(i int) bool { return p.n > 0 && i >= 0 && p.in[i] }

func (m *machine) peerDown(p election.NodeID) {
	m.markDown(p)
	if m.phase == probing && m.higherAllDown() {
		// Nobody who could answer OK is alive: the answer timeout
		// would only add its full length to the failover.
		m.cancelTimer(timerAnswer)
		m.timer(timerAnswer)
		return
	}
	if m.phase == following && p == m.leader {
		// A hint, not proof: campaign now. In majority mode the
		// barrier still holds this node's own vote back, so a wrong
		// hint cannot shorten a live leader's lease.
		m.leaderAlive = false
		m.campaign()
	}
}

func (m *machine) receive(msg *election.Message) {
	s := msg.From
	i := m.cfg.Index(s)
	if s == m.cfg.ID || s <= 0 || i < 0 {
		return // not from a peer of this cluster
	}
	m.down.remove(i) // heard from: the hint is void
	if m.quorum && !proposal(msg) {
		m.seen = max(m.seen, msg.Epoch)
	}
	round, asked := m.round, m.asked
	reask := m.quorum && m.phase == prevoting && m.reask
	m.handle(s, msg)
	if reask && m.phase == prevoting && m.round == round {
		// This round follows one that found no majority, and a peer
		// has just been heard: the network may have healed. Ask the
		// peers that have not granted again now rather than wait out
		// the round — unless the message is an answer to this round
		// that teaches nothing (the question arrived, and asking again
		// would get the same answer); a refusal that shows a newer
		// epoch does teach something.
		answer := msg.Type == TypePrevoteAck && msg.Seq == round
		if !answer || election.NextEpoch(max(m.epoch, m.seen)) > asked {
			m.reask = false
			m.askPrevotes()
		}
	}
}

// proposal reports whether msg carries an epoch nobody has committed to: a
// PREVOTE's, or a granting PREVOTE_ACK's (which echoes it). Taking it as
// seen would let pre-votes raise epochs after all.
func proposal(msg *election.Message) bool {
	return msg.Type == TypePrevote || (msg.Type == TypePrevoteAck && msg.Candidate != election.None)
}

// handle acts on a message from the peer s, by type.
func (m *machine) handle(s election.NodeID, msg *election.Message) {
	switch msg.Type {
	case TypeElection:
		if m.quorum {
			if s > m.cfg.ID {
				m.voteRequest(s, msg.Epoch, msg.Seq)
			} else {
				m.quorumProbe(s, msg.Epoch, msg.Seq)
			}
		} else if s < m.cfg.ID {
			m.plainProbe(s, msg.Epoch, msg.Seq)
		}
	case TypeOK:
		if s < m.cfg.ID {
			return
		}
		if m.quorum {
			if (m.phase == probing || m.phase == prevoting || m.phase == collecting) && msg.Seq == m.round {
				m.await()
			}
			return
		}
		m.setEpoch(msg.Epoch)
		if m.phase == probing && msg.Seq == m.round {
			m.await()
		}
	case TypeCoordinator, TypeHeartbeat:
		if m.quorum {
			m.quorumClaim(s, msg.Epoch, msg.Seq)
		} else {
			m.plainClaim(s, msg.Epoch)
		}
	case TypeVote:
		if m.quorum && m.phase == collecting && msg.Epoch == m.candEpoch && msg.Candidate == m.cfg.ID && msg.Seq == m.round {
			m.votes.add(m.cfg.Index(s), m.cfg.Membership.Len())
			m.countVotes()
		}
	case TypeHeartbeatAck:
		if m.quorum && m.phase == leading && msg.Epoch == m.epoch {
			m.ack(s, msg.Seq)
		}
	case TypePrevote:
		if m.quorum && s > m.cfg.ID {
			m.answerPrevote(s, msg.Epoch, msg.Seq)
		}
	case TypePrevoteAck:
		if m.quorum && m.phase == prevoting && s < m.cfg.ID && msg.Seq == m.round && msg.Candidate == m.cfg.ID {
			m.grants.add(m.cfg.Index(s), m.cfg.Membership.Len())
			m.countPrevotes()
		}
		// A refusal carries the voter's committed epoch, already taken
		// into seen: the next round proposes above it.
	case TypeRelease:
		if m.quorum {
			m.released(s, msg.Epoch)
		}
	}
}

// --- both modes ----------------------------------------------------------

// campaign starts an election: ELECTION to every higher ID.
func (m *machine) campaign() {
	if m.phase == leading {
		// Give leadership up before sending anything, so that the
		// record shows the step-down ahead of the campaign's messages.
		m.leaveLeading()
		m.publish()
	}
	m.cancelTimer(timerCoordinator)
	m.cancelTimer(timerPrevote)
	m.cancelTimer(timerVotes)
	wasFollowing, oldLeader := m.phase == following, m.leader
	m.round++
	m.phase = probing
	m.leader = election.None
	msg := election.Message{Type: TypeElection, Epoch: m.epoch, Seq: m.round, Candidate: m.cfg.ID}
	if m.quorum {
		m.leaderAlive = false
		m.votes.clear()
		m.grants.clear()
		// A probe carries the committed epoch: a leader that sees a
		// newer one than its own knows the asker cannot follow it.
		// The epoch to campaign for is chosen only once a majority
		// would vote for it (prevote).
	} else if wasFollowing && !m.isDown(oldLeader) {
		// Dragged into an election (a lower node's probe) while its
		// own leader's silence is still being timed: keep timing it.
		// If the leader stays silent a whole suspicion timeout, it
		// counts as down (suspectFired), as if this node had
		// suspected it first.
		m.suspected = oldLeader
	} else {
		m.cancelTimer(timerSuspect)
		m.suspected = election.None
	}
	if len(m.higher) == 0 {
		// Nobody to ask: the highest node bullies at once (in
		// majority mode, after its pre-vote).
		if m.quorum {
			m.prevote()
		} else {
			m.lead()
		}
		return
	}
	for _, h := range m.higher {
		m.send(h, msg)
	}
	m.setTimer(timerAnswer, m.cfg.Timing.Answer)
	if m.higherAllDown() {
		// Every higher peer is hinted gone: the OK cannot come.
		m.cancelTimer(timerAnswer)
		m.timer(timerAnswer)
	}
}

// higherAllDown reports whether the runtime hinted that every higher peer
// is gone. Only hints decide this, never silence: with no hints (the
// simulator, a pause, a partition) the answer timeout runs as usual.
func (m *machine) higherAllDown() bool {
	if m.down.n == 0 {
		return false
	}
	for _, h := range m.higher {
		if !m.isDown(h) {
			return false
		}
	}
	return true
}

// await: a higher node answered OK; it is running its own election.
func (m *machine) await() {
	m.phase = awaiting
	m.votes.clear()
	m.grants.clear()
	m.cancelTimer(timerAnswer)
	m.cancelTimer(timerPrevote)
	m.cancelTimer(timerVotes)
	wait := 2 * m.cfg.Timing.Answer
	if m.quorum {
		// The winner's voters may hold their votes back for up to a
		// suspicion timeout (the barrier).
		wait = m.cfg.Timing.Answer + m.cfg.Timing.Suspicion
	}
	m.setTimer(timerCoordinator, wait+m.jitter())
}

// leaveLeading drops everything a leader keeps.
func (m *machine) leaveLeading() {
	if m.phase != leading {
		return
	}
	m.cancelTimer(timerHeartbeat)
	for _, r := range m.pending {
		m.cancelTimer(r.timer)
	}
	if m.leaseRound != 0 {
		m.cancelTimer(m.leaseName)
	}
	for len(m.pending) > 0 {
		m.dropRound(len(m.pending) - 1)
	}
	m.leaseRound, m.leaseName, m.hasLease = 0, "", false
	m.phase = idle
}

// leaseTimer is round r's lease timer name. A leader names one timer per
// heartbeat round, ten a second: the first rounds' names are made once
// for the process (leaseNames), not once per round.
func leaseTimer(r uint64) string {
	if r < uint64(len(leaseNames)) {
		return leaseNames[r]
	}
	return leasePrefix + strconv.FormatUint(r, 10)
}

var leaseNames = func() (names [1024]string) {
	for r := range names {
		names[r] = leasePrefix + strconv.Itoa(r)
	}
	return names
}()

// --- plain ---------------------------------------------------------------

// lead: nobody higher answered. Take a new term and tell every lower ID.
func (m *machine) lead() {
	m.cancelTimer(timerAnswer)
	m.cancelTimer(timerSuspect)
	m.setEpoch(election.NextEpoch(m.epoch))
	m.phase = leading
	m.announce()
	if !m.cfg.FaultFree { // nothing fails: no failure detector to feed
		m.setTimer(timerHeartbeat, m.cfg.Timing.Heartbeat)
	}
}

func (m *machine) announce() {
	for _, l := range m.lower {
		m.send(l, election.Message{Type: TypeCoordinator, Epoch: m.epoch})
	}
}

// plainProbe: ELECTION from a lower ID.
func (m *machine) plainProbe(s election.NodeID, e uint64, seq uint64) {
	behind := e < m.epoch
	if m.phase == leading {
		if e > m.epoch {
			// The asker knows a newer term than this leader's:
			// take a newer one still and tell every lower ID.
			m.setEpoch(election.NextEpoch(e))
			m.announce()
			return
		}
		// The answer a leader has is the result: tell the asker.
		m.send(s, election.Message{Type: TypeCoordinator, Epoch: m.epoch})
		return
	}
	m.setEpoch(e)
	m.send(s, election.Message{Type: TypeOK, Epoch: m.epoch, Seq: seq})
	switch {
	case m.phase == probing || m.phase == awaiting:
		// Already running an election.
	case m.phase == following && behind:
		// The asker has not heard of the leader this node follows
		// (it sent before that leader's COORDINATOR reached it).
	default:
		m.campaign()
	}
}

// plainClaim: COORDINATOR or HEARTBEAT from s in epoch e.
func (m *machine) plainClaim(s election.NodeID, e uint64) {
	if e < m.epoch {
		return // stale: from before a newer leader this node knows of
	}
	if s < m.cfg.ID {
		// A lower node leads; this one is alive: bully it.
		m.setEpoch(e)
		switch m.phase {
		case leading:
			m.setEpoch(election.NextEpoch(e))
			m.announce()
		case probing, awaiting:
		default:
			m.campaign()
		}
		return
	}
	if e == m.epoch && m.phase == following && m.leader > s {
		return // two leaders of one epoch: the higher will bully the lower
	}
	m.leaveLeading()
	m.cancelTimer(timerAnswer)
	m.cancelTimer(timerCoordinator)
	m.setEpoch(e)
	m.phase, m.leader = following, s
	if m.cfg.FaultFree {
		m.cancelTimer(timerSuspect) // nothing fails: nobody to suspect
		return
	}
	m.setTimer(timerSuspect, m.cfg.Timing.Suspicion)
}

// --- majority ------------------------------------------------------------

// armBarrier starts the vote barrier on an acknowledgement of who's claim
// (or a vote for who) in epoch e; who is None after a restart.
func (m *machine) armBarrier(who election.NodeID, e uint64) {
	m.barrier, m.acked, m.ackedEpoch = true, who, e
	m.setTimer(timerSuspect, m.cfg.Timing.Suspicion)
}

// prevote: no higher ID answered. Before it commits to an epoch, the
// candidate asks every lower ID whether it would vote for the next one;
// asking changes nothing on either side. A node that cannot reach a
// majority therefore never raises its epoch, and one that returns after a
// partition cannot push the majority to a newer epoch unless a majority
// would elect it.
func (m *machine) prevote() {
	m.cancelTimer(timerAnswer)
	m.phase = prevoting
	m.grants.clear()
	m.reask = m.noMajority
	m.askPrevotes()
	m.setTimer(timerPrevote, m.cfg.Timing.Answer+m.jitter())
	m.countPrevotes()
}

// askPrevotes sends PREVOTE for the epoch this node would campaign for to
// every lower ID that has not granted it this round.
func (m *machine) askPrevotes() {
	m.asked = election.NextEpoch(max(m.epoch, m.seen))
	for _, l := range m.lower {
		if !m.grants.has(m.cfg.Index(l)) {
			m.send(l, election.Message{Type: TypePrevote, Epoch: m.asked, Seq: m.round, Candidate: m.cfg.ID})
		}
	}
}

// countPrevotes moves to the vote round once the grants and the node's own
// make a majority: only now does it pick the epoch and take it as seen.
func (m *machine) countPrevotes() {
	if m.grants.n+1 < m.cfg.MajoritySize() {
		return
	}
	top := max(m.epoch, m.seen)
	if election.NextEpoch(top) == top {
		return // the epochs are used up: nothing left to win, safely
	}
	m.cancelTimer(timerPrevote)
	m.grants.clear()
	m.noMajority, m.reask = false, false
	m.candEpoch = election.NextEpoch(top)
	m.seen = m.candEpoch
	m.collect()
}

// answerPrevote tells a higher candidate s whether this node would vote
// for it in epoch e, by the rules of voteRequest without the barrier. It
// changes nothing here: no vote, no barrier, no epoch.
func (m *machine) answerPrevote(s election.NodeID, e, seq uint64) {
	ans := election.Message{Type: TypePrevoteAck, Epoch: e, Seq: seq, Candidate: s}
	if e <= m.epoch || (m.phase == following && m.leaderAlive && s < m.leader) {
		ans.Epoch, ans.Candidate = m.epoch, election.None
	}
	m.send(s, ans)
}

// collect: a majority would vote; ask every lower ID for its vote.
func (m *machine) collect() {
	m.cancelTimer(timerAnswer)
	m.votes.clear()
	m.phase = collecting
	for _, l := range m.lower {
		m.send(l, election.Message{Type: TypeElection, Epoch: m.candEpoch, Seq: m.round, Candidate: m.cfg.ID})
	}
	m.setTimer(timerVotes, m.cfg.Timing.Suspicion+m.cfg.Timing.Answer+m.jitter())
	m.countVotes()
}

// countVotes wins the epoch once a majority voted. The node's own vote
// counts only once its barrier has passed, as anyone's.
func (m *machine) countVotes() {
	n := m.votes.n
	if !m.barrier {
		n++
	}
	if n < m.cfg.MajoritySize() {
		return
	}
	m.cancelTimer(timerVotes)
	m.epoch, m.votedEpoch, m.votedFor = m.candEpoch, m.candEpoch, m.cfg.ID
	m.persist()
	m.votes.clear()
	m.phase = leading
	m.pending = m.pending[:0] // leaveLeading emptied it
	m.leaseRound, m.leaseName, m.hasLease = 0, "", false
	// Role leader comes with the first lease: when a majority has
	// acknowledged the COORDINATOR.
	m.heartbeat(TypeCoordinator)
	m.termRound = m.hb
	m.setTimer(timerHeartbeat, m.cfg.Timing.Heartbeat)
}

// heartbeat sends one numbered round (COORDINATOR or HEARTBEAT) to all.
// Plain leaders send HEARTBEAT only; their COORDINATOR goes to lower IDs.
func (m *machine) heartbeat(typ string) {
	m.hb++
	m.broadcast(election.Message{Type: typ, Epoch: m.epoch, Seq: m.hb})
	if !m.quorum {
		return
	}
	m.addRound(m.hb)
	m.setTimer(m.pending[len(m.pending)-1].timer, m.lease)
	m.ack(m.cfg.ID, m.hb) // the leader acknowledges its own round
}

// ack counts an acknowledgement of round r; a majority renews the lease
// until r's send time + lease.
func (m *machine) ack(from election.NodeID, r uint64) {
	p := m.pendingRound(r)
	if p == nil {
		return
	}
	if !slices.Contains(p.acks, from) {
		p.acks = append(p.acks, from)
	}
	if len(p.acks) < m.cfg.MajoritySize() || r <= m.leaseRound {
		return
	}
	if m.now > 0 && m.now >= p.sentAt+m.lease {
		// Acknowledgements that waited out the lease (queued while this
		// node was frozen) prove nothing about now.
		return
	}
	sentAt, timer := p.sentAt, p.timer
	// Rounds are pending oldest first: r's elders lead the list.
	for len(m.pending) > 0 && m.pending[0].n < r {
		m.cancelTimer(m.pending[0].timer)
		m.dropRound(0)
	}
	if m.leaseRound != 0 && m.leaseRound < r {
		m.cancelTimer(m.leaseName)
	}
	m.dropRound(0) // r itself; its timer stays: it is the lease's end
	m.leaseRound, m.leaseName, m.hasLease = r, timer, true
	m.leaseUntil = sentAt + m.lease
}

// quorumProbe: ELECTION from a lower ID, a probe.
func (m *machine) quorumProbe(s election.NodeID, e, seq uint64) {
	if m.phase == leading {
		if e > m.epoch {
			// The asker has committed to a newer epoch (it voted
			// in an election that came to nothing) and cannot
			// follow this one: win a newer epoch.
			m.campaign()
			return
		}
		m.send(s, election.Message{Type: TypeCoordinator, Epoch: m.epoch, Seq: m.hb})
		return
	}
	m.send(s, election.Message{Type: TypeOK, Epoch: m.epoch, Seq: seq})
	switch {
	case m.phase == following && m.leaderAlive:
		// The leader is alive; it will answer for itself.
	case m.phase == probing || m.phase == awaiting || m.phase == prevoting || m.phase == collecting:
	case m.phase == idle && m.barrier:
		// Voted (or promised to vote) for a higher candidate a
		// moment ago; that candidate will answer.
	default:
		m.campaign()
	}
}

// voteRequest: ELECTION from a higher candidate s for epoch e.
func (m *machine) voteRequest(s election.NodeID, e, seq uint64) {
	if e <= m.epoch {
		if e == m.epoch && e == m.votedEpoch && m.votedFor == s && m.phase != following && m.phase != leading {
			// A retry of a request already granted: the vote may
			// have been lost (or this node restarted before
			// sending it). It leaves no earlier than any vote.
			m.grant(s, e, seq)
		}
		return // stale, or this epoch is already committed elsewhere
	}
	if m.phase == following && m.leaderAlive && s < m.leader {
		return // a live leader outranks the candidate
	}
	if m.phase == leading {
		// Outranked: step down before granting, and say so first.
		// Then hand over: tell the followers this term is over, so
		// that the barriers this leader's heartbeats armed need not
		// run out before their votes leave.
		m.leaveLeading()
		m.publish()
		m.broadcast(election.Message{Type: TypeRelease, Epoch: m.epoch})
	}
	// Withdraw any candidacy of this node's own: its self-vote was never
	// sent, so giving the epoch's vote to s is the only vote cast.
	m.cancelTimer(timerAnswer)
	m.cancelTimer(timerPrevote)
	m.cancelTimer(timerVotes)
	m.cancelTimer(timerCoordinator)
	m.votes.clear()
	m.grants.clear()
	m.phase, m.leader, m.leaderAlive = idle, election.None, false
	m.epoch, m.votedEpoch, m.votedFor = e, e, s
	m.persist() // before the vote leaves
	m.grant(s, e, seq)
}

// keepPledge sends the vote this node promised while its barrier held, if
// it promised one, and reports whether it did. The barrier it arms is the
// vote's own: a vote acknowledges the leader-to-be.
func (m *machine) keepPledge() bool {
	if m.pledgeTo == election.None {
		return false
	}
	to := m.pledgeTo
	m.send(to, election.Message{Type: TypeVote, Epoch: m.pledgeEpoch, Candidate: to, Seq: m.pledgeSeq})
	m.pledgeTo = election.None
	m.armBarrier(to, m.pledgeEpoch)
	return true
}

// grant sends the vote for s in epoch e, or promises it for when the
// barrier passes: a leader this node acknowledged may still hold a lease on
// that acknowledgement.
func (m *machine) grant(s election.NodeID, e, seq uint64) {
	if m.barrier && m.acked != s {
		m.pledgeTo, m.pledgeEpoch, m.pledgeSeq = s, e, seq
		return
	}
	// No barrier, or it was armed by s itself: no other node's lease
	// rests on this node's recent acknowledgements.
	m.pledgeTo = election.None
	m.send(s, election.Message{Type: TypeVote, Epoch: e, Candidate: s, Seq: seq})
	m.armBarrier(s, e) // a vote is an acknowledgement of the leader-to-be
}

// released: leader s stepped down from epoch e for a higher candidate. If
// the barrier of this node was armed by acknowledging s in e, nothing it
// guards is left: s gave up its lease before the RELEASE left, and every
// older leader's lease ran out before s won e. A RELEASE of any other
// leader or epoch is stale (a later acknowledgement re-armed the barrier)
// and is ignored. docs/bully.md has the argument.
func (m *machine) released(s election.NodeID, e uint64) {
	if s == election.None || m.acked != s || m.ackedEpoch != e {
		return
	}
	follows := m.phase == following && m.leader == s
	if !m.barrier && !follows {
		return
	}
	m.barrier = false
	// The promised vote leaves now instead of when the barrier would
	// have passed.
	if m.keepPledge() {
		return
	}
	switch {
	case follows:
		// Its leader is gone. Wait a suspicion timeout for the
		// candidate that displaced it, then campaign; a vote asked
		// for meanwhile leaves at once.
		m.phase, m.leader, m.leaderAlive = idle, election.None, false
		m.setTimer(timerSuspect, m.cfg.Timing.Suspicion)
	case m.phase == collecting:
		m.countVotes() // its own vote counts now
	}
}

// quorumClaim: COORDINATOR or HEARTBEAT from s in epoch e, round r.
func (m *machine) quorumClaim(s election.NodeID, e, r uint64) {
	if e < m.epoch {
		return // stale: this node has committed to a newer epoch
	}
	if s < m.cfg.ID {
		// A lower node leads; this node takes over with a newer
		// epoch. It does not acknowledge: it lends no lease to s.
		switch m.phase {
		case probing, awaiting, prevoting, collecting:
		case leading:
			if e > m.epoch {
				m.campaign()
			}
		case following:
			if !m.leaderAlive || m.leader < s {
				m.campaign()
			}
			// Else this node's own, higher leader will bully s.
		default:
			m.campaign()
		}
		return
	}
	if m.phase == leading && e == m.epoch {
		return // cannot happen: one winner per epoch
	}
	m.leaveLeading()
	if m.armed&electionTimers != 0 { // a follower at each heartbeat has none
		m.cancelTimer(timerAnswer)
		m.cancelTimer(timerPrevote)
		m.cancelTimer(timerVotes)
		m.cancelTimer(timerCoordinator)
	}
	m.votes.clear()
	m.grants.clear()
	m.noMajority = false
	m.pledgeTo = election.None // the epoch it was for is decided or superseded
	if e > m.epoch {
		m.epoch = e
		m.persist()
	}
	m.phase, m.leader, m.leaderAlive = following, s, true
	m.armBarrier(s, e)
	m.send(s, election.Message{Type: TypeHeartbeatAck, Epoch: e, Seq: r})
}
