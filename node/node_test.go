package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/sirupsen/logrus"
)

// networkAlgorithms are the registered algorithms the node can run: all but
// the simulator-only ones (plus this package's test machine).
func networkAlgorithms() []election.Algorithm {
	var out []election.Algorithm
	for _, a := range election.Algorithms() {
		if !a.SimOnly {
			out = append(out, a)
		}
	}
	return out
}

// TestEveryAlgorithmElectsSurvivesACrashAndTakesBack runs each algorithm
// (and each with a majority quorum where it has one) on three real nodes: the highest ID is elected; killing it (connections
// closed, as docker kill) leaves the other two agreeing on a new leader, the
// highest of them where the algorithm claims bully-max; restarting it gives
// the lead back to it where the algorithm claims bully-max.
func TestEveryAlgorithmElectsSurvivesACrashAndTakesBack(t *testing.T) {
	dockertest.CPUBound(t)
	type run struct {
		a election.Algorithm
		q election.QuorumMode
	}
	var runs []run
	for _, a := range networkAlgorithms() {
		for _, q := range a.Quorums {
			runs = append(runs, run{a, q})
		}
	}
	for _, r := range runs {
		a := r.a
		name := a.Name
		if r.q != election.NoQuorum {
			name += "/quorum=" + string(r.q)
		}
		t.Run(name, func(t *testing.T) {
			highest := a.Claim(r.q, election.HighestWins)
			c := newTestCluster(t, a.Name, 1, 2, 3)
			c.quorum = r.q
			c.startAll()
			if highest {
				c.awaitLeader(3)
			} else {
				c.await("agreement on a leader", agreeOnLive)
			}

			c.kill(3)
			if highest {
				c.awaitLeader(2)
			} else {
				c.await("agreement on a survivor", agreeOnLive)
			}

			c.start(3)
			if highest {
				c.awaitLeader(3)
			} else {
				c.await("agreement after the restart", agreeOnLive)
			}
			c.stopAll()
			checkLogs(t, c.allLines(), c.logLevel)
		})
	}
}

// agreeOnLive: every live node views the same leader, and that leader is
// one of them.
func agreeOnLive(views map[election.NodeID]election.View) bool {
	var leader election.NodeID
	for _, v := range views {
		if v.Leader == election.None || (leader != election.None && v.Leader != leader) {
			return false
		}
		leader = v.Leader
	}
	_, live := views[leader]
	return live
}

// checkLogs proves the log contract on everything a run at level wrote:
// every line is JSON that history.ParseNodeLog accepts and has an event;
// each boot's first event line is event=boot; seq runs from 1 without gaps
// over the lines written (send and recv lines at debug only); a graceful
// stop ends its boot.
func checkLogs(t *testing.T, lines []logLine, level logrus.Level) {
	t.Helper()
	type bootState struct {
		node    election.NodeID
		lastSeq uint64
		stopped bool
	}
	boots := map[string]*bootState{}
	events := map[history.Kind]int{}
	for _, l := range lines {
		if l.err != nil {
			t.Fatalf("node %d wrote a line ParseNodeLog rejects (%v): %s", l.node, l.err, l.raw)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(l.raw), &obj); err != nil {
			t.Fatalf("node %d wrote a non-JSON line: %s", l.node, l.raw)
		}
		if ev, _ := obj[history.LogEvent].(string); ev == "" {
			t.Fatalf("node %d wrote a line without an event: %s", l.node, l.raw)
		}
		if !l.ok {
			if _, has := obj[history.LogSeq]; has {
				t.Fatalf("node %d wrote an informational line with a seq: %s", l.node, l.raw)
			}
			continue
		}
		r := l.rec
		events[r.Kind]++
		if r.Node != l.node {
			t.Fatalf("node %d logged node=%d: %s", l.node, r.Node, l.raw)
		}
		b := boots[r.Boot]
		if b == nil {
			if r.Kind != history.KindBoot || r.Seq != 1 {
				t.Fatalf("boot %s of node %d starts with %s seq %d, want boot seq 1: %s", r.Boot, l.node, r.Kind, r.Seq, l.raw)
			}
			b = &bootState{node: r.Node}
			boots[r.Boot] = b
		} else if r.Seq != b.lastSeq+1 {
			t.Fatalf("boot %s of node %d: seq %d follows %d: %s", r.Boot, l.node, r.Seq, b.lastSeq, l.raw)
		}
		if b.stopped {
			t.Fatalf("boot %s of node %d logged after its stop: %s", r.Boot, l.node, l.raw)
		}
		b.lastSeq = r.Seq
		b.stopped = r.Kind == history.KindStop
		if (r.Kind == history.KindSend || r.Kind == history.KindRecv) && (r.Msg == nil || r.Msg.Type == "") {
			t.Fatalf("%s line without its message: %s", r.Kind, l.raw)
		}
	}
	want := []history.Kind{history.KindBoot, history.KindView, history.KindStop}
	perMessage := []history.Kind{history.KindSend, history.KindRecv}
	if level >= logrus.DebugLevel {
		want = append(want, perMessage...)
	} else {
		for _, k := range perMessage {
			if events[k] != 0 {
				t.Errorf("%d %s lines at level %s, want none below debug", events[k], k, level)
			}
		}
	}
	for _, k := range want {
		if events[k] == 0 {
			t.Errorf("no %s event in the logs at level %s (events seen: %v)", k, level, events)
		}
	}
}

// TestGarbageAndForeignMessagesAreDroppedAndCounted publishes bytes that are
// not ours onto a node's inbox: each is dropped with its reason, counted,
// logged as event=drop, and the cluster keeps electing afterwards.
func TestGarbageAndForeignMessagesAreDroppedAndCounted(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.startAll()
	c.awaitLeader(3)

	// An insider: garbage from outside never gets this far (trust_test.go).
	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.NodeUser, c.secret))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subject := "ringleader.test.node.1"
	bad := map[string]string{
		"malformed":       `{"v":1,"cluster":"test","msg":`,
		"foreign-cluster": `{"v":1,"cluster":"other","msg":{"type":"HEARTBEAT","from":3,"to":1,"epoch":99}}`,
		"wrong-version":   `{"v":9,"cluster":"test","msg":{}}`,
		"unknown-sender":  `{"v":1,"cluster":"test","msg":{"type":"HEARTBEAT","from":42,"to":1}}`,
		"bad-recipient":   `{"v":1,"cluster":"test","msg":{"type":"HEARTBEAT","from":3,"to":2}}`,
		"bad-type":        `{"v":1,"cluster":"test","msg":{"type":"<script>","from":3,"to":1}}`,
	}
	for _, data := range bad {
		if err := nc.Publish(subject, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for reason := range bad {
		c.awaitLog("a drop line with reason "+reason, func(l logLine) bool {
			return l.node == 1 && l.ok && l.rec.Kind == history.KindDrop && l.rec.Reason == reason
		})
	}
	st := c.node(1).Status()
	for reason := range bad {
		if st.Counters.Dropped[reason] != 1 {
			t.Errorf("dropped[%s] = %d, want 1 (counters %+v)", reason, st.Counters.Dropped[reason], st.Counters.Dropped)
		}
	}

	// Still working: a crash of the leader is still noticed and handled.
	c.kill(3)
	c.awaitLeader(2)
	c.stopAll()
	checkLogs(t, c.allLines(), c.logLevel)
}

// TestKilledPeerIsHintedAtOnce: when a peer's process dies its routes close,
// and the survivors hand the machine a peer-down hint without waiting for
// any timeout.
func TestKilledPeerIsHintedAtOnce(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.startAll()
	c.awaitLeader(3)
	c.kill(3)
	for _, id := range []election.NodeID{1, 2} {
		l := c.awaitLog(fmt.Sprintf("node %d hinted that 3 is down", id), func(l logLine) bool {
			return l.node == id && strings.Contains(l.raw, `"peer-down hint"`) && strings.Contains(l.raw, `"peer":3`)
		})
		if !strings.Contains(l.raw, `"source"`) {
			t.Errorf("hint line without its source: %s", l.raw)
		}
	}
	c.awaitLeader(2)
	if h := c.node(1).Status().Counters.Hints; h == 0 {
		t.Errorf("node 1 counted no hints")
	}
}

// TestDurableStateSurvivesRestart: what the machine persisted is handed
// back on the next start (the test machine persists its epoch).
func TestDurableStateSurvivesRestart(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	c.kill(2)
	c.awaitLeader(1)
	before := c.node(1).View().Epoch
	c.stop(1)
	c.start(1)
	l := c.awaitLog("node 1's second boot", func(l logLine) bool {
		return l.node == 1 && l.ok && l.rec.Kind == history.KindBoot && strings.Contains(l.raw, fmt.Sprintf(`"durable":{"epoch":%d,`, before))
	})
	_ = l
	c.awaitLeader(1)
	if after := c.node(1).View().Epoch; after <= before {
		t.Fatalf("epoch after restart %d, want more than the persisted %d", after, before)
	}
}

func TestStatusReportsViewAndCounters(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	st := c.node(1).Status()
	if st.Node != 1 || st.View.Leader != 2 || st.Boot == "" || !st.Healthy {
		t.Fatalf("status %+v: want node 1, leader 2, a boot ID, healthy", st)
	}
	if st.Counters.Sent == 0 || st.Counters.ByType["HEARTBEAT"] == nil || st.Counters.ByType["HEARTBEAT"].Received == 0 {
		t.Fatalf("counters %+v: want heartbeats sent and received", st.Counters)
	}
	if !slices.Contains([]election.Role{election.Follower}, st.View.Role) {
		t.Fatalf("role %s, want follower", st.View.Role)
	}

	base := "http://" + c.node(1).StatusAddr()
	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("GET /status: %v", err)
	}
	for _, key := range []string{"node", "boot", "view", "counters", "healthy"} {
		if _, ok := got[key]; !ok {
			t.Errorf("GET /status lacks %q: %v", key, got)
		}
	}
	if v, _ := got["view"].(map[string]any); v["leader"] != float64(2) {
		t.Errorf("GET /status view %v, want leader 2", got["view"])
	}
	h, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	h.Body.Close()
	if h.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: %s, want 200 while NATS is connected", h.Status)
	}
}

// TestExternalServerAndNoRespondersHint: two nodes share one external NATS
// server (no embedded servers, so no route watching). When one dies, the
// other's next message to it is answered by the server with "no
// responders", which reaches the machine as a peer-down hint.
func TestExternalServerAndNoRespondersHint(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatal("external NATS server did not start")
	}
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.natsURL = srv.ClientURL()
	c.startAll()
	c.awaitLeader(2)
	c.kill(2)
	c.awaitLog("node 1's no-responders hint for 2", func(l logLine) bool {
		return l.node == 1 && strings.Contains(l.raw, `"peer-down hint"`) && strings.Contains(l.raw, `"source":"no-responders"`) && strings.Contains(l.raw, `"peer":2`)
	})
	c.awaitLeader(1)
	c.stopAll()
	checkLogs(t, c.allLines(), c.logLevel)
}
