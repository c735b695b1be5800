package node

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/freeport"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/sirupsen/logrus"
)

// awaitLimit only bounds a failing test; conditions are awaited by watching
// views and log lines, never by sleeping.
const awaitLimit = 20 * time.Second

// testCluster runs n in-process nodes, each with its own embedded NATS
// server on 127.0.0.1, meshed over routes on free ports.
type testCluster struct {
	t         testing.TB
	algorithm string
	// program, when set, is hosted by every node instead of algorithm.
	program []string
	quorum  election.QuorumMode
	timing  election.Timing
	peers   []Peer
	dirs    map[election.NodeID]string
	// natsURL, when set, makes every node use that server instead of an
	// embedded one.
	natsURL string
	// secret is this cluster's own, made fresh for it as a harness run's.
	secret string
	// logLevel is the nodes' log level: debug, as the harness runs them
	// (a line per message), unless a test says otherwise.
	logLevel logrus.Level
	// summaryEvery is the nodes' Config.SummaryEvery (0: the default).
	summaryEvery time.Duration
	// gated boots the nodes gated (Config.Gated).
	gated bool

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every view or log line
	nodes   map[election.NodeID]*Node
	views   map[election.NodeID]election.View // live nodes only
	sinks   []*logSink
	hints   []hint
	// incarnation counts starts and kills per node, so that a view
	// reported by a node that was just killed is ignored.
	incarnation map[election.NodeID]int
}

type hint struct {
	at         time.Time
	node, peer election.NodeID
}

func newTestCluster(t testing.TB, algorithm string, ids ...election.NodeID) *testCluster {
	t.Helper()
	c := &testCluster{
		t: t, algorithm: algorithm, timing: election.DefaultTiming,
		dirs: map[election.NodeID]string{}, changed: make(chan struct{}),
		nodes: map[election.NodeID]*Node{}, views: map[election.NodeID]election.View{},
		incarnation: map[election.NodeID]int{}, secret: trust.NewSecret(),
		logLevel: logrus.DebugLevel,
	}
	for _, id := range ids {
		c.peers = append(c.peers, Peer{ID: id, Host: "127.0.0.1", Port: freePort(t)})
		c.dirs[id] = t.TempDir()
	}
	t.Cleanup(c.stopAll)
	return c
}

func freePort(t testing.TB) int { return freeport.Pick(t) }

func (c *testCluster) config(id election.NodeID) Config {
	var port int
	for _, p := range c.peers {
		if p.ID == id {
			port = p.Port
		}
	}
	sink := &logSink{cluster: c, node: id}
	c.mu.Lock()
	c.sinks = append(c.sinks, sink)
	c.incarnation[id]++
	inc := c.incarnation[id]
	c.mu.Unlock()
	return Config{
		ID: id, Peers: c.peers, Algorithm: c.algorithm, Program: c.program, Quorum: c.quorum, Timing: c.timing,
		Cluster: "test", Secret: c.secret, NATSURL: c.natsURL, ClientPort: -1, ClusterPort: port, ListenHost: "127.0.0.1",
		StateDir: c.dirs[id], Seed: uint64(id), Log: sink, StatusAddr: "127.0.0.1:0",
		LogLevel: c.logLevel, SummaryEvery: c.summaryEvery, Gated: c.gated,
		OnView: func(v election.View) {
			c.mu.Lock()
			if c.incarnation[id] == inc { // not a killed node's last gasp
				c.views[id] = v
				c.notifyLocked()
			}
			c.mu.Unlock()
		},
	}
}

func (c *testCluster) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// start starts the given nodes concurrently, as containers start.
func (c *testCluster) start(ids ...election.NodeID) {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		cfg := c.config(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := Start(context.Background(), cfg)
			errs[i] = err
			if err == nil {
				c.mu.Lock()
				c.nodes[id] = n
				c.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			c.t.Fatalf("start node %d: %v", ids[i], err)
		}
	}
}

// startConfig starts one node with a config a test has changed (from
// c.config).
func (c *testCluster) startConfig(cfg Config) {
	c.t.Helper()
	n, err := Start(context.Background(), cfg)
	if err != nil {
		c.t.Fatalf("start node %d: %v", cfg.ID, err)
	}
	c.mu.Lock()
	c.nodes[cfg.ID] = n
	c.mu.Unlock()
}

func (c *testCluster) startAll() {
	ids := make([]election.NodeID, len(c.peers))
	for i, p := range c.peers {
		ids[i] = p.ID
	}
	c.start(ids...)
}

func (c *testCluster) node(id election.NodeID) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

// kill ends a node abruptly (its server's connections close at once), as
// docker kill does.
func (c *testCluster) kill(id election.NodeID) {
	n := c.forget(id)
	n.kill()
}

func (c *testCluster) stop(id election.NodeID) {
	n := c.forget(id)
	n.Stop()
}

func (c *testCluster) forget(id election.NodeID) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[id]
	if n == nil {
		c.t.Fatalf("node %d is not running", id)
	}
	delete(c.nodes, id)
	delete(c.views, id)
	c.incarnation[id]++
	c.notifyLocked()
	return n
}

func (c *testCluster) stopAll() {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = map[election.NodeID]*Node{}
	c.mu.Unlock()
	for _, n := range nodes {
		n.Stop()
	}
}

// await blocks until cond holds over the live nodes' views.
func (c *testCluster) await(what string, cond func(views map[election.NodeID]election.View) bool) {
	c.t.Helper()
	limit := time.NewTimer(awaitLimit)
	defer limit.Stop()
	for {
		c.mu.Lock()
		ok := len(c.views) == len(c.nodes) && cond(c.views)
		ch := c.changed
		summary := fmt.Sprint(c.views)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-limit.C:
			c.t.Fatalf("gave up waiting for %s after %v; views %s", what, awaitLimit, summary)
		}
	}
}

// awaitLeader waits until every live node views leader.
func (c *testCluster) awaitLeader(leader election.NodeID) {
	c.t.Helper()
	c.await(fmt.Sprintf("every live node to view leader %d", leader), func(views map[election.NodeID]election.View) bool {
		return allView(views, leader)
	})
}

func allView(views map[election.NodeID]election.View, leader election.NodeID) bool {
	for _, v := range views {
		if v.Leader != leader {
			return false
		}
	}
	return true
}

// awaitLog blocks until some line logged by the cluster satisfies cond.
func (c *testCluster) awaitLog(what string, cond func(l logLine) bool) logLine {
	c.t.Helper()
	limit := time.NewTimer(awaitLimit)
	defer limit.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		var found *logLine
		for _, s := range c.sinks {
			for i := range s.lines {
				if cond(s.lines[i]) {
					found = &s.lines[i]
					break
				}
			}
		}
		c.mu.Unlock()
		if found != nil {
			return *found
		}
		select {
		case <-ch:
		case <-limit.C:
			c.t.Fatalf("gave up waiting for a log line: %s", what)
		}
	}
}

// logLine is one line a node wrote, with its parse result.
type logLine struct {
	node election.NodeID
	at   time.Time // when the sink received it
	raw  string
	rec  history.Record
	ok   bool
	err  error
}

// logSink collects one node's log lines and parses every one with
// history.ParseNodeLog, as the harness will.
type logSink struct {
	cluster *testCluster
	node    election.NodeID
	buf     bytes.Buffer
	lines   []logLine // guarded by cluster.mu
}

func (s *logSink) Write(p []byte) (int, error) {
	now := time.Now()
	c := s.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	s.buf.Write(p)
	for {
		line, err := s.buf.ReadString('\n')
		if err != nil {
			s.buf.WriteString(line) // partial line: keep for the next Write
			break
		}
		line = strings.TrimSuffix(line, "\n")
		rec, ok, perr := history.ParseNodeLog([]byte(line))
		s.lines = append(s.lines, logLine{node: s.node, at: now, raw: line, rec: rec, ok: ok, err: perr})
		if strings.Contains(line, `"peer-down hint"`) {
			c.hints = append(c.hints, hint{at: now, node: s.node})
		}
	}
	c.notifyLocked()
	return len(p), nil
}

// allLines returns a copy of every line logged so far, by node.
func (c *testCluster) allLines() []logLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []logLine
	for _, s := range c.sinks {
		out = append(out, s.lines...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].node < out[j].node })
	return out
}
