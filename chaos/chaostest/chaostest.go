// Package chaostest is the conformance suite every chaos.Backend passes, in
// the spirit of testing/fstest.TestFS: one call proves that a backend gives
// every fault, and every edge of it, the one outcome chaos.Decide decides —
// an error naming what is wrong, or a recorded no-op — and that the faults
// it carries out do what they say (the State it reports, the records it
// writes, and, for a lossy leader, the election that follows).
package chaostest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Members is the cluster the suite starts: five plain Bully nodes.
var Members = []election.NodeID{1, 2, 3, 4, 5}

// Spec is the cluster the suite needs, named name (unique per run).
func Spec(name string) chaos.ClusterSpec {
	return chaos.ClusterSpec{Name: name, Algorithm: "bully", Members: Members, Seed: 1}
}

// suite is one run of the cases against one started cluster. The cases run
// in order, each leaving the cluster as it found it (every node up and
// live, nothing cut), so one cluster serves them all: a container cluster
// takes seconds to start.
type suite struct {
	t      *testing.T
	b      chaos.Backend
	mem    *history.Memory
	settle time.Duration
	// unsupported are the kinds the backend declares it cannot carry out.
	unsupported map[chaos.Op]bool
}

// An Option tells the suite something about the backend under test.
type Option func(*suite)

// Unsupported declares the fault kinds the backend cannot carry out: each
// must be refused with a *chaos.UnsupportedError naming it and the backend,
// recorded as a failed fault, with the world left as it was. Every other
// kind must be carried out.
func Unsupported(ops ...chaos.Op) Option {
	return func(s *suite) {
		for _, op := range ops {
			s.unsupported[op] = true
		}
	}
}

// Run starts b, a backend not yet started, with Spec(name) and runs every
// case; it closes b when t ends. settle bounds each wait for the cluster to
// converge (a few seconds is enough for containers; the simulator spends
// it in virtual time).
func Run(t *testing.T, b chaos.Backend, name string, settle time.Duration, opts ...Option) {
	mem := &history.Memory{}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("close %s backend: %v", b.Name(), err)
		}
	})
	if err := b.Start(context.Background(), Spec(name), mem); err != nil {
		t.Fatalf("start %s backend: %v", b.Name(), err)
	}
	s := &suite{t: t, b: b, mem: mem, settle: settle, unsupported: map[chaos.Op]bool{}}
	for _, o := range opts {
		o(s)
	}
	s.awaitLeader(t, 5)
	for _, c := range cases {
		if !t.Run(c.name, func(t *testing.T) { c.run(s, t) }) {
			// The cases share one cluster; after a failure the rest
			// would test a cluster in an unknown state.
			t.Fatalf("stopping after %s failed", c.name)
		}
	}
}

type testCase struct {
	name string
	run  func(s *suite, t *testing.T)
}

// cases, in order. Each names the outcome it proves.
var cases = []testCase{
	{"KillThenKillAgainIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, kill(1), "")
		s.want(t, "node 1 down", func(st chaos.State) bool { return !st.Up[1] })
		s.ok(t, kill(1), "no-op: node 1 is already down")
		s.ok(t, chaos.Fault{Op: chaos.Stop, Nodes: ids(1)}, "no-op: node 1 is already down")
	}},
	{"PauseOrResumeADownNodeIsAnError", func(s *suite, t *testing.T) {
		s.fails(t, chaos.Fault{Op: chaos.Pause, Nodes: ids(1)}, "node 1 is down")
		s.fails(t, chaos.Fault{Op: chaos.Resume, Nodes: ids(1)}, "node 1 is down")
	}},
	{"RestartThenRestartAgainIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, restart(1), "")
		s.want(t, "node 1 up", func(st chaos.State) bool { return st.Live(1) })
		s.ok(t, restart(1), "no-op: node 1 is already running")
		s.awaitLeader(t, 5)
	}},
	{"KillOnlyTheNodesThatRun", func(s *suite, t *testing.T) {
		s.ok(t, kill(2), "")
		s.ok(t, kill(1, 2), "left alone: node 2 is already down")
		s.want(t, "nodes 1 and 2 down", func(st chaos.State) bool { return !st.Up[1] && !st.Up[2] })
		s.ok(t, restart(1, 2), "")
		s.awaitLeader(t, 5)
	}},
	{"StopThenRestart", func(s *suite, t *testing.T) {
		s.ok(t, chaos.Fault{Op: chaos.Stop, Nodes: ids(3)}, "")
		s.want(t, "node 3 down", func(st chaos.State) bool { return !st.Up[3] })
		s.ok(t, restart(3), "")
		s.awaitLeader(t, 5)
	}},
	{"PauseThenPauseAgainIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, pause(2), "")
		s.want(t, "node 2 paused", func(st chaos.State) bool { return st.Up[2] && st.Paused[2] })
		s.ok(t, pause(2), "no-op: node 2 is already paused")
		s.ok(t, resume(2), "")
		s.want(t, "node 2 live", func(st chaos.State) bool { return st.Live(2) })
	}},
	{"ResumeOrRestartARunningNodeIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, resume(2), "no-op: node 2 is not paused")
		s.ok(t, restart(2), "no-op: node 2 is already running")
	}},
	{"KillAPausedNode", func(s *suite, t *testing.T) {
		s.ok(t, pause(4), "")
		s.ok(t, kill(4), "")
		s.want(t, "node 4 down and no longer paused", func(st chaos.State) bool { return !st.Up[4] && !st.Paused[4] })
		// A kill must not thaw the node into running again first: it
		// writes nothing stamped after the kill was invoked.
		s.silentSinceInvoke(t, 4)
		s.ok(t, restart(4), "")
		s.awaitLeader(t, 5)
	}},
	{"StopAPausedNode", func(s *suite, t *testing.T) {
		s.ok(t, pause(4), "")
		s.ok(t, chaos.Fault{Op: chaos.Stop, Nodes: ids(4)}, "")
		s.want(t, "node 4 down and no longer paused", func(st chaos.State) bool { return !st.Up[4] && !st.Paused[4] })
		s.ok(t, restart(4), "")
		s.awaitLeader(t, 5)
	}},
	{"UnknownNodeOrNoNodeIsAnError", func(s *suite, t *testing.T) {
		s.fails(t, kill(9), "node 9 is not a member (members: [1,2,3,4,5])")
		s.fails(t, chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 9}}}, "node 9 is not a member")
		s.fails(t, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2}, {3, 9}}}, "node 9 is not a member")
		s.fails(t, chaos.Fault{Op: chaos.Pause}, "no target nodes")
		s.fails(t, chaos.Fault{Op: chaos.Kill}, "no target nodes")
		s.fails(t, chaos.Fault{Op: "meteor", Nodes: ids(1)}, "unknown fault")
	}},
	{"HealWithNothingInForceIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, chaos.Fault{Op: chaos.Heal}, "no-op: nothing is cut, lost or delayed")
	}},
	{"LossOfEveryPacketFromTheLeaderElectsAnother", func(s *suite, t *testing.T) {
		s.ok(t, loss(1, 5), "")
		s.want(t, "node 5 degraded", func(st chaos.State) bool { return st.Degraded(5) })
		s.await(t, "nodes 1-4 elect 4", func(st chaos.State) bool { return allView(st, ids(1, 2, 3, 4), 4) })
		s.ok(t, loss(0, 5), "")
		s.want(t, "node 5 no longer degraded", func(st chaos.State) bool { return !st.Degraded(5) })
		s.awaitLeader(t, 5)
	}},
	{"LossOutOfRangeOrWithoutTargetsIsAnError", func(s *suite, t *testing.T) {
		// Both below 1 %: 0.005 would round up to the 1 % the rules
		// can express, and is refused all the same.
		s.fails(t, loss(0.001, 5), "below 1%")
		s.fails(t, loss(0.005, 5), "below 1%")
		s.fails(t, loss(1.5, 5), "from 0")
		s.fails(t, loss(-0.1, 5), "from 0")
		s.fails(t, chaos.Fault{Op: chaos.Loss, Params: chaos.ParamsOf(chaos.LossPercent.Of(0.5))}, "no target nodes")
	}},
	{"RemovingLossOrDelayWhereThereIsNoneIsANoOp", func(s *suite, t *testing.T) {
		s.ok(t, loss(0, 3), "no-op: node 3 has no loss")
		s.ok(t, chaos.Fault{Op: chaos.Delay, Nodes: ids(3)}, "no-op: node 3 has no delay")
		s.ok(t, loss(0.3, 2), "")
		s.ok(t, loss(0, 2, 3), "left alone: node 3 has no loss")
		s.want(t, "nothing degraded", func(st chaos.State) bool { return !st.NetworkFaulted() })
	}},
	{"DelayAndItsRemoval", func(s *suite, t *testing.T) {
		s.ok(t, delay(20*time.Millisecond, 5*time.Millisecond, 2), "")
		s.want(t, "node 2 degraded", func(st chaos.State) bool { return st.Degraded(2) })
		s.ok(t, chaos.Fault{Op: chaos.Delay, Nodes: ids(2)}, "")
		s.want(t, "node 2 no longer degraded", func(st chaos.State) bool { return !st.Degraded(2) })
		s.fails(t, delay(-time.Millisecond, 0, 2), "negative")
		s.fails(t, delay(time.Millisecond, 0), "no target nodes")
	}},
	{"DelayAddsLatencyAroundItsValue", func(s *suite, t *testing.T) {
		s.ok(t, delay(jitterDelay, jitterSpread, 3), "")
		applied := s.b.Now()
		if _, err := s.b.Await(context.Background(), jitterHold, nil); err != nil {
			t.Fatal(err)
		}
		s.heal(t)
		s.latencyAround(t, 3, applied)
	}},
	{"PartitionIntoGroupsSplitsTheBrainAndHealMendsIt", func(s *suite, t *testing.T) {
		s.ok(t, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2}, {3, 4, 5}}}, "")
		s.want(t, "{1,2} and {3,4,5} cut from each other both ways, nothing else", func(st chaos.State) bool {
			for _, a := range Members {
				for _, b := range Members {
					if a != b && st.Reachable(a, b) != ((a <= 2) == (b <= 2)) {
						return false
					}
				}
			}
			return len(st.Cut) == 12
		})
		// Plain Bully has no quorum: each side elects its highest.
		s.await(t, "{1,2} elect 2 while {3,4,5} keep 5", func(st chaos.State) bool {
			return allView(st, ids(1, 2), 2) && allView(st, ids(3, 4, 5), 5)
		})
		s.heal(t)
	}},
	{"OneWayCutCutsOneDirection", func(s *suite, t *testing.T) {
		s.ok(t, chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{5, 1}}}, "")
		s.want(t, "5->1 cut, 1->5 open", func(st chaos.State) bool {
			return !st.Reachable(5, 1) && st.Reachable(1, 5) && len(st.Cut) == 1
		})
		s.staysOneWay(t, 5, 1)
		s.heal(t)
	}},
	{"BridgeCutsOnlyPairsThatShareNoGroup", func(s *suite, t *testing.T) {
		s.ok(t, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2, 3}, {3, 4, 5}}}, "")
		s.want(t, "{1,2} cut from {4,5} both ways, 3 reaches all", func(st chaos.State) bool {
			for _, a := range Members {
				for _, b := range Members {
					side := func(x election.NodeID) int { return map[election.NodeID]int{1: -1, 2: -1, 4: 1, 5: 1}[x] }
					cut := side(a)*side(b) < 0
					if a != b && st.Reachable(a, b) == cut {
						return false
					}
				}
			}
			return len(st.Cut) == 8
		})
		s.heal(t)
	}},
	{"PartitionThatCutsNothingIsAnError", func(s *suite, t *testing.T) {
		s.fails(t, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2, 3, 4, 5}}}, "cuts no link")
		s.fails(t, chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{2, 2}}}, "from itself")
	}},
	{"HealClearsTheNetworkButNotThePauses", func(s *suite, t *testing.T) {
		s.ok(t, pause(1), "")
		s.ok(t, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2}, {3, 4, 5}}}, "")
		s.ok(t, loss(0.2, 3), "")
		s.ok(t, chaos.Fault{Op: chaos.Heal}, "")
		s.want(t, "nothing cut or degraded, node 1 still paused", func(st chaos.State) bool {
			return len(st.Cut) == 0 && !st.NetworkFaulted() && st.Paused[1]
		})
		s.ok(t, resume(1), "")
		s.awaitLeader(t, 5)
	}},
	{"JamHoldsThenDeliversInOrderAtHeal", func(s *suite, t *testing.T) {
		if s.unsupported[chaos.Jam] {
			t.Skip("jam is unsupported here")
		}
		s.ok(t, chaos.Fault{Op: chaos.Jam, Nodes: ids(3)}, "")
		s.ok(t, chaos.Fault{Op: chaos.Jam, Nodes: ids(3)}, "no-op: node 3 is already jammed")
		if _, err := s.b.Await(context.Background(), jamHold, nil); err != nil {
			t.Fatal(err)
		}
		s.ok(t, heal, "")
		// Records reach the history after the heal returns (the
		// simulator plays the burst when it runs on, a container's log
		// is read a moment later), stamped when they happened.
		if _, err := s.b.Await(context.Background(), 500*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		s.heldThenBurst(t, 3)
		s.awaitLeader(t, 5)
	}},
	{"EveryKindIsCarriedOutOrRefusedAsUnsupported", func(s *suite, t *testing.T) {
		for _, k := range chaos.Kinds() {
			sm, ok := samples[k.Op]
			if !ok {
				t.Errorf("kind %s has no entry in chaostest's samples: add one (a fault of the kind, what it does to the State, what undoes it)", k.Op)
				continue
			}
			t.Run(string(k.Op), func(t *testing.T) { s.carriedOutOrUnsupported(t, sm) })
		}
	}},
}

// oneWayHold is how long a one-way cut is watched: past the NATS route's
// ping timeout (two missed pings of 500 ms), after which a cut made of
// dropped packets would have broken the route both ways.
const oneWayHold = 2500 * time.Millisecond

// staysOneWay holds the one-way cut from→to for oneWayHold and checks the
// history: nothing from `from` reaches `to` after the cut took effect (a
// message already on its way aside), while `to` still reaches `from` at
// the end of the hold. The same in every world: a schedule found with
// one-way cuts in the simulator means the same in containers.
func (s *suite) staysOneWay(t *testing.T, from, to election.NodeID) {
	t.Helper()
	cutAt := s.b.Now()
	if _, err := s.b.Await(context.Background(), oneWayHold, nil); err != nil {
		t.Fatal(err)
	}
	const inFlight = 100 * time.Millisecond
	var cutGot, openGot []time.Duration
	for _, r := range s.mem.Records() {
		if r.Kind != history.KindRecv || r.Msg == nil || r.Time.Before(cutAt) {
			continue
		}
		switch {
		case r.Node == to && r.Msg.From == from && r.Time.Sub(cutAt) > inFlight:
			cutGot = append(cutGot, r.Time.Sub(cutAt))
		case r.Node == from && r.Msg.From == to:
			openGot = append(openGot, r.Time.Sub(cutAt))
		}
	}
	if len(cutGot) > 0 {
		t.Errorf("node %d received %d message(s) from %d through the cut %d->%d, at +%v", to, len(cutGot), from, from, to, cutGot)
	}
	late := slices.ContainsFunc(openGot, func(d time.Duration) bool { return d > oneWayHold-700*time.Millisecond })
	if !late {
		t.Errorf("node %d received from %d only at +%v after the one-way cut %d->%d, none near its end (+%v): the cut did not stay one-way", from, to, openGot, from, to, oneWayHold)
	}
}

// The delay the suite measures, on one follower: 50 ms ± 40 ms, so each
// message to or from it should take 10 to 90 ms more than the network's
// own latency (a few milliseconds at most in either world).
const (
	jitterDelay  = 50 * time.Millisecond
	jitterSpread = 40 * time.Millisecond
	jitterHold   = 4 * time.Second
)

// The bounds the measured latencies of messages to and from the delayed
// node must keep, in every world, so that a delay means one thing in the
// simulator and in containers. With delay D and jitter J the added
// latency is uniform in [D−J, D+J]: the fastest message lies near D−J,
// the median near D, the slowest near D+J. Containers add a tail (TCP
// keeps a route's messages in order, so a message released early waits
// for one released late before it, and a retransmit of a late segment is
// held again), hence the wider bounds above the median and the maximum
// (measured: min/median/max 12.8/47.8/88.6 ms in the simulator,
// 14.9/71.9/159 ms in containers on a busy 2-core machine). A simulator that added
// U[0, J] (its meaning until both worlds agreed) puts the fastest at D.
// Where the messages are too few for these bounds to hold a correct
// delay, jitterBounds widens them to what the draws keep.
var (
	jitterMin    = [2]time.Duration{jitterDelay - jitterSpread - 5*time.Millisecond, jitterDelay - jitterSpread + 15*time.Millisecond}
	jitterMedian = [2]time.Duration{jitterDelay - 10*time.Millisecond, jitterDelay + 35*time.Millisecond}
	jitterMax    = [2]time.Duration{jitterDelay + jitterSpread - 10*time.Millisecond, jitterDelay + jitterSpread + 110*time.Millisecond}
)

// latencyAround measures, from the history, how long each message sent to
// or by node id after since took to arrive (sends and receipts paired in
// order per sender, receiver and type), and holds the minimum, median and
// maximum to the bounds above.
func (s *suite) latencyAround(t *testing.T, id election.NodeID, since time.Time) {
	t.Helper()
	until := since.Add(jitterHold)
	type key struct {
		from, to election.NodeID
		typ      string
	}
	sent := map[key][]time.Time{}
	var lat []time.Duration
	// In time order: containers' records come through one log stream per
	// node, so a receipt can arrive before its send.
	recs := s.mem.Records()
	slices.SortStableFunc(recs, func(a, b history.Record) int { return a.Time.Compare(b.Time) })
	// Pairs are counted from the delay's invoke on: earlier cases lost
	// messages (a lossy leader, kills), which would shift every pair
	// after them. A message in flight at the invoke arrives within the
	// network's own latency, before any send after it can.
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; r.Kind == history.KindFault && r.Fault.Op == string(chaos.Delay) && r.Fault.Phase == history.FaultInvoke {
			recs = recs[i:]
			break
		}
	}
	for _, r := range recs {
		if r.Msg == nil || (r.Msg.From != id && r.Node != id && r.Msg.To != id) {
			continue
		}
		switch r.Kind {
		case history.KindSend:
			k := key{r.Node, r.Msg.To, r.Msg.Type}
			sent[k] = append(sent[k], r.Time)
		case history.KindRecv:
			k := key{r.Msg.From, r.Node, r.Msg.Type}
			if len(sent[k]) == 0 || sent[k][0].After(r.Time) {
				continue // sent before the invoke
			}
			at := sent[k][0]
			sent[k] = sent[k][1:]
			if !at.Before(since) && at.Before(until) {
				lat = append(lat, r.Time.Sub(at))
			}
		}
	}
	if len(lat) < 30 {
		t.Fatalf("only %d messages to or from node %d under delay, want 30 or more to measure (%d records from the invoke on)", len(lat), id, len(recs))
	}
	slices.Sort(lat)
	lo, med, hi := lat[0], lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("%s: delay %v±%v on node %d: %d messages, latency min %v median %v max %v",
		s.b.Name(), jitterDelay, jitterSpread, id, len(lat), lo.Round(100*time.Microsecond), med.Round(100*time.Microsecond), hi.Round(100*time.Microsecond))
	for _, c := range []struct {
		what   string
		got    time.Duration
		within [2]time.Duration
	}{
		{"minimum", lo, jitterBounds(jitterMin, 1, len(lat))},
		{"median", med, jitterBounds(jitterMedian, len(lat)/2+1, len(lat))},
		{"maximum", hi, jitterBounds(jitterMax, len(lat), len(lat))},
	} {
		if c.got < c.within[0] || c.got > c.within[1] {
			t.Errorf("%s latency %v, want within [%v, %v] for delay %v±%v", c.what, c.got, c.within[0], c.within[1], jitterDelay, jitterSpread)
		}
	}
}

// jamHold is how long a jam is held in the suite: past the NATS route's
// ping timeout, after which held packets would have closed a route.
const jamHold = 1500 * time.Millisecond

// heldThenBurst checks the last jam on id and the heal after it: no
// message to or from id was received from the jam's ok to the heal's
// invoke; from the heal's invoke to its ok, some were, a burst, and each
// link's in the order it was sent.
func (s *suite) heldThenBurst(t *testing.T, id election.NodeID) {
	t.Helper()
	recs := s.mem.Records()
	var jammed, healing, healed time.Time
	for _, r := range recs {
		if r.Kind != history.KindFault || r.Fault == nil {
			continue
		}
		switch {
		case r.Fault.Op == string(chaos.Jam) && r.Fault.Phase == history.FaultOK && jammed.IsZero():
			jammed = r.Time
		case r.Fault.Op == string(chaos.Heal) && r.Fault.Phase == history.FaultInvoke && !jammed.IsZero():
			healing = r.Time
		case r.Fault.Op == string(chaos.Heal) && r.Fault.Phase == history.FaultOK && !healing.IsZero():
			healed = r.Time
		}
	}
	if healed.IsZero() {
		t.Fatalf("no jam ok followed by a heal in the history")
	}
	type link struct{ from, to election.NodeID }
	sent := map[link][]election.Message{}
	burst := map[link][]election.Message{}
	n := 0
	for _, r := range recs {
		if r.Msg == nil || (r.Msg.From != id && r.Msg.To != id) {
			continue
		}
		l := link{r.Msg.From, r.Msg.To}
		switch {
		case r.Kind == history.KindSend: // from the start: what was in flight at the jam is held too
			sent[l] = append(sent[l], *r.Msg)
		case r.Kind != history.KindRecv || r.Time.Before(jammed):
		case r.Time.Before(healing) && r.Time.After(jammed):
			t.Fatalf("node %d received %s from %d at %v, while the jam on %d held (from %v to %v)", r.Node, r.Msg.Type, r.Msg.From, r.Time, id, jammed, healing)
		case !r.Time.After(healed):
			burst[l] = append(burst[l], *r.Msg)
			n++
		}
	}
	if n < 5 {
		t.Fatalf("%d messages to or from node %d delivered at the heal, want a burst of 5 or more", n, id)
	}
	for l, got := range burst {
		// In send order: a subsequence of what was sent on the link
		// (a message sent as the jam began may have passed unheld).
		i := 0
		for _, m := range sent[l] {
			if i < len(got) && reflect.DeepEqual(m, got[i]) {
				i++
			}
		}
		if i < len(got) {
			t.Fatalf("link %d->%d: the burst %v is not in the order sent %v", l.from, l.to, got, sent[l])
		}
	}
	t.Logf("%s: jam on %d held %d messages, delivered at the heal", s.b.Name(), id, n)
}

// sample is one fault of a kind, for the suite's check that every kind is
// carried out or refused as unsupported: the faults that set it up, the
// fault, its effect on the State, and the faults that undo it.
type sample struct {
	before []chaos.Fault
	fault  chaos.Fault
	effect func(chaos.State) bool
	undo   []chaos.Fault
}

var heal = chaos.Fault{Op: chaos.Heal}

// samples holds one sample per fault kind; a kind without one fails the
// suite, so a new kind cannot go unchecked.
var samples = map[chaos.Op]sample{
	chaos.Kill:    {fault: kill(1), effect: func(st chaos.State) bool { return !st.Up[1] }, undo: []chaos.Fault{restart(1)}},
	chaos.Stop:    {fault: chaos.Fault{Op: chaos.Stop, Nodes: ids(1)}, effect: func(st chaos.State) bool { return !st.Up[1] }, undo: []chaos.Fault{restart(1)}},
	chaos.Restart: {before: []chaos.Fault{kill(1)}, fault: restart(1), effect: func(st chaos.State) bool { return st.Live(1) }},
	chaos.Pause:   {fault: pause(1), effect: func(st chaos.State) bool { return st.Up[1] && st.Paused[1] }, undo: []chaos.Fault{resume(1)}},
	chaos.Resume:  {before: []chaos.Fault{pause(1)}, fault: resume(1), effect: func(st chaos.State) bool { return st.Live(1) }},
	chaos.Partition: {fault: chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{5, 1}}},
		effect: func(st chaos.State) bool { return !st.Reachable(5, 1) && st.Reachable(1, 5) }, undo: []chaos.Fault{heal}},
	chaos.Heal: {before: []chaos.Fault{{Op: chaos.Partition, Links: [][2]election.NodeID{{5, 1}}}}, fault: heal,
		effect: func(st chaos.State) bool { return !st.NetworkFaulted() }},
	chaos.Loss: {fault: loss(0.3, 2), effect: inNet(chaos.Loss, 2, chaos.LossPercent.Of(0.3)), undo: []chaos.Fault{heal}},
	chaos.Delay: {fault: delay(20*time.Millisecond, 0, 2),
		effect: inNet(chaos.Delay, 2, chaos.DelayMS.OfDur(20*time.Millisecond)), undo: []chaos.Fault{heal}},
	chaos.Jam: {fault: chaos.Fault{Op: chaos.Jam, Nodes: ids(2)}, effect: inNet(chaos.Jam, 2), undo: []chaos.Fault{heal}},
	chaos.Clock: {fault: clockRate(2, 2),
		effect: func(st chaos.State) bool { return st.ClockOf(2).Rate == 2 }, undo: []chaos.Fault{clockRate(1, 2)}},
}

// carriedOutOrUnsupported applies a sample's fault: a kind the backend
// declared unsupported must be refused with *chaos.UnsupportedError and
// change nothing; any other must succeed and show its effect in State.
// Never another error, never silence.
func (s *suite) carriedOutOrUnsupported(t *testing.T, sm sample) {
	t.Helper()
	f := sm.fault
	for _, b := range sm.before {
		s.ok(t, b, "")
	}
	before := s.b.State()
	err := s.b.Apply(context.Background(), f, "")
	var un *chaos.UnsupportedError
	switch {
	case s.unsupported[f.Op]:
		if !errors.As(err, &un) || un.Op != f.Op || un.Backend != s.b.Name() {
			t.Fatalf("%s on %s: error %v, want the explicit unsupported outcome (*chaos.UnsupportedError for %s on %s)", f.Op, s.b.Name(), err, f.Op, s.b.Name())
		}
		s.recorded(t, f, history.FaultFail, "")
		if after := s.b.State(); !sameFaults(before, after) {
			t.Fatalf("%s was refused as unsupported, yet the world changed: %s, cut %v, degraded %v, clocks %v", f.Op, after.Describe(Members), keys(after.Cut), degraded(after), after.Clocks)
		}
	case errors.As(err, &un):
		t.Fatalf("%s: refused as unsupported on %s (%v); if this backend cannot carry it out, declare it with chaostest.Unsupported", f.Op, s.b.Name(), err)
	case err != nil:
		t.Fatalf("%s %v: %v (want it carried out, or refused as unsupported)", f.Op, f.Nodes, err)
	default:
		s.recorded(t, f, history.FaultOK, "")
		if st := s.b.State(); !sm.effect(st) {
			t.Fatalf("%s returned, but its effect is not in the State: %s, cut %v, degraded %v, clocks %v", f.Op, st.Describe(Members), keys(st.Cut), degraded(st), st.Clocks)
		}
		for _, u := range sm.undo {
			s.ok(t, u, "")
		}
	}
	if s.unsupported[f.Op] {
		// Only the set-up is left to undo.
		for _, b := range sm.before {
			s.ok(t, undoOf(b), "")
		}
	}
	s.awaitLeader(t, 5)
}

// undoOf is the fault that undoes a sample's set-up fault.
func undoOf(f chaos.Fault) chaos.Fault {
	switch f.Op {
	case chaos.Kill, chaos.Stop:
		return restart(f.Nodes...)
	case chaos.Pause:
		return resume(f.Nodes...)
	}
	return heal
}

// sameFaults reports whether two states hold the same faults in force.
func sameFaults(a, b chaos.State) bool {
	return maps.Equal(a.Up, b.Up) && maps.Equal(a.Paused, b.Paused) && maps.Equal(a.Cut, b.Cut) &&
		maps.EqualFunc(a.Net, b.Net, chaos.Params.Equal) && maps.Equal(a.Clocks, b.Clocks)
}

func ids(l ...election.NodeID) []election.NodeID { return l }
func kill(n ...election.NodeID) chaos.Fault      { return chaos.Fault{Op: chaos.Kill, Nodes: n} }
func restart(n ...election.NodeID) chaos.Fault   { return chaos.Fault{Op: chaos.Restart, Nodes: n} }
func pause(n ...election.NodeID) chaos.Fault     { return chaos.Fault{Op: chaos.Pause, Nodes: n} }
func resume(n ...election.NodeID) chaos.Fault    { return chaos.Fault{Op: chaos.Resume, Nodes: n} }
func loss(p float64, n ...election.NodeID) chaos.Fault {
	return chaos.Fault{Op: chaos.Loss, Nodes: n, Params: chaos.ParamsOf(chaos.LossPercent.Of(p))}
}
func delay(d, jitter time.Duration, n ...election.NodeID) chaos.Fault {
	return chaos.Fault{Op: chaos.Delay, Nodes: n, Params: chaos.ParamsOf(chaos.DelayMS.OfDur(d), chaos.DelayJitter.OfDur(jitter))}
}
func clockRate(r float64, n ...election.NodeID) chaos.Fault {
	return chaos.Fault{Op: chaos.Clock, Nodes: n, Params: chaos.ParamsOf(chaos.ClockRate.Of(r))}
}

// inNet is the effect of a per-node network fault: State.Net holds
// exactly these values for it on node id.
func inNet(op chaos.Op, id election.NodeID, vals ...chaos.Value) func(chaos.State) bool {
	return func(st chaos.State) bool {
		p, ok := st.NetOf(op, id)
		return ok && p.Equal(chaos.ParamsOf(vals...))
	}
}

func allView(st chaos.State, nodes []election.NodeID, leader election.NodeID) bool {
	for _, n := range nodes {
		if !st.Live(n) || st.Views[n].Leader != leader {
			return false
		}
	}
	return true
}

// ok applies f, which must succeed and record invoke then ok with note.
func (s *suite) ok(t *testing.T, f chaos.Fault, note string) {
	t.Helper()
	if err := s.b.Apply(context.Background(), f, ""); err != nil {
		t.Fatalf("%s %v: %v (want it to succeed)", f.Op, f.Nodes, err)
	}
	s.recorded(t, f, history.FaultOK, note)
}

// fails applies f, which must fail with an error containing want and
// record invoke then fail.
func (s *suite) fails(t *testing.T, f chaos.Fault, want string) {
	t.Helper()
	err := s.b.Apply(context.Background(), f, "")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s %v: error %v, want one saying %q", f.Op, f.Nodes, err, want)
	}
	s.recorded(t, f, history.FaultFail, "")
}

// recorded checks the last two fault records: f's invoke, then phase.
func (s *suite) recorded(t *testing.T, f chaos.Fault, phase history.FaultPhase, note string) {
	t.Helper()
	var faults []history.Record
	for _, r := range s.mem.Records() {
		if r.Kind == history.KindFault && r.Fault != nil {
			faults = append(faults, r)
		}
	}
	if len(faults) < 2 {
		t.Fatalf("%s: %d fault records in the history, want its invoke and %s", f.Op, len(faults), phase)
	}
	inv, end := faults[len(faults)-2].Fault, faults[len(faults)-1].Fault
	if inv.Op != string(f.Op) || inv.Phase != history.FaultInvoke || end.Op != string(f.Op) || end.Phase != phase {
		t.Fatalf("%s: last fault records %s/%s then %s/%s, want %s/invoke then %s/%s", f.Op, inv.Op, inv.Phase, end.Op, end.Phase, f.Op, f.Op, phase)
	}
	if !slices.Equal(inv.Nodes, f.Nodes) {
		t.Errorf("%s: invoke record names nodes %v, want %v", f.Op, inv.Nodes, f.Nodes)
	}
	if end.Note != note {
		t.Errorf("%s %v: %s record's note %q, want %q", f.Op, f.Nodes, phase, end.Note, note)
	}
	if phase == history.FaultFail && end.Error == "" {
		t.Errorf("%s: fail record without the error", f.Op)
	}
}

// silentSinceInvoke checks that node wrote no record stamped after the
// last fault's invoke (records come in arrival order, but each carries the
// time its node wrote it).
func (s *suite) silentSinceInvoke(t *testing.T, node election.NodeID) {
	t.Helper()
	recs := s.mem.Records()
	var invoked time.Time
	for _, r := range recs {
		if r.Kind == history.KindFault && r.Fault != nil && r.Fault.Phase == history.FaultInvoke {
			invoked = r.Time
		}
	}
	for _, r := range recs {
		if r.Process != history.NemesisProcess && r.Node == node && r.Time.After(invoked) {
			t.Fatalf("node %d wrote a %s record at %v, after the fault was invoked at %v", node, r.Kind, r.Time, invoked)
		}
	}
}

// want checks the state right after a fault returned: a backend returns
// from Apply once the fault is in effect.
func (s *suite) want(t *testing.T, what string, cond func(chaos.State) bool) {
	t.Helper()
	if st := s.b.State(); !cond(st) {
		t.Fatalf("after the fault, want %s; state: %s, cut %v, degraded %v", what, st.Describe(Members), keys(st.Cut), degraded(st))
	}
}

// await waits, on the backend's clock, for the cluster to get there.
func (s *suite) await(t *testing.T, what string, cond func(chaos.State) bool) {
	t.Helper()
	ok, err := s.b.Await(context.Background(), s.settle, cond)
	if err != nil {
		t.Fatalf("await %s: %v", what, err)
	}
	if !ok {
		t.Fatalf("not within %v: %s; state: %s", s.settle, what, s.b.State().Describe(Members))
	}
}

func (s *suite) awaitLeader(t *testing.T, leader election.NodeID) {
	t.Helper()
	s.await(t, fmt.Sprintf("every node views %d", leader), func(st chaos.State) bool { return allView(st, Members, leader) })
}

func (s *suite) heal(t *testing.T) {
	t.Helper()
	s.ok(t, chaos.Fault{Op: chaos.Heal}, "")
	s.want(t, "nothing cut", func(st chaos.State) bool { return len(st.Cut) == 0 })
	s.awaitLeader(t, 5)
}

func keys[K comparable](m map[K]bool) []K {
	var out []K
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	return out
}

// degraded lists the nodes with loss or delay in force, for failure messages.
func degraded(st chaos.State) []election.NodeID {
	var out []election.NodeID
	for _, m := range Members {
		if st.Degraded(m) {
			out = append(out, m)
		}
	}
	return out
}
