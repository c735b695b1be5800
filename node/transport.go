package node

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/routes"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/sirupsen/logrus"
)

func (n *Node) serverOptions() *server.Options {
	c := n.cfg
	opts := &server.Options{
		ServerName:      serverName(c.Cluster, c.ID),
		Host:            c.ListenHost,
		Port:            c.ClientPort,
		NoSigs:          true,
		NoLog:           c.LogLevel < logrus.TraceLevel,
		NoSystemAccount: true,
		MaxPayload:      1 << 20,
	}
	if opts.Host == "" {
		opts.Host = "0.0.0.0"
	}
	if opts.Port == 0 {
		opts.Port = 4222
	}
	opts.Cluster.Name = c.Cluster
	opts.Cluster.Host = opts.Host
	opts.Cluster.Port = c.ClusterPort
	if opts.Cluster.Port == 0 {
		opts.Cluster.Port = DefaultClusterPort
	}
	// Route pings per package routes: a silently dead route is noticed
	// in about a second (the NATS default takes minutes), at a ping load
	// per server that does not grow with the cluster. One connection per
	// pair (PoolSize -1) because a pool heals unevenly after a partition
	// and loses messages; compression off because it only adds latency
	// to tiny messages.
	opts.Cluster.PoolSize = -1
	opts.Cluster.Compression = server.CompressionOpts{Mode: server.CompressionOff}
	opts.Cluster.PingInterval = routes.PingInterval(len(c.Peers))
	opts.Cluster.MaxPingsOut = routes.MaxPingsOut
	authorize(opts, c.Cluster, c.Secret)
	for _, p := range c.Peers {
		if p.ID == c.ID {
			continue // a route to ourselves would be refused anyway
		}
		opts.Routes = append(opts.Routes, routeURL(hostPort(p.Host, p.Port), c.Secret))
	}
	return opts
}

// The node's connection to its own embedded server crosses no network,
// but on a machine starved of CPU (64 containers starting on 2 cores) its
// handshake took longer than nats.go's 2 s and the server's 2 s auth
// timeout, and the node exited ("read pipe: i/o timeout"). Nothing else can
// answer, so the node keeps trying, each attempt given inProcessAttempt,
// for inProcessConnectTimeout in all.
const (
	inProcessAttempt        = 5 * time.Second
	inProcessConnectTimeout = 30 * time.Second
)

// connect connects to the node's NATS server at url, trying again while an
// embedded server's handshake times out (see inProcessConnectTimeout). An
// external server (NATSURL) gets one attempt: its address may be wrong,
// and saying so at once is kinder than waiting.
func (n *Node) connect(url string, nopts []nats.Option) (*nats.Conn, error) {
	deadline := time.Now().Add(inProcessConnectTimeout)
	for {
		nc, err := nats.Connect(url, nopts...)
		if err == nil || n.srv == nil || time.Now().After(deadline) {
			return nc, err
		}
		n.note(EventNATSError).WithError(err).Warn("connection to the embedded NATS server failed; trying again")
		time.Sleep(routes.Redial)
	}
}

func hostPort(h string, p int) string {
	if len(h) > 0 && h[0] != '[' && containsColon(h) {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(p)
}

func containsColon(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return true
		}
	}
	return false
}

func (n *Node) startNATS() error {
	c := n.cfg
	nopts := []nats.Option{
		nats.Name(fmt.Sprintf("ringleader-node-%d", c.ID)),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			n.note(EventNATSError).WithError(err).Warn("nats error")
		}),
	}
	if c.Secret != "" {
		nopts = append(nopts, nats.UserInfo(trust.NodeUser, c.Secret))
	}
	url := c.NATSURL
	if url == "" {
		if c.Secret == "" {
			return fmt.Errorf("node %d: no cluster secret: the embedded NATS server admits no one without one (set %s)", c.ID, trust.SecretEnv)
		}
		srv, err := server.NewServer(n.serverOptions())
		if err != nil {
			return fmt.Errorf("node %d: embedded NATS server: %w", c.ID, err)
		}
		if c.LogLevel >= logrus.TraceLevel {
			// Only at trace: at debug the harness records every
			// message, and the server's own chatter would bury it.
			srv.SetLoggerV2(natsLogger{n.note(EventNATSServer).WithField("nats", true)}, true, true, false)
		}
		srv.Start()
		n.srv = srv
		if !srv.ReadyForConnections(10 * time.Second) {
			return fmt.Errorf("node %d: embedded NATS server did not listen on %s:%d (client) and %s:%d (cluster) within 10s; is a port taken?", c.ID, c.ListenHost, c.ClientPort, c.ListenHost, c.ClusterPort)
		}
		nopts = append(nopts, nats.InProcessServer(srv), nats.Timeout(inProcessAttempt))
		url = srv.ClientURL()
	}
	nc, err := n.connect(url, nopts)
	if err != nil {
		return fmt.Errorf("node %d: connect to NATS at %s: %w", c.ID, url, err)
	}
	n.nc = nc
	if _, err := nc.Subscribe(n.inbox(c.ID), func(m *nats.Msg) {
		n.post(input{kind: inRecv, data: m.Data})
	}); err != nil {
		return fmt.Errorf("node %d: subscribe to its inbox: %w", c.ID, err)
	}
	// The control subject: only the control account may publish there
	// (docs/trust.md); the loop applies a request and then answers it.
	if _, err := nc.Subscribe(trust.ControlSubject(c.Cluster, int(c.ID)), func(m *nats.Msg) {
		n.post(input{kind: inControl, data: m.Data, reply: m.Reply})
	}); err != nil {
		return fmt.Errorf("node %d: subscribe to its control subject: %w", c.ID, err)
	}
	if _, err := nc.Subscribe(fmt.Sprintf("ringleader.%s.nack.%d.*", c.Cluster, c.ID), func(m *nats.Msg) {
		if m.Header.Get("Status") != "503" {
			return
		}
		if peer, ok := n.nackPeer(m.Subject); ok {
			n.post(input{kind: inPeerDown, peer: peer, source: "no-responders"})
		}
	}); err != nil {
		return fmt.Errorf("node %d: subscribe to its no-responders subject: %w", c.ID, err)
	}
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("node %d: NATS flush: %w", c.ID, err)
	}
	return nil
}

// serverName is the embedded server's name for node id: how a route's
// remote end is told apart.
func serverName(cluster string, id election.NodeID) string {
	return fmt.Sprintf("%s-node-%d", cluster, id)
}

// peerRoutes reports, per peer, whether the embedded server holds a route
// to that peer's server. A route is a connection between two servers of the
// cluster, authenticated with the cluster's secret: no client, whatever it
// subscribes to, can make one look alive or dead.
func (n *Node) peerRoutes() map[election.NodeID]bool {
	out := make(map[election.NodeID]bool, len(n.members))
	for _, id := range n.members {
		if id != n.cfg.ID {
			out[id] = false
		}
	}
	rz, err := n.srv.Routez(nil)
	if err != nil {
		return out
	}
	for _, r := range rz.Routes {
		if id, ok := n.routePeer[r.RemoteName]; ok {
			out[id] = true
		}
	}
	return out
}

// peerReady reports, per peer, whether the peer can be sent to: a route to
// its server is up and its inbox is subscribed. Only the start-up wait uses
// interest, and only together with the route: a watcher's wildcard
// subscription matches every inbox, so interest alone proves nothing.
func (n *Node) peerReady() map[election.NodeID]bool {
	acc := n.srv.GlobalAccount()
	out := n.peerRoutes()
	for id, up := range out {
		out[id] = up && acc.SubscriptionInterest(n.inbox(id))
	}
	return out
}

// awaitPeers waits until every peer's inbox is reachable, or PeerWait
// passes (peers may be down; the machine copes with that).
func (n *Node) awaitPeers(ctx context.Context) {
	deadline := time.NewTimer(n.cfg.PeerWait)
	defer deadline.Stop()
	tick := time.NewTicker(routes.PollInterval(len(n.members)))
	defer tick.Stop()
	for {
		all := true
		for _, up := range n.peerReady() {
			all = all && up
		}
		if all {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			n.note(EventStartingEarly).WithField("reachable", n.peerReady()).Info("starting before every peer is reachable")
			return
		case <-tick.C:
		}
	}
}

// watchRoutes turns a peer's route closing into a peer-down hint. A killed
// peer's kernel closes the route at once and the hint follows within one
// poll (routes.PollInterval); a paused or cut-off peer is noticed only when route pings time
// out. Hints come from the route, never from subject interest: a
// subscriber to 'ringleader.>' keeps interest in a dead node's inbox alive
// (measured: failover 692 ms instead of 33 ms while one was attached).
//
// Each poll only counts the routes, which is cheap; the per-peer listing
// (Routez, which builds a report of every route) runs when the count moved,
// and once a second in case one route closed as another opened. Listing at
// every poll cost each of 64 nodes about 5 % of a core.
func (n *Node) watchRoutes() {
	defer n.closedWG.Done()
	prev, count := n.peerRoutes(), n.srv.NumRoutes()
	poll := routes.PollInterval(len(n.members))
	tick := time.NewTicker(poll)
	defer tick.Stop()
	listEvery := int(time.Second / poll)
	for polls := 1; ; polls++ {
		select {
		case <-n.quit:
			return
		case <-tick.C:
		}
		c := n.srv.NumRoutes()
		if c == count && polls%listEvery != 0 {
			continue
		}
		count = c
		now := n.peerRoutes()
		for id, up := range now {
			switch {
			case prev[id] && !up:
				n.post(input{kind: inPeerDown, peer: id, source: "route"})
			case !prev[id] && up:
				n.post(input{kind: inPeerUp, peer: id})
			}
		}
		prev = now
	}
}

func (n *Node) closeTransport() {
	if n.status != nil {
		n.status.Close()
	}
	if n.nc != nil {
		if !n.killed {
			// Drain delivers what is queued and flushes what we sent.
			done := make(chan struct{})
			n.nc.SetClosedHandler(func(*nats.Conn) { close(done) })
			if err := n.nc.Drain(); err == nil {
				select {
				case <-done:
				case <-time.After(2 * time.Second):
				}
			}
		}
		n.nc.Close()
	}
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
}

// natsLogger routes the embedded server's own logs into logrus (used only
// with --log-level trace): useful when chasing a route problem, noise
// otherwise.
type natsLogger struct{ e *logrus.Entry }

func (l natsLogger) Noticef(format string, v ...any) { l.e.Debugf(format, v...) }
func (l natsLogger) Warnf(format string, v ...any)   { l.e.Debugf(format, v...) }
func (l natsLogger) Fatalf(format string, v ...any)  { l.e.Errorf(format, v...) }
func (l natsLogger) Errorf(format string, v ...any)  { l.e.Debugf(format, v...) }
func (l natsLogger) Debugf(format string, v ...any)  { l.e.Debugf(format, v...) }
func (l natsLogger) Tracef(format string, v ...any)  { l.e.Tracef(format, v...) }
