package node

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/sirupsen/logrus"
)

// summaryLine is what a test reads from a summary line.
type summaryLine struct {
	Event     string          `json:"event"`
	Level     string          `json:"level"`
	Msg       string          `json:"msg"`
	Boot      string          `json:"boot"`
	Seq       *uint64         `json:"seq"`
	Interval  string          `json:"interval"`
	SinceLast stats           `json:"since_last"`
	Counters  stats           `json:"counters"`
	Leader    election.NodeID `json:"leader"`
	Epoch     uint64          `json:"epoch"`
	Role      election.Role   `json:"role"`
}

func parseSummary(t *testing.T, raw string) (summaryLine, bool) {
	t.Helper()
	var s summaryLine
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return s, s.Event == EventSummary
}

// TestSeqNumbersOnlyTheLinesWritten runs the same story — election, a
// garbage message, the leader killed and restarted, a graceful stop — at
// info and at debug. At info there is no send or recv line and seq runs
// 1, 2, 3, ... over boot, view, drop and stop; at debug it runs over the
// send and recv lines too. Either way a recorder that reads every line
// finds no gap, and every line has an event.
func TestSeqNumbersOnlyTheLinesWritten(t *testing.T) {
	for _, level := range []logrus.Level{logrus.InfoLevel, logrus.DebugLevel} {
		t.Run(level.String(), func(t *testing.T) {
			c := newTestCluster(t, testAlgorithm, 1, 2, 3)
			c.logLevel = level
			c.summaryEvery = 50 * time.Millisecond
			c.startAll()
			c.awaitLeader(3)

			nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.NodeUser, c.secret))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if err := nc.Publish("ringleader.test.node.1", []byte(`{"v":1,"cluster":"other","msg":{}}`)); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			c.awaitLog("node 1's drop line", func(l logLine) bool {
				return l.node == 1 && l.ok && l.rec.Kind == history.KindDrop
			})

			c.kill(3)
			c.awaitLeader(2)
			c.start(3)
			c.awaitLeader(3)
			c.awaitSummaries("a summary line of every node", ``, 1, 2, 3)
			c.stopAll()
			checkLogs(t, c.allLines(), level)
		})
	}
}

// TestSummaryAgreesWithStatus: a summary's totals are /status's counters
// at the moment it was written. After a graceful stop (which writes a last
// summary when anything changed since the one before) the counters no
// longer move, so each node's last summary must
// equal its Status, and the since_last parts of a boot's summaries must add
// up to it. At info the summaries are the only place the traffic shows.
func TestSummaryAgreesWithStatus(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.logLevel = logrus.InfoLevel
	c.summaryEvery = 50 * time.Millisecond
	c.startAll()
	c.awaitLeader(3)
	c.awaitSummaries("a summary line of every node", ``, 1, 2, 3)
	nodes := map[election.NodeID]*Node{1: c.node(1), 2: c.node(2), 3: c.node(3)}
	c.stopAll()

	byNode := map[election.NodeID][]summaryLine{}
	for _, l := range c.allLines() {
		if s, ok := parseSummary(t, l.raw); ok {
			byNode[l.node] = append(byNode[l.node], s)
		}
	}
	for id, n := range nodes {
		sums := byNode[id]
		if len(sums) == 0 {
			t.Fatalf("node %d: no summary line", id)
		}
		st := n.Status()
		last := sums[len(sums)-1]
		if !reflect.DeepEqual(last.Counters, st.Counters) {
			t.Errorf("node %d: last summary's counters %+v, /status %+v", id, last.Counters, st.Counters)
		}
		if st.Counters.Sent == 0 || st.Counters.Received == 0 || st.Counters.ByType["HEARTBEAT"] == nil {
			t.Errorf("node %d: counters %+v, want heartbeats sent and received", id, st.Counters)
		}
		if last.Leader != st.View.Leader || last.Epoch != st.View.Epoch || last.Role != st.View.Role {
			t.Errorf("node %d: last summary's view %d/%d/%s, /status %+v", id, last.Leader, last.Epoch, last.Role, st.View)
		}
		add := newStats()
		for _, s := range sums {
			if s.Seq != nil {
				t.Errorf("node %d: a summary line with seq %d (seq numbers only history records)", id, *s.Seq)
			}
			if s.Level != "info" || s.Boot != st.Boot {
				t.Errorf("node %d: summary at level %q of boot %q, want info of %q", id, s.Level, s.Boot, st.Boot)
			}
			if d, err := time.ParseDuration(s.Interval); err != nil || d <= 0 {
				t.Errorf("node %d: summary interval %q is not a positive duration", id, s.Interval)
			}
			add.Sent += s.SinceLast.Sent
			add.Received += s.SinceLast.Received
			add.Hints += s.SinceLast.Hints
			for k, v := range s.SinceLast.Dropped {
				add.Dropped[k] += v
			}
			for k, v := range s.SinceLast.ByType {
				add.byType(k).Sent += v.Sent
				add.byType(k).Received += v.Received
			}
		}
		if !reflect.DeepEqual(add, st.Counters) {
			t.Errorf("node %d: since_last over all summaries adds up to %+v, /status says %+v", id, add, st.Counters)
		}
	}
}

// TestSummaryOnlyWhenSomethingChanged drives summarize by hand: nothing
// new, no line; a message or a new view, one line whose interval runs from
// the last line written, whose since_last holds only what is new, and
// whose msg says it for a person.
func TestSummaryOnlyWhenSomethingChanged(t *testing.T) {
	var out bytes.Buffer
	log := logrus.New()
	log.Out = &out
	log.Formatter = &logrus.JSONFormatter{}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	undecided := election.View{Role: election.Undecided}
	n := &Node{cfg: Config{ID: 4}, boot: "b", log: log, stats: newStats(), view: undecided,
		summary: summaryState{at: t0, counters: newStats(), view: undecided}}
	lines := func() []summaryLine {
		var ls []summaryLine
		for _, raw := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if raw == "" {
				continue
			}
			s, ok := parseSummary(t, raw)
			if !ok {
				t.Fatalf("not a summary line: %s", raw)
			}
			ls = append(ls, s)
		}
		out.Reset()
		return ls
	}

	n.summarize(t0.Add(10 * time.Second))
	if ls := lines(); len(ls) != 0 {
		t.Fatalf("nothing happened, yet %d summary lines: %+v", len(ls), ls)
	}

	n.stats.Sent += 3
	n.stats.byType("HEARTBEAT").Sent += 2
	n.stats.byType("COORDINATOR").Sent++
	n.stats.Received++
	n.stats.byType("ELECTION").Received++
	n.summarize(t0.Add(20 * time.Second))
	ls := lines()
	if len(ls) != 1 {
		t.Fatalf("%d summary lines after three sends and a receive, want 1", len(ls))
	}
	s := ls[0]
	if s.Interval != "20s" || s.SinceLast.Sent != 3 || s.Counters.Sent != 3 || s.SinceLast.ByType["HEARTBEAT"].Sent != 2 {
		t.Errorf("summary %+v: want interval 20s, 3 sent (2 HEARTBEAT) since the last and in all", s)
	}
	if want := "sent 3, received 1 in 20s (COORDINATOR 1/0, ELECTION 0/1, HEARTBEAT 2/0); leader 0, epoch 0, undecided"; s.Msg != want {
		t.Errorf("msg %q, want %q", s.Msg, want)
	}

	n.summarize(t0.Add(30 * time.Second))
	if ls := lines(); len(ls) != 0 {
		t.Fatalf("nothing new since the last summary, yet %d lines", len(ls))
	}

	n.stats.byType("HEARTBEAT").Sent++
	n.stats.Sent++
	n.stats.Dropped["malformed"]++
	n.view = election.View{Leader: 4, Epoch: 2, Role: election.Leader}
	n.summarize(t0.Add(40 * time.Second))
	ls = lines()
	if len(ls) != 1 {
		t.Fatalf("%d summary lines after a send, a drop and a new view, want 1", len(ls))
	}
	s = ls[0]
	if s.Interval != "20s" || s.SinceLast.Sent != 1 || s.Counters.Sent != 4 || len(s.SinceLast.ByType) != 1 || s.SinceLast.Dropped["malformed"] != 1 {
		t.Errorf("summary %+v: want interval 20s, 1 HEARTBEAT and 1 drop since the last, 4 sent in all", s)
	}
	if s.Leader != 4 || s.Epoch != 2 || s.Role != election.Leader {
		t.Errorf("summary view %d/%d/%s, want 4/2/leader", s.Leader, s.Epoch, s.Role)
	}
	if want := "sent 1, received 0 in 20s (HEARTBEAT 1/0); 1 dropped; leader 4, epoch 2, leader"; s.Msg != want {
		t.Errorf("msg %q, want %q", s.Msg, want)
	}
}

// A summary says how many peers the node's server holds a route to, so an
// incomplete mesh shows in the log at info: in a settled three-node
// cluster every node reports two.
func TestSummaryCountsTheRoutesHeld(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.logLevel = logrus.InfoLevel
	c.summaryEvery = 50 * time.Millisecond
	c.startAll()
	c.awaitLeader(3)
	c.awaitSummaries("a summary line holding both routes", `"routes":2`, 1, 2, 3)
	c.stopAll()
}

// awaitSummaries waits, for each of ids, for a summary line that also
// holds the text with (any summary line when with is empty).
func (c *testCluster) awaitSummaries(what, with string, ids ...election.NodeID) {
	for _, id := range ids {
		c.awaitLog(what, func(l logLine) bool {
			return l.node == id && strings.Contains(l.raw, `"event":"summary"`) && strings.Contains(l.raw, with)
		})
	}
}
