package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/routes"
	"github.com/ringleader-dev/ringleader/trust"
)

// control sends c to node id through its own server, as the harness does.
func (c *testCluster) control(id election.NodeID, ctl control.Request) control.Reply {
	c.t.Helper()
	r, err := SendControl(context.Background(), c.node(id).ClientURL(), "test", c.secret, id, ctl, 0)
	if err != nil {
		c.t.Fatalf("control node %d: %v", id, err)
	}
	return r
}

// linesOf is what node id logged so far, in order.
func (c *testCluster) linesOf(id election.NodeID) []logLine {
	var out []logLine
	for _, l := range c.allLines() {
		if l.node == id {
			out = append(out, l)
		}
	}
	return out
}

func isMsg(l logLine, kind history.Kind, from, to election.NodeID) bool {
	return l.ok && l.rec.Kind == kind && l.rec.Msg != nil && l.rec.Msg.From == from && l.rec.Msg.To == to
}

func isEvent(l logLine, ev string) bool { return strings.Contains(l.raw, `"event":"`+ev+`"`) }

// TestDropSetCutsOnlyTheNamedDirection: node 1 told to drop what node 2
// sends loses exactly that direction. Each of 2's messages is logged at 1
// as a drop with reason cut naming the message; 2 keeps hearing 1; no
// route closes, so neither end is hinted; an empty set heals it.
func TestDropSetCutsOnlyTheNamedDirection(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2, 3)
	c.startAll()
	c.awaitLeader(3)

	r := c.control(1, control.DropFrom(2))
	if len(r.DropFrom) != 1 || r.DropFrom[0] != 2 {
		t.Fatalf("node 1 answered drop set %v, want [2]", r.DropFrom)
	}
	answered := time.Now()
	c.awaitLog("node 1 logs its drop set", func(l logLine) bool {
		return l.node == 1 && isEvent(l, EventDropFrom) && strings.Contains(l.raw, `"drop_from":[2]`)
	})
	c.awaitLog("node 1 drops a message from 2 as cut", func(l logLine) bool {
		return l.node == 1 && isMsg(l, history.KindDrop, 2, 1) && l.rec.Reason == DropCut
	})
	c.awaitLog("node 2 still hears node 1", func(l logLine) bool {
		return l.node == 2 && isMsg(l, history.KindRecv, 1, 2) && l.at.After(answered)
	})
	c.awaitLog("node 1 still hears node 3", func(l logLine) bool {
		return l.node == 1 && isMsg(l, history.KindRecv, 3, 1) && l.at.After(answered)
	})
	lines := c.linesOf(1)
	cutAt := -1
	for i, l := range lines {
		if isEvent(l, EventDropFrom) {
			cutAt = i
		}
	}
	for _, l := range lines[cutAt:] {
		if isMsg(l, history.KindRecv, 2, 1) {
			t.Fatalf("node 1 received from 2 after its drop set named 2: %s", l.raw)
		}
	}
	// Past the time a dead route takes to be noticed, node 1 still drops
	// 2's messages and nobody was hinted: the routes are up.
	_, silence := routes.SilenceNoticed(3)
	c.awaitLog("node 1 still dropping 2's messages after a route's ping timeout", func(l logLine) bool {
		return l.node == 1 && isMsg(l, history.KindDrop, 2, 1) && l.at.After(answered.Add(silence+routes.PollInterval(3)))
	})
	for _, l := range c.allLines() {
		if isEvent(l, EventPeerDownHint) && l.at.After(answered) &&
			(l.node == 1 && strings.Contains(l.raw, `"peer":2`) || l.node == 2 && strings.Contains(l.raw, `"peer":1`)) {
			t.Fatalf("a message-level cut closes no route, yet: %s", l.raw)
		}
	}
	if st := c.node(1).Status(); st.Counters.Dropped[DropCut] == 0 || len(st.DropFrom) != 1 || st.DropFrom[0] != 2 {
		t.Fatalf("/status shows drop set %v and %d cut drops; want [2] and some", st.DropFrom, st.Counters.Dropped[DropCut])
	}

	healed := time.Now()
	c.control(1, control.DropFrom())
	c.awaitLog("node 1 hears 2 again after the heal", func(l logLine) bool {
		return l.node == 1 && isMsg(l, history.KindRecv, 2, 1) && l.at.After(healed)
	})
}

// TestOnlyTheControlAccountChangesAClock: an observer and a plain node
// account (what every member holds) are refused at the server when they
// publish on a control subject, and the control account when it publishes
// an election message; the node's clock never moves.
func TestOnlyTheControlAccountChangesAClock(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	req, err := control.Encode(control.SetRate(0.5))
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{trust.ObserverUser, trust.NodeUser} {
		if err := publishRefused(c, user, trust.ControlSubject("test", 1), req); err != nil {
			t.Fatal(err)
		}
	}
	// Nor can the control account speak in the election.
	if err := publishRefused(c, trust.ControlUser, "ringleader.test.node.1", []byte(`{"v":1,"cluster":"test","msg":{"type":"HEARTBEAT","from":2,"to":1,"epoch":9}}`)); err != nil {
		t.Fatal(err)
	}
	// Asked by the control account after both, the node's clock still
	// runs at real speed: neither request reached it.
	if r := c.control(1, control.DropFrom()); r.Rate != 1 {
		t.Fatalf("node 1's clock runs at %v after refused requests, want 1", r.Rate)
	}
	for _, l := range c.allLines() {
		if isEvent(l, EventClock) {
			t.Fatalf("a refused request changed a clock: %s", l.raw)
		}
	}
	// And the control account changes it, live.
	if st := c.node(1).Status(); st.ClockRate != 0 {
		t.Fatalf("/status shows clock rate %v before any clock fault; want it left out", st.ClockRate)
	}
	if r := c.control(1, control.SetRate(0.5)); r.Rate != 0.5 {
		t.Fatalf("node 1 answered rate %v, want 0.5", r.Rate)
	}
	if st := c.node(1).Status(); st.ClockRate != 0.5 {
		t.Fatalf("/status shows clock rate %v, want 0.5", st.ClockRate)
	}
	c.awaitLog("node 1 logs its clock change", func(l logLine) bool {
		return l.node == 1 && isEvent(l, EventClock) && strings.Contains(l.raw, `"clock_rate":0.5`)
	})
}

// TestGarbledControlRequestsAreRefusedAndCounted: whatever the control
// account sends that is not a valid request is answered with the reason,
// counted by reason in /status, logged in bounded form, and changes
// nothing; the node runs on and takes the next valid request.
func TestGarbledControlRequestsAreRefusedAndCounted(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.startAll()
	c.awaitLeader(2)
	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(trust.ControlUser, c.secret))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	bad := []struct {
		name, body, reason string
	}{
		{"not JSON", `clock rate 0.5`, "malformed"},
		{"no version", `{"clock":{"rate":0.5}}`, "malformed"},
		{"unknown field", `{"v":1,"clock":{"rate":0.5},"colour":"red"}`, "malformed"},
		{"wrong type", `{"v":1,"clock":{"rate":"fast"}}`, "malformed"},
		{"future version", `{"v":2,"clock":{"rate":0.5}}`, "wrong-version"},
		{"oversize", `{"v":1,"drop_from":[` + strings.Repeat("2,", control.MaxSize/2) + `2]}`, "oversize"},
		{"nothing", `{"v":1}`, "bad-field"},
		{"stopped clock", `{"v":1,"clock":{"rate":0}}`, "bad-field"},
		{"rate and jump", `{"v":1,"clock":{"rate":2,"jump_ms":10}}`, "bad-field"},
		{"jump too far", `{"v":1,"clock":{"jump_ms":99999999999}}`, "bad-field"},
		{"drop self", `{"v":1,"drop_from":[1]}`, "bad-field"},
		{"drop stranger", `{"v":1,"drop_from":[9]}`, "bad-field"},
	}
	want := map[string]uint64{}
	for _, b := range bad {
		msg, err := nc.Request(trust.ControlSubject("test", 1), []byte(b.body), awaitLimit)
		if err != nil {
			t.Fatalf("%s: no answer: %v", b.name, err)
		}
		var r control.Reply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			t.Fatalf("%s: answer %q: %v", b.name, msg.Data, err)
		}
		if r.OK || !strings.Contains(r.Error, b.reason) || len(r.Error) > 256 {
			t.Fatalf("%s: answered %+v, want a refusal of at most 256 bytes naming %s", b.name, r, b.reason)
		}
		want[b.reason]++
	}
	got := c.node(1).Status().Counters.ControlRefused
	for reason, n := range want {
		if got[reason] != n {
			t.Fatalf("/status counts refusals %v, want %v", got, want)
		}
	}
	for _, l := range c.linesOf(1) {
		if isEvent(l, EventControlRefused) && len(l.raw) > 1024 {
			t.Fatalf("a refusal line of %d bytes: %.200s…", len(l.raw), l.raw)
		}
		if isEvent(l, EventClock) || isEvent(l, EventDropFrom) {
			t.Fatalf("a refused request changed the node: %s", l.raw)
		}
	}
	// The reading and the true time travel as milliseconds in floats:
	// compared to the nanosecond, not to the last bit (a jump of exactly
	// 1 s once read 1118.356447 against 118.356447 + 1000, one bit apart).
	if r := c.control(1, control.Jump(time.Second)); math.Round((r.ReadingMS-r.TrueMS)*1e6) < 1000*1e6 {
		t.Fatalf("after the refusals a valid jump answered reading %vms at true %vms", r.ReadingMS, r.TrueMS)
	}
}

// TestControlOfANodeNotRunningSaysSo: asking a node that is not there is
// a clear error, not a timeout.
func TestControlOfANodeNotRunningSaysSo(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.start(1)
	_, err := SendControl(context.Background(), c.node(1).ClientURL(), "test", c.secret, 2, control.SetRate(2), 0)
	if !errors.Is(err, ErrNotListening) {
		t.Fatalf("control of a node not running: %v, want ErrNotListening", err)
	}
	_, err = SendControl(context.Background(), c.node(1).ClientURL(), "test", "not-the-secret-at-all", 1, control.SetRate(2), 0)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("control with a wrong secret: %v, want an authorization error", err)
	}
}

// requestRefusedOnce sends node id, at url, a rate change that may wait a
// minute for it, and returns once the sender has been refused at least
// once (nothing listens yet, and it keeps trying); the request's outcome
// comes on the channel.
func requestRefusedOnce(t *testing.T, url, secret string, id election.NodeID) <-chan error {
	t.Helper()
	refused := make(chan struct{}, 1)
	refusedWhileWaiting = func() {
		select {
		case refused <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { refusedWhileWaiting = nil })
	answered := make(chan error, 1)
	go func() {
		_, err := SendControl(context.Background(), url, "test", secret, id, control.SetRate(2), time.Minute)
		answered <- err
	}()
	select {
	case <-refused:
	case err := <-answered:
		t.Fatalf("a request that may wait a minute for node %d ended before it was there: %v", id, err)
	}
	return answered
}

// TestControlWaitsForANodeThatIsStarting: a request that may wait is
// refused while the node is not there yet and answered once it starts,
// as the harness's request after a restart is.
func TestControlWaitsForANodeThatIsStarting(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1, 2)
	c.start(1)
	answered := requestRefusedOnce(t, c.node(1).ClientURL(), c.secret, 2)
	c.start(2)
	if err := <-answered; err != nil {
		t.Fatalf("a request that waits for node 2 to start: %v", err)
	}
	if r := c.control(2, control.SetRate(1)); !r.OK {
		t.Fatalf("node 2 after the waited request: %+v", r)
	}
}

// TestControlWaitsForTheServerOfANodeThatIsStarting: a node logs its
// boot line before its NATS server listens, so a request sent on that
// line to the node's own server (the harness's, inside its container)
// may find nothing listening; one that may wait connects once the server
// is up and is answered, and one that may not says at once that it
// cannot connect.
func TestControlWaitsForTheServerOfANodeThatIsStarting(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1)
	cfg := c.config(1)
	cfg.ClientPort = freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", cfg.ClientPort)
	if _, err := SendControl(context.Background(), url, "test", c.secret, 1, control.SetRate(2), 0); !errors.Is(err, nats.ErrNoServers) {
		t.Fatalf("a request that may not wait, with no server: %v, want nats.ErrNoServers", err)
	}
	_, err := SendControl(context.Background(), url, "test", c.secret, 1, control.SetRate(2), 100*time.Millisecond)
	if !errors.Is(err, nats.ErrNoServers) || !strings.Contains(err.Error(), "within the 100ms waited") {
		t.Fatalf("a request that waits 100ms, with no server all along: %v, want nats.ErrNoServers and the wait named", err)
	}
	answered := requestRefusedOnce(t, url, c.secret, 1)
	c.startConfig(cfg)
	if err := <-answered; err != nil {
		t.Fatalf("a request that waits for node 1's server: %v", err)
	}
	if r := c.control(1, control.DropFrom()); r.Rate != 2 {
		t.Fatalf("node 1 after the waited request runs its clock at %v, want 2", r.Rate)
	}
}

// TestAStartingClockRateHolds: a node started with a clock rate (a
// restarted container keeping its fault) says so in its boot line and
// runs its clock at that rate from the start.
func TestAStartingClockRateHolds(t *testing.T) {
	c := newTestCluster(t, testAlgorithm, 1)
	cfg := c.config(1)
	cfg.ClockRate = 0.25
	c.startConfig(cfg)
	r := c.control(1, control.DropFrom())
	if r.Rate != 0.25 || math.Abs(r.ReadingMS-0.25*r.TrueMS) > 0.001 {
		t.Fatalf("answered rate %v, reading %vms at true %vms; want a quarter of true time", r.Rate, r.ReadingMS, r.TrueMS)
	}
	c.awaitLog("the boot line names the rate", func(l logLine) bool {
		return l.ok && l.rec.Kind == history.KindBoot && strings.Contains(l.raw, `"clock_rate":0.25`)
	})
}

// publishRefused publishes data on subject as user and reports an error
// unless the server refuses it with a permissions violation.
func publishRefused(c *testCluster, user, subject string, data []byte) error {
	denied := make(chan error, 1)
	nc, err := nats.Connect(c.node(1).ClientURL(), nats.UserInfo(user, c.secret),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case denied <- err:
			default:
			}
		}))
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := nc.Publish(subject, data); err != nil {
		return err
	}
	select {
	case err := <-denied:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			return fmt.Errorf("%s: publish on %s refused with %v, want a permissions violation", user, subject, err)
		}
		return nil
	case <-time.After(awaitLimit):
		return fmt.Errorf("%s: a publish on %s was not refused", user, subject)
	}
}
