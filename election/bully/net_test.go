package bully

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// testNet is a small deterministic world for the machines: virtual time, a
// constant per-message delay, FIFO links, directed cuts, crashes with
// durable state, and peer-down hints on demand. It records every view
// change and counts every message sent (a message to a dead or cut-off node
// is counted: the sender paid for it).
type testNet struct {
	t       *testing.T
	ids     []election.NodeID
	quorum  election.QuorumMode
	timing  election.Timing
	delay   time.Duration
	jitter  time.Duration // extra uniform delay in [0, jitter]; links stay FIFO
	jr      *rand.Rand
	last    map[[2]election.NodeID]time.Duration
	now     time.Duration
	seq     uint64
	queue   []qevent
	nodes   map[election.NodeID]*tnode
	cut     map[[2]election.NodeID]bool
	counts  map[string]int
	views   []viewRec
	sent    []election.Message
	seed    uint64
	durable map[election.NodeID]election.Durable
}

type tnode struct {
	m      election.Machine
	up     bool
	boot   int
	timers map[string]uint64 // name -> generation
}

type qevent struct {
	at    time.Duration
	seq   uint64
	to    election.NodeID
	boot  int
	msg   *election.Message
	timer string
	gen   uint64
}

type viewRec struct {
	at   time.Duration
	id   election.NodeID
	view election.View
}

func newNet(t *testing.T, n int, q election.QuorumMode) *testNet {
	t.Helper()
	w := &testNet{
		t: t, quorum: q, timing: election.DefaultTiming, delay: time.Millisecond,
		nodes: map[election.NodeID]*tnode{}, cut: map[[2]election.NodeID]bool{},
		counts: map[string]int{}, durable: map[election.NodeID]election.Durable{}, seed: 1,
		jr: rand.New(rand.NewPCG(7, 7)), last: map[[2]election.NodeID]time.Duration{},
	}
	for i := 1; i <= n; i++ {
		w.ids = append(w.ids, election.NodeID(i))
		w.nodes[election.NodeID(i)] = &tnode{}
	}
	return w
}

func (w *testNet) boot(id election.NodeID) {
	w.t.Helper()
	nd := w.nodes[id]
	nd.boot++
	m, err := election.New("bully", election.Config{
		ID: id, Members: w.ids, Quorum: w.quorum, Timing: w.timing,
		Rand:    rand.New(rand.NewPCG(w.seed, uint64(id)<<8|uint64(nd.boot))),
		Durable: w.durable[id],
	})
	if err != nil {
		w.t.Fatalf("build node %d: %v", id, err)
	}
	nd.m, nd.up, nd.timers = m, true, map[string]uint64{}
	w.step(id, election.Event{Kind: election.EventStart})
}

func (w *testNet) start(ids ...election.NodeID) {
	if len(ids) == 0 {
		ids = w.ids
	}
	for _, id := range ids {
		w.boot(id)
	}
}

func (w *testNet) kill(id election.NodeID) {
	nd := w.nodes[id]
	nd.up, nd.m, nd.timers = false, nil, nil
	w.views = append(w.views, viewRec{w.now, id, election.View{}}) // a dead node holds no view
}

func (w *testNet) hint(to, peer election.NodeID) {
	w.step(to, election.Event{Kind: election.EventPeerDown, Peer: peer})
}

// partition cuts every link between groups, both ways.
func (w *testNet) partition(groups ...[]election.NodeID) {
	for i, g := range groups {
		for j, h := range groups {
			if i == j {
				continue
			}
			for _, a := range g {
				for _, b := range h {
					w.cut[[2]election.NodeID{a, b}] = true
				}
			}
		}
	}
}

func (w *testNet) heal() { clear(w.cut) }

func (w *testNet) push(e qevent) {
	w.seq++
	e.seq = w.seq
	i := sort.Search(len(w.queue), func(i int) bool {
		q := w.queue[i]
		return q.at > e.at || (q.at == e.at && q.seq > e.seq)
	})
	w.queue = slices.Insert(w.queue, i, e)
}

func (w *testNet) step(id election.NodeID, ev election.Event) {
	nd := w.nodes[id]
	for _, e := range nd.m.Step(ev) {
		switch e.Kind {
		case election.EffectSend:
			w.transmit(id, e.Msg)
		case election.EffectBroadcast:
			for _, to := range w.ids {
				if to != id {
					m := e.Msg.Clone()
					m.To = to
					w.transmit(id, m)
				}
			}
		case election.EffectSetTimer:
			w.seq++
			nd.timers[e.Timer] = w.seq
			w.push(qevent{at: w.now + e.After, to: id, boot: nd.boot, timer: e.Timer, gen: w.seq})
		case election.EffectCancelTimer:
			delete(nd.timers, e.Timer)
		case election.EffectView:
			w.views = append(w.views, viewRec{w.now, id, e.View})
		case election.EffectPersist:
			w.durable[id] = e.Durable
		}
	}
}

func (w *testNet) transmit(from election.NodeID, m election.Message) {
	m.From = from
	w.counts[m.Type]++
	w.sent = append(w.sent, m)
	if w.cut[[2]election.NodeID{from, m.To}] {
		return
	}
	at := w.now + w.delay
	if w.jitter > 0 {
		at += time.Duration(w.jr.Int64N(int64(w.jitter) + 1))
	}
	link := [2]election.NodeID{from, m.To}
	at = max(at, w.last[link])
	w.last[link] = at
	w.push(qevent{at: at, to: m.To, msg: &m})
}

// run processes events up to now+d.
func (w *testNet) run(d time.Duration) {
	end := w.now + d
	for len(w.queue) > 0 && w.queue[0].at <= end {
		e := w.queue[0]
		w.queue = w.queue[1:]
		w.now = e.at
		nd := w.nodes[e.to]
		if nd == nil || !nd.up {
			continue
		}
		if e.msg != nil {
			if w.cut[[2]election.NodeID{e.msg.From, e.to}] {
				continue // cut while in flight
			}
			w.step(e.to, election.Event{Kind: election.EventReceive, Msg: *e.msg})
			continue
		}
		if e.boot != nd.boot || nd.timers[e.timer] != e.gen {
			continue
		}
		delete(nd.timers, e.timer)
		w.step(e.to, election.Event{Kind: election.EventTimer, Timer: e.timer})
	}
	w.now = end
}

func (w *testNet) view(id election.NodeID) election.View {
	if nd := w.nodes[id]; nd.up {
		return nd.m.View()
	}
	return election.View{}
}

// agreed reports whether every live node in ids views leader as its leader
// (leader itself with role leader).
func (w *testNet) agreed(leader election.NodeID, ids ...election.NodeID) bool {
	for _, id := range ids {
		v := w.view(id)
		want := election.Follower
		if id == leader {
			want = election.Leader
		}
		if v.Leader != leader || v.Role != want {
			return false
		}
	}
	return true
}

func (w *testNet) requireAgreed(leader election.NodeID, ids ...election.NodeID) {
	w.t.Helper()
	if !w.agreed(leader, ids...) {
		w.t.Fatalf("at %v: want every node of %v to agree on leader %d; views: %s", w.now, ids, leader, w.describe())
	}
}

func (w *testNet) describe() string {
	s := ""
	for _, id := range w.ids {
		s += fmt.Sprintf(" %d=%v", id, w.view(id))
	}
	return s
}

// resetCounts forgets the messages sent so far.
func (w *testNet) resetCounts() { clear(w.counts); w.sent = nil }

// leaderIntervals returns, per node, the intervals in which its recorded view
// had role leader; open intervals end at w.now.
func (w *testNet) leaderIntervals() map[election.NodeID][][2]time.Duration {
	out := map[election.NodeID][][2]time.Duration{}
	open := map[election.NodeID]time.Duration{}
	isOpen := map[election.NodeID]bool{}
	for _, r := range w.views {
		lead := r.view.Role == election.Leader
		switch {
		case lead && !isOpen[r.id]:
			open[r.id], isOpen[r.id] = r.at, true
		case !lead && isOpen[r.id]:
			out[r.id] = append(out[r.id], [2]time.Duration{open[r.id], r.at})
			isOpen[r.id] = false
		}
	}
	for id, o := range isOpen {
		if o {
			out[id] = append(out[id], [2]time.Duration{open[id], w.now})
		}
	}
	return out
}

// requireNoSplitBrain fails if two nodes' recorded leader intervals overlap.
func (w *testNet) requireNoSplitBrain() {
	w.t.Helper()
	iv := w.leaderIntervals()
	for a, as := range iv {
		for b, bs := range iv {
			if a >= b {
				continue
			}
			for _, x := range as {
				for _, y := range bs {
					if x[0] < y[1] && y[0] < x[1] {
						w.t.Fatalf("split brain: node %d led %v–%v and node %d led %v–%v", a, x[0], x[1], b, y[0], y[1])
					}
				}
			}
		}
	}
}

// requireEpochSafety fails if two nodes were leader in one epoch.
func (w *testNet) requireEpochSafety() {
	w.t.Helper()
	who := map[uint64]election.NodeID{}
	for _, r := range w.views {
		if r.view.Role != election.Leader {
			continue
		}
		if o, ok := who[r.view.Epoch]; ok && o != r.id {
			w.t.Fatalf("epoch %d had two leaders: %d and %d", r.view.Epoch, o, r.id)
		}
		who[r.view.Epoch] = r.id
	}
}
