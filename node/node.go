// Package node runs one election machine as a process: an embedded NATS
// server meshed with its peers' servers, wall-clock timers, durable state,
// failure hints, the JSON event log the harness reads, and a status
// endpoint. One goroutine owns the machine; everything that happens to the
// node (a message, a timer, a hint) is queued into that goroutine, so the
// machine is never stepped concurrently and the log's sequence numbers
// follow the order in which the machine saw things.
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/wire"
	"github.com/sirupsen/logrus"
)

// inputKind is what the event loop is handed.
type inputKind int

const (
	inRecv     inputKind = iota + 1 // raw bytes from the inbox
	inTimer                         // a timer fired (checked against its generation)
	inPeerDown                      // a failure hint
	inPeerUp                        // a peer is reachable again (clears the hint)
	inStall                         // tests: block the loop until the channel closes
	inControl                       // a control request (clock, drop set) from the control account
)

type input struct {
	kind   inputKind
	data   []byte
	timer  string
	gen    uint64
	peer   election.NodeID
	source string
	stall  chan struct{}
	reply  string // inControl: where the answer goes
}

// armedTimer is a timer the machine set: a deadline on the node's clock,
// and the real timer that fires when the clock reaches it.
type armedTimer struct {
	gen      uint64
	deadline time.Duration // the node clock's reading at which it fires
	t        *time.Timer
}

// Node is a running node. Start one with Start or Run.
type Node struct {
	cfg     Config
	members []election.NodeID
	log     *logrus.Logger
	boot    string

	// Owned by the loop goroutine.
	m      election.Machine
	seq    uint64
	timers map[string]*armedTimer
	gen    uint64
	down   map[election.NodeID]bool
	drops  *dropLog
	// summary is what the last summary line said.
	summary summaryState
	// routePeer maps a peer server's name to its node ID.
	routePeer map[string]election.NodeID
	started   time.Time // the loop's start: true time's origin (monotonic)
	// clk is the node's clock over true time since started: what the
	// machine reads as Event.Now and what its timers count in. Real
	// speed unless a clock fault changed it (docs/node.md).
	clk clock.Clock
	// dropFrom is the receiving end of one-way cuts: election messages
	// from these senders are dropped on arrival (reason "cut").
	dropFrom map[election.NodeID]bool
	// hold is the receiving end of jams (hold.go): election messages from
	// the senders it names are held on arrival until it no longer does.
	hold holdSet
	// gate is closed while a gated node's machine waits for a start
	// request (gate.go).
	gate gate
	// elapsed and afterFunc are true time and real timers; tests replace
	// them to drive the clock without waiting.
	elapsed   func() time.Duration
	afterFunc func(time.Duration, func()) *time.Timer

	srv    *server.Server // nil with an external NATS URL
	nc     *nats.Conn
	status *http.Server
	ln     net.Listener

	in       chan input
	quit     chan struct{} // closed to end the loop
	loopDone chan struct{} // closed when the loop has ended
	stopOnce sync.Once
	killed   bool // set before quit is closed; read by the loop after
	// failed is why the machine failed by itself (a program that
	// exited, hung or broke the protocol: election.Crasher); set by the
	// loop, which then ends the node as a crash.
	failed error

	mu       sync.Mutex // guards view, stats and faults, read by the status handler
	view     election.View
	stats    stats
	faults   faultStatus
	closedWG sync.WaitGroup
}

// Run starts a node and runs it until ctx is cancelled, then stops it
// gracefully (logs event=stop, flushes NATS, shuts the server down).
func Run(ctx context.Context, cfg Config) error {
	n, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		n.Stop()
		return nil
	case <-n.loopDone:
		n.kill() // waits for the shutdown the loop began
		return n.failed
	}
}

// Start boots a node: logs event=boot, loads durable state, starts the
// embedded NATS server (or connects to cfg.NATSURL), subscribes, waits up
// to cfg.PeerWait for the peers' inboxes, starts the machine and returns.
// ctx bounds only the start-up.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.PeerWait <= 0 {
		cfg.PeerWait = 2 * time.Second
	}
	if cfg.Cluster == "" {
		cfg.Cluster = "ringleader"
	}
	if cfg.LogLevel == 0 {
		cfg.LogLevel = logrus.InfoLevel
	}
	if cfg.SummaryEvery <= 0 {
		cfg.SummaryEvery = DefaultSummaryEvery
	}
	cfg.Timing = cfg.Timing.WithDefaults()
	if len(cfg.Program) > 0 {
		// The program becomes an algorithm of the registry, probed
		// once for its claims; its processes are this node's children.
		name, err := program.Register(cfg.Program, cfg.Quorum, cfg.Members(), cfg.Timing, program.Options{Timeout: cfg.ProgramTimeout})
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
		}
		cfg.Algorithm = name
	}
	// A registered algorithm's unset quorum mode and options take its
	// defaults here, so the boot line records what runs.
	alg, lerr := election.Lookup(cfg.Algorithm)
	if lerr == nil {
		var err error
		if cfg.Quorum, cfg.Options, err = alg.Resolve(cfg.Quorum, cfg.Options); err != nil {
			return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
		}
	}
	n := &Node{
		cfg:      cfg,
		members:  cfg.Members(),
		boot:     newBootID(),
		timers:   map[string]*armedTimer{},
		down:     map[election.NodeID]bool{},
		in:       make(chan input, 1024),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		view:     election.View{Role: election.Undecided},
		stats:    newStats(),
		drops:    newDropLog(),
		clk:      clock.New(),
		dropFrom: map[election.NodeID]bool{},
	}
	n.routePeer = make(map[string]election.NodeID, len(n.members))
	for _, id := range n.members {
		n.routePeer[serverName(cfg.Cluster, id)] = id
	}
	n.log = logrus.New()
	n.log.Out = os.Stdout
	if cfg.Log != nil {
		n.log.Out = cfg.Log
	}
	n.log.Formatter = &logrus.JSONFormatter{TimestampFormat: time.RFC3339Nano}
	n.log.Level = cfg.LogLevel

	durable, derr := loadDurable(cfg.StateDir, cfg.ID)
	bootFields := logrus.Fields{
		history.LogSchema: history.LogSchemaVersion,
		"algorithm":       cfg.Algorithm,
		"quorum":          cfg.Quorum.String(),
		"options":         cfg.Options.String(),
		"peers":           FormatPeers(cfg.Peers),
		"cluster":         cfg.Cluster,
		"heartbeat":       cfg.Timing.Heartbeat.String(),
		"suspicion":       cfg.Timing.Suspicion.String(),
		"answer":          cfg.Timing.Answer.String(),
		"durable":         durable.Summary(),
		"seed":            cfg.Seed,
		"embedded_nats":   cfg.NATSURL == "",
	}
	if cfg.ClockRate != 0 && cfg.ClockRate != 1 {
		bootFields[LogClockRate] = cfg.ClockRate // only with a fault: a plain boot line is unchanged
	}
	if len(cfg.Program) > 0 && lerr == nil {
		// What the probe learnt: whoever attaches to the cluster judges
		// the program by these without starting it (history.ParseProgramBoot).
		bootFields[history.LogProgram] = strings.Join(cfg.Program, " ")
		bootFields[history.LogClaims] = orEmpty(alg.Claims(cfg.Quorum))
		bootFields[history.LogElectionTypes] = orEmpty(alg.ElectionTypes)
		bootFields[history.LogAnnounceTypes] = orEmpty(alg.AnnounceTypes)
	}
	n.event(history.EventBoot, bootFields, "node starting")
	if derr != nil {
		return nil, derr
	}
	distrusted := n.distrustDurable(&durable)
	if !containsID(cfg.Peers, cfg.ID) {
		return nil, fmt.Errorf("node %d is not among its peers %s", cfg.ID, FormatPeers(cfg.Peers))
	}

	ecfg := election.Config{
		ID:      cfg.ID,
		Members: n.members,
		Quorum:  cfg.Quorum,
		Options: cfg.Options,
		Timing:  cfg.Timing,
		Rand:    election.Seed{cfg.Seed, uint64(cfg.ID)}.Rand(),
		Seed:    election.Seed{cfg.Seed, uint64(cfg.ID)},
		Durable: durable,
	}
	var err error
	if cfg.NewMachine != nil {
		n.m, err = cfg.NewMachine(ecfg)
	} else {
		n.m, err = election.New(cfg.Algorithm, ecfg)
	}
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
	}

	if err := n.startNATS(); err != nil {
		n.closeTransport()
		return nil, err
	}
	if cfg.StatusAddr != "" {
		if err := n.startStatus(); err != nil {
			n.closeTransport()
			return nil, err
		}
	}
	if distrusted {
		// The rejected state may have hidden acknowledgements that a
		// leader's lease still rests on: sit out one suspicion timeout,
		// as a vote barrier would, before taking part.
		select {
		case <-ctx.Done():
		case <-time.After(cfg.Timing.Suspicion):
		}
	}
	if n.srv != nil {
		n.awaitPeers(ctx)
		n.closedWG.Add(1)
		go n.watchRoutes()
	}
	go n.loop()
	return n, nil
}

// EventDurableRejected is the event of the line a node logs when it refuses
// the durable state it found at boot.
const EventDurableRejected = "durable-rejected"

// EventPeerDownHint is the event of the line a node logs when its runtime
// hints to the machine that a peer is gone (a route closed, or "no
// responders"). Like every line that is not a history record, it has no
// seq: seq numbers only what the harness records.
const EventPeerDownHint = "peer-down-hint"

// EventStartingEarly is the event of the line a node logs when it starts
// its machine before every peer was reachable.
const EventStartingEarly = "starting-early"

// Events of the lines that report trouble (warn and error level).
const (
	EventDurableNotSaved = "durable-not-saved" // persisting the durable state failed
	EventNotSent         = "not-sent"          // a message could not be encoded
	EventPublishFailed   = "publish-failed"    // NATS refused a publish
	EventNATSError       = "nats-error"        // the NATS client reported an asynchronous error
	EventNATSServer      = "nats-server"       // the embedded server's own log (trace level only)
)

// note starts an informational line: node, boot and its event, no seq
// (seq numbers only the lines the history records).
func (n *Node) note(ev string) *logrus.Entry {
	return n.log.WithFields(logrus.Fields{history.LogNode: n.cfg.ID, history.LogBoot: n.boot, history.LogEvent: ev})
}

// distrustDurable checks the durable state read at boot. A state that
// cannot be right is reported (event durable-rejected, with why), set aside
// and replaced by the zero state; it reports whether that happened.
func (n *Node) distrustDurable(d *election.Durable) bool {
	problem := checkDurable(*d, n.members)
	if problem == nil {
		return false
	}
	f := logrus.Fields{"durable": d.Summary(), "problem": problem.Error()}
	if moved, err := setAsideDurable(n.cfg.StateDir, n.cfg.ID); err != nil {
		f["set_aside_error"] = err.Error()
	} else {
		f["set_aside"] = moved
	}
	n.note(EventDurableRejected).WithFields(f).Error("durable state rejected: starting from epoch 0 after one suspicion timeout")
	*d = election.Durable{}
	return true
}

// Stop ends the node gracefully: the loop stops taking events, the node
// logs event=stop, flushes what it sent and shuts its server down. It
// returns when all of that is done; calling it again is a no-op.
func (n *Node) Stop() { n.shutdown(false) }

// kill ends the node as SIGKILL would: no stop line, the server's
// connections closed at once (peers see their routes close).
func (n *Node) kill() { n.shutdown(true) }

func (n *Node) shutdown(abrupt bool) {
	n.stopOnce.Do(func() {
		if abrupt {
			n.killed = true
			// Close the transport first so that nothing the machine
			// does after this moment reaches anyone.
			n.closeTransport()
		}
		close(n.quit)
		<-n.loopDone
		if !abrupt {
			n.closeTransport()
		}
		n.closedWG.Wait()
	})
}

// Done is closed when the node's loop has ended.
func (n *Node) Done() <-chan struct{} { return n.loopDone }

// StatusAddr is the status listener's address (useful with port 0).
func (n *Node) StatusAddr() string {
	if n.ln == nil {
		return ""
	}
	return n.ln.Addr().String()
}

// ClusterAddr is the embedded server's route listener (nil with an external
// server).
func (n *Node) ClusterAddr() *net.TCPAddr {
	if n.srv == nil {
		return nil
	}
	return n.srv.ClusterAddr()
}

// ClientURL is a URL for the node's NATS server (for tools and tests).
func (n *Node) ClientURL() string {
	if n.srv == nil {
		return n.cfg.NATSURL
	}
	return n.srv.ClientURL()
}

// View is the node's current view.
func (n *Node) View() election.View {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.view
}

// post queues an input for the loop; it gives up when the loop has ended.
func (n *Node) post(in input) {
	select {
	case n.in <- in:
	case <-n.loopDone:
	case <-n.quit:
	}
}

func (n *Node) loop() {
	defer close(n.loopDone)
	defer func() {
		// A program's process goes back to its pool (election.Releaser).
		if r, ok := n.m.(election.Releaser); ok {
			r.Release()
		}
	}()
	n.started = time.Now()
	if n.cfg.ClockRate != 0 && n.cfg.ClockRate != 1 {
		n.clk.SetRate(0, n.cfg.ClockRate) // a restarted node keeps its rate fault
		n.showFaults()
	}
	n.summary = summaryState{at: n.started, counters: newStats(), view: election.View{Role: election.Undecided}}
	tick := time.NewTicker(n.cfg.SummaryEvery)
	defer tick.Stop()
	if n.cfg.Gated {
		n.gate.closed = true
		n.note(EventGated).Info(`booted gated: the machine starts on a control request {"start":true}`)
	} else {
		n.apply(n.step(election.Event{Kind: election.EventStart}))
	}
	for {
		select {
		case <-n.quit:
			for _, at := range n.timers {
				at.t.Stop()
			}
			if !n.killed {
				// What happened since the last summary, so that
				// the summaries of a boot add up to its totals.
				n.summarize(time.Now())
				n.event(history.EventStop, logrus.Fields{
					history.LogLeader: n.m.View().Leader,
					history.LogEpoch:  n.m.View().Epoch,
					history.LogRole:   n.m.View().Role,
				}, "node stopping")
			}
			return
		case in := <-n.in:
			n.handle(in)
		case now := <-tick.C:
			n.summarize(now)
		}
	}
}

func (n *Node) handle(in input) {
	switch in.kind {
	case inRecv:
		n.receive(in.data)
	case inTimer:
		at, ok := n.timers[in.timer]
		if !ok || at.gen != in.gen {
			return // cancelled or re-armed after this firing was queued
		}
		delete(n.timers, in.timer)
		n.apply(n.step(election.Event{Kind: election.EventTimer, Timer: in.timer}))
	case inPeerDown:
		if n.down[in.peer] || in.peer == n.cfg.ID {
			return
		}
		n.down[in.peer] = true
		n.mu.Lock()
		n.stats.Hints++
		n.mu.Unlock()
		n.note(EventPeerDownHint).WithFields(logrus.Fields{"peer": in.peer, "source": in.source}).Info("peer-down hint")
		if n.gate.closed {
			n.keepHint(in.peer) // the machine hears it when it starts
			return
		}
		n.apply(n.step(election.Event{Kind: election.EventPeerDown, Peer: in.peer}))
	case inPeerUp:
		delete(n.down, in.peer)
	case inControl:
		n.control(in.data, in.reply)
	case inStall:
		select {
		case <-in.stall:
		case <-n.quit:
		}
	}
}

func (n *Node) receive(data []byte) {
	m, err := wire.Decode(data, n.cfg.Cluster, n.members)
	if err == nil && m.To != n.cfg.ID {
		err = &wire.Error{Reason: wire.BadRecipient, Detail: fmt.Sprintf("to %d arrived at node %d", m.To, n.cfg.ID)}
	}
	if err != nil {
		reason := wire.ReasonOf(err)
		n.mu.Lock()
		n.stats.Dropped[string(reason)]++
		n.mu.Unlock()
		if ok, suppressed := n.drops.admit(reason, time.Now()); ok {
			n.event(history.EventDrop, logrus.Fields{
				history.LogReason: string(reason),
				"detail":          clipDetail(err.Error()),
				"bytes":           len(data),
				"prefix":          prefix(data),
				"suppressed":      suppressed,
			}, "message dropped")
		}
		return
	}
	if n.dropFrom[m.From] {
		n.dropCut(m)
		return
	}
	if n.hold.from[m.From] {
		n.holdMessage(m)
		return
	}
	n.deliver(m)
}

// deliver hands m, a message accepted from the inbox (or released from the
// hold set), to the machine, recorded as received now; a gated node keeps
// it until its machine starts.
func (n *Node) deliver(m election.Message) {
	if n.gate.closed {
		n.keepGated(m) // delivered when the machine starts
		return
	}
	delete(n.down, m.From)
	n.mu.Lock()
	n.stats.Received++
	n.stats.byType(m.Type).Received++
	n.mu.Unlock()
	n.messageEvent(history.EventRecv, m)
	n.apply(n.step(election.Event{Kind: election.EventReceive, Msg: m}))
}

// step feeds one event to the machine with the node clock's reading of the
// monotonic time since the loop started: after a freeze (docker pause) the
// machine sees how long it was away before it acts, whatever order its
// overdue timers fire in. Without a clock fault the reading is the true
// time itself.
func (n *Node) step(ev election.Event) []election.Effect {
	ev.Now = n.clk.Read(n.trueElapsed())
	effects := n.m.Step(ev)
	if c, ok := n.m.(election.Crasher); ok && n.failed == nil {
		if err := c.Crashed(); err != nil {
			// A program that failed is this node's crash: say why,
			// then end as a kill does (Run returns the error, and a
			// container exits).
			n.failed = err
			v := n.m.View()
			// The node's last record, as the simulator writes it: a
			// stop whose reason is the failure (a kill writes none).
			n.eventAt(logrus.ErrorLevel, history.EventStop, logrus.Fields{
				history.LogLeader: v.Leader, history.LogEpoch: v.Epoch, history.LogRole: v.Role,
				history.LogReason: history.ReasonProgramFailed + ": " + err.Error(),
			}, "program failed: the node ends as a crash")
			go n.kill()
		}
	}
	return effects
}

// apply carries out a machine's effects in order.
func (n *Node) apply(effects []election.Effect) {
	for _, e := range effects {
		switch e.Kind {
		case election.EffectSend:
			n.send(e.Msg.Clone())
		case election.EffectBroadcast:
			for _, id := range n.members {
				if id == n.cfg.ID {
					continue
				}
				m := e.Msg.Clone()
				m.To = id
				n.send(m)
			}
		case election.EffectSetTimer:
			now := n.trueElapsed()
			n.arm(e.Timer, n.clk.Read(now)+e.After, now)
		case election.EffectCancelTimer:
			if at, ok := n.timers[e.Timer]; ok {
				at.t.Stop()
				delete(n.timers, e.Timer)
			}
		case election.EffectView:
			n.mu.Lock()
			n.view = e.View
			n.mu.Unlock()
			n.event(history.EventView, logrus.Fields{
				history.LogLeader: e.View.Leader,
				history.LogEpoch:  e.View.Epoch,
				history.LogRole:   e.View.Role,
			}, "view changed")
			if n.cfg.OnView != nil {
				n.cfg.OnView(e.View)
			}
		case election.EffectPersist:
			if err := saveDurable(n.cfg.StateDir, n.cfg.ID, e.Persisted()); err != nil {
				n.note(EventDurableNotSaved).WithError(err).Error("durable state not saved")
			}
		}
	}
}

func (n *Node) send(m election.Message) {
	if m.From == election.None {
		m.From = n.cfg.ID
	}
	b, err := wire.Encode(n.cfg.Cluster, m)
	if err != nil {
		n.note(EventNotSent).WithError(err).Error("message not sent")
		return
	}
	n.mu.Lock()
	n.stats.Sent++
	n.stats.byType(m.Type).Sent++
	n.mu.Unlock()
	n.messageEvent(history.EventSend, m)
	// The reply subject is never answered by the peer: it is where our
	// server reports "no responders" when nobody is subscribed to the
	// peer's inbox any more, which is the fast failure hint.
	err = n.nc.PublishMsg(&nats.Msg{Subject: n.inbox(m.To), Reply: n.nackSubject(m.To), Data: b})
	if err != nil {
		n.note(EventPublishFailed).WithField(history.LogTo, m.To).WithError(err).Warn("publish failed")
	}
}

// event writes one event line at info level with the node, boot and the
// next seq. Only the loop goroutine (and Start, before the loop exists)
// calls it.
func (n *Node) event(ev string, f logrus.Fields, msg string) {
	n.eventAt(logrus.InfoLevel, ev, f, msg)
}

// messageEvent writes a send or recv line. These are debug lines: one per
// message, heartbeats included, is what a harness records and what nobody
// reads at a terminal (the summary line counts them instead).
func (n *Node) messageEvent(ev string, m election.Message) {
	if !n.log.IsLevelEnabled(logrus.DebugLevel) {
		return
	}
	n.eventAt(logrus.DebugLevel, ev, msgFields(m), "")
}

// eventAt writes one event line at level. seq numbers only the lines that
// are written: a line the log level leaves out takes no number, so each
// boot's seqs run 1, 2, 3, ... over exactly what is on stdout, at any
// level, and a recorder that sees a seq skip ahead has lost a line.
func (n *Node) eventAt(level logrus.Level, ev string, f logrus.Fields, msg string) {
	if !n.log.IsLevelEnabled(level) {
		return
	}
	n.seq++
	if f == nil {
		f = logrus.Fields{}
	}
	f[history.LogNode] = n.cfg.ID
	f[history.LogBoot] = n.boot
	f[history.LogSeq] = n.seq
	f[history.LogEvent] = ev
	if msg == "" {
		msg = ev
	}
	n.log.WithFields(f).Log(level, msg)
}

func msgFields(m election.Message) logrus.Fields {
	return logrus.Fields{
		history.LogType:    m.Type,
		history.LogFrom:    m.From,
		history.LogTo:      m.To,
		history.LogEpoch:   m.Epoch,
		history.LogMessage: m,
	}
}

func newBootID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return hex.EncodeToString(b[:])
}

// Subjects. Every subject starts with ringleader.<cluster>. so clusters
// sharing one NATS server never see each other's traffic.
func (n *Node) inbox(id election.NodeID) string {
	return fmt.Sprintf("ringleader.%s.node.%d", n.cfg.Cluster, id)
}

func (n *Node) nackSubject(to election.NodeID) string {
	return fmt.Sprintf("ringleader.%s.nack.%d.%d", n.cfg.Cluster, n.cfg.ID, to)
}

// nackPeer extracts the recipient from a nack subject.
func (n *Node) nackPeer(subject string) (election.NodeID, bool) {
	prefix := fmt.Sprintf("ringleader.%s.nack.%d.", n.cfg.Cluster, n.cfg.ID)
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return election.NodeID(id), err == nil && id > 0
}

// orEmpty is s, or an empty list where s is nil: a boot line says [] for
// "none", never null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
