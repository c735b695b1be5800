package node

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/trust"
)

// TestOutsidersCannotConnect: a client without the cluster's secret, or
// with another cluster's, is refused at the door: it can neither publish
// nor subscribe.
func TestOutsidersCannotConnect(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	for name, opts := range map[string][]nats.Option{
		"no credentials":          nil,
		"another secret":          {nats.UserInfo(trust.NodeUser, trust.NewSecret())},
		"a user that is not ours": {nats.UserInfo("admin", c.secret)},
	} {
		nc, err := nats.Connect(c.node(1).ClientURL(), opts...)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("%s: %v, want an authorization violation", name, err)
		}
	}
}

// TestRouteWithoutTheSecretNeverJoins: a NATS server that dials a node's
// route port with the wrong secret is never admitted, while one with the
// right secret is within the same time; so nothing published on the
// outsider's server reaches a node. (Judged from the cluster's side: the
// outsider may count its half-open route for an instant before the node's
// refusal reaches it.)
func TestRouteWithoutTheSecretNeverJoins(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	target := fmt.Sprintf("127.0.0.1:%d", c.peers[0].Port)
	routedServer(t, "rogue", routeURL(target, trust.NewSecret()).String())
	routedServer(t, "member", routeURL(target, c.secret).String())
	admitted := func(name string) bool {
		for _, id := range []election.NodeID{1, 2} {
			rz, err := c.node(id).srv.Routez(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rz.Routes {
				if r.RemoteName == name {
					return true
				}
			}
		}
		return false
	}
	deadline := time.Now().Add(awaitLimit)
	for !admitted("member") {
		if time.Now().After(deadline) {
			t.Fatal("a server with the right secret was never admitted")
		}
		time.Sleep(10 * time.Millisecond) // polling the servers' route tables: nothing to wait on
	}
	if admitted("rogue") {
		t.Fatal("a server with the wrong secret was admitted to the cluster")
	}
}

func routedServer(t *testing.T, name, route string) *server.Server {
	t.Helper()
	opts := &server.Options{ServerName: name, Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	opts.Cluster.Name = "test"
	opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", -1
	opts.Routes = server.RoutesFromStr(route)
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	return srv
}

// TestObserverWatchesButCannotSpeak: the observer account reads every
// message of the cluster and may publish nothing.
func TestObserverWatchesButCannotSpeak(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	denied := make(chan error, 1)
	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.ObserverUser, c.secret),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case denied <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync(trust.Subjects("test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(awaitLimit); err != nil {
		t.Fatalf("the observer saw no traffic: %v", err)
	}
	if err := nc.Publish("ringleader.test.node.1", []byte(`{"v":1,"cluster":"test","msg":{"type":"HEARTBEAT","from":2,"to":1,"epoch":9}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-denied:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Fatalf("publish refused with %v, want a permissions violation", err)
		}
	case <-time.After(awaitLimit):
		t.Fatal("the observer's publish was not refused")
	}
}

// TestForgedMaximumEpochCannotLeaveTheClusterLeaderless replays the attack
// that once poisoned a quorum cluster for good: HEARTBEATs "from the
// leader" with epoch 2^64−1 (and with the first epoch above MaxEpoch). Even
// sent by an insider holding the secret, each is refused as bad-epoch and
// counted, no view or epoch moves, and the cluster still elects a new
// leader when the real one dies.
func TestForgedMaximumEpochCannotLeaveTheClusterLeaderless(t *testing.T) {
	c := newTestCluster(t, "bully", 1, 2, 3)
	c.quorum = election.Majority
	c.startAll()
	c.awaitLeader(3)
	before := c.node(1).View().Epoch

	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.NodeUser, c.secret))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, epoch := range []uint64{math.MaxUint64, election.MaxEpoch + 1} {
		for _, to := range []election.NodeID{1, 2} {
			forged, _ := json.Marshal(map[string]any{"v": 1, "cluster": "test", "msg": map[string]any{"type": "HEARTBEAT", "from": 3, "to": to, "epoch": epoch, "seq": 1}})
			if err := nc.Publish(fmt.Sprintf("ringleader.test.node.%d", to), forged); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []election.NodeID{1, 2} {
		c.awaitLog(fmt.Sprintf("node %d refusing the forged epochs", id), func(l logLine) bool {
			return l.node == id && l.ok && l.rec.Kind == history.KindDrop && l.rec.Reason == "bad-epoch"
		})
		// The second drop of the reason within a second gets no line
		// of its own: wait for the counter, which every drop moves.
		deadline := time.Now().Add(awaitLimit)
		for c.node(id).Status().Counters.Dropped["bad-epoch"] < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := c.node(id).Status().Counters.Dropped["bad-epoch"]; got != 2 {
			t.Errorf("node %d counted %d bad-epoch drops, want 2", id, got)
		}
		if v := c.node(id).View(); v.Leader != 3 || v.Epoch > election.MaxEpoch {
			t.Errorf("node %d views %v after the forgery", id, v)
		}
	}
	c.kill(3)
	c.awaitLeader(2)
	if e := c.node(1).View().Epoch; e > before+10 {
		t.Errorf("epoch went from %d to %d across one failover", before, e)
	}
}

// TestPoisonedDurableStateIsReportedNotTrusted: a node whose state file
// holds an epoch no run can reach says so at boot, sets the file aside, and
// takes part from epoch 0; the cluster elects as usual.
func TestPoisonedDurableStateIsReportedNotTrusted(t *testing.T) {
	c := newTestCluster(t, "bully", 1, 2, 3)
	c.quorum = election.Majority
	poisoned := fmt.Sprintf(`{"epoch":%d,"voted_epoch":%d,"voted_for":3}`, uint64(math.MaxUint64), uint64(math.MaxUint64))
	if err := os.WriteFile(durableFile(c.dirs[1], 1), []byte(poisoned), 0o600); err != nil {
		t.Fatal(err)
	}
	c.startAll()
	l := c.awaitLog("node 1 rejecting its durable state", func(l logLine) bool {
		return l.node == 1 && strings.Contains(l.raw, `"event":"`+EventDurableRejected+`"`)
	})
	if !strings.Contains(l.raw, "above the largest") || !strings.Contains(l.raw, ".rejected") {
		t.Errorf("the rejection does not say why or where the file went: %s", l.raw)
	}
	c.awaitLeader(3)
	if v := c.node(1).View(); v.Epoch > 100 {
		t.Errorf("node 1 views %v: the poisoned epoch was adopted", v)
	}
	if _, err := os.Stat(durableFile(c.dirs[1], 1) + ".rejected"); err != nil {
		t.Errorf("the rejected file was not kept: %v", err)
	}
}

// TestDropLinesAreBoundedAndRateLimited: a 60 KB type field costs a short
// line, not 60 KB of log, and a flood of garbage is counted in full but
// logged about once a second per reason.
func TestDropLinesAreBoundedAndRateLimited(t *testing.T) {
	// 30 MB of JSON through the race detector: seconds of a core.
	dockertest.CPUBound(t)
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.NodeUser, c.secret))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	huge := fmt.Sprintf(`{"v":1,"cluster":"test","msg":{"type":"%s","from":2,"to":1}}`, strings.Repeat("A", 60<<10))
	const flood = 500
	began := time.Now()
	for range flood {
		if err := nc.Publish("ringleader.test.node.1", []byte(huge)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A loaded machine reads the flood slowly (271 drops in 20 s in one
	// full suite); what would be wrong is a count that stops moving.
	counted, moved := uint64(0), time.Now()
	for counted < flood {
		if n := c.node(1).Status().Counters.Dropped["bad-type"]; n != counted {
			counted, moved = n, time.Now()
		}
		if time.Since(moved) > awaitLimit {
			t.Fatalf("counted %d of %d drops, and no more for %v", counted, flood, awaitLimit)
		}
		time.Sleep(10 * time.Millisecond) // polling a counter: nothing to wait on
	}
	var lines []string
	for _, l := range c.allLines() {
		if l.node == 1 && l.ok && l.rec.Kind == history.KindDrop {
			lines = append(lines, l.raw)
		}
	}
	// The rule is one line a second per reason: a flood that took the
	// node s seconds to read on a loaded machine may log s+1 lines, never
	// one per drop.
	allowed := int(time.Since(began)/dropLogEvery) + 1
	if len(lines) == 0 || len(lines) > allowed {
		t.Fatalf("%d drop lines for %d drops read in %v; want at most %d (one a second)", len(lines), flood, time.Since(began).Round(time.Millisecond), allowed)
	}
	for _, l := range lines {
		if len(l) > 1024 {
			t.Fatalf("a drop line of %d bytes: %.200s…", len(l), l)
		}
	}
}

// TestWatcherDoesNotSilenceHints: a watcher subscribed to every subject of
// the cluster (the documented tap) keeps interest in a killed node's inbox
// alive. Hints come from the route, so the survivors are still told at
// once, while the watcher is attached.
func TestWatcherDoesNotSilenceHints(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.startAll()
	c.awaitLeader(3)
	for _, id := range []election.NodeID{1, 2} {
		nc, err := nats.Connect(c.node(id).ClientURL(), nats.UserInfo(trust.ObserverUser, c.secret))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := nc.Subscribe(trust.Subjects("test"), func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	c.kill(3)
	for _, id := range []election.NodeID{1, 2} {
		c.awaitLog(fmt.Sprintf("node %d's route hint for 3 with a watcher attached", id), func(l logLine) bool {
			return l.node == id && strings.Contains(l.raw, `"event":"`+EventPeerDownHint+`"`) && strings.Contains(l.raw, `"peer":3`) && strings.Contains(l.raw, `"source":"route"`)
		})
	}
	c.awaitLeader(2)
}
