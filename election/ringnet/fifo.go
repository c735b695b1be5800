package ringnet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
)

// Net is a tiny deterministic driver for tests and benchmarks: one FIFO queue
// of messages, no time. Timers are only recorded as armed; a test fires them
// explicitly (FireAll) or lets Settle fire the per-hop acknowledgement
// timeouts of hops that were never acknowledged. It exists so that message
// counts can be compared with the published formulas without the simulator.
type Net struct {
	Alg     election.Algorithm
	Members []election.NodeID
	Nodes   map[election.NodeID]election.Machine
	// Views is each node's latest view.
	Views map[election.NodeID]election.View
	// Sent counts messages by type (a broadcast counts n−1).
	Sent map[string]int

	ring   *election.Membership // shared by every machine
	down   map[election.NodeID]bool
	timers map[election.NodeID]map[string]bool
	queue  []election.Message
	head   int
}

// NewNet builds one machine of the named algorithm per member (ring order =
// members order) with default timing.
func NewNet(algorithm string, members []election.NodeID) (*Net, error) {
	alg, err := election.Lookup(algorithm)
	if err != nil {
		return nil, err
	}
	n := &Net{
		Alg: alg, Members: members,
		Nodes:  map[election.NodeID]election.Machine{},
		Views:  map[election.NodeID]election.View{},
		Sent:   map[string]int{},
		down:   map[election.NodeID]bool{},
		timers: map[election.NodeID]map[string]bool{},
	}
	for _, id := range members {
		if err := n.build(id); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (n *Net) build(id election.NodeID) error {
	if n.ring == nil {
		r, err := election.NewMembership(n.Members)
		if err != nil {
			return fmt.Errorf("ringnet: %w", err)
		}
		n.ring = r
	}
	m, err := election.New(n.Alg.Name, election.Config{
		ID: id, Members: n.Members, Membership: n.ring, Rand: rand.New(rand.NewPCG(uint64(id), 1)),
	})
	if err != nil {
		return fmt.Errorf("ringnet: node %d: %w", id, err)
	}
	n.Nodes[id] = m
	n.timers[id] = map[string]bool{}
	return nil
}

// Reset forgets counts, queued messages and timers and revives every node,
// keeping the machines: the next StartAll restarts them with fresh state.
// Building n machines validates the membership n times (O(n²)); a benchmark
// builds once and resets.
func (n *Net) Reset() {
	clear(n.Sent)
	clear(n.Views)
	clear(n.down)
	for _, t := range n.timers {
		clear(t)
	}
	n.queue, n.head = n.queue[:0], 0
}

// StartAll gives every node EventStart, in ring order.
func (n *Net) StartAll() {
	for _, id := range n.Members {
		n.step(id, election.Event{Kind: election.EventStart})
	}
}

// Elect is the all-start-at-once election the formulas describe: every node
// starts, then every node's suspicion timer fires before any message is
// delivered, then messages are delivered until none is left.
func (n *Net) Elect() error {
	n.StartAll()
	n.FireAll(TimerSuspect)
	return n.Run()
}

// FireAll fires the named timer on every live node that has it armed, in
// ring order.
func (n *Net) FireAll(timer string) {
	for _, id := range n.Members {
		n.Fire(id, timer)
	}
}

// Fire fires a timer on one node if it is armed and the node is up.
func (n *Net) Fire(id election.NodeID, timer string) bool {
	if n.down[id] || !n.timers[id][timer] {
		return false
	}
	delete(n.timers[id], timer)
	n.step(id, election.Event{Kind: election.EventTimer, Timer: timer})
	return true
}

// Armed reports whether node id has the named timer armed.
func (n *Net) Armed(id election.NodeID, timer string) bool { return n.timers[id][timer] }

// maxDeliveries bounds Run so that a livelock fails a test instead of
// hanging it.
const maxDeliveries = 200_000_000

// Run delivers queued messages in FIFO order until the queue is empty.
// Messages to a killed node are lost.
func (n *Net) Run() error {
	for k := 0; n.head < len(n.queue); k++ {
		if k > maxDeliveries {
			return fmt.Errorf("ringnet: still %d messages queued after %d deliveries", len(n.queue)-n.head, k)
		}
		m := n.queue[n.head]
		n.queue[n.head] = election.Message{}
		n.head++
		if n.head > 4096 && n.head*2 > len(n.queue) {
			n.queue = append(n.queue[:0], n.queue[n.head:]...)
			n.head = 0
		}
		if n.down[m.To] {
			continue
		}
		n.step(m.To, election.Event{Kind: election.EventReceive, Msg: m})
	}
	return nil
}

// Settle runs the queue dry, then fires every armed per-hop acknowledgement
// timer (those hops were lost with a dead node), and repeats until no such
// timer is armed: a crash without time.
func (n *Net) Settle() error {
	for {
		if err := n.Run(); err != nil {
			return err
		}
		fired := false
		for _, id := range n.Members {
			for t := range n.timers[id] {
				if strings.HasPrefix(t, ackPrefix) {
					fired = n.Fire(id, t) || fired
				}
			}
		}
		if !fired {
			return nil
		}
	}
}

// Kill crashes a node: it receives nothing and its timers are gone.
func (n *Net) Kill(id election.NodeID) {
	n.down[id] = true
	clear(n.timers[id])
}

// Restart brings a killed node back with fresh state and gives it EventStart.
func (n *Net) Restart(id election.NodeID) error {
	if err := n.build(id); err != nil {
		return err
	}
	delete(n.down, id)
	n.step(id, election.Event{Kind: election.EventStart})
	return nil
}

// ElectionMessages is the number of messages sent whose type the algorithm
// counts as election messages.
func (n *Net) ElectionMessages() int {
	total := 0
	for _, t := range n.Alg.ElectionTypes {
		total += n.Sent[t]
	}
	return total
}

// AnnounceMessages is the number of announcement messages sent.
func (n *Net) AnnounceMessages() int {
	total := 0
	for _, t := range n.Alg.AnnounceTypes {
		total += n.Sent[t]
	}
	return total
}

// Agreed returns the leader every live node views, with ok=false when live
// nodes disagree or one is undecided.
func (n *Net) Agreed() (leader election.NodeID, ok bool) {
	first := true
	for _, id := range n.Members {
		if n.down[id] {
			continue
		}
		v := n.Views[id]
		if v.Leader == election.None || (!first && v.Leader != leader) {
			return v.Leader, false
		}
		leader, first = v.Leader, false
	}
	if leader != election.None && n.Views[leader].Role != election.Leader {
		return leader, false
	}
	return leader, !first
}

func (n *Net) step(id election.NodeID, ev election.Event) {
	for _, ef := range n.Nodes[id].Step(ev) {
		switch ef.Kind {
		case election.EffectSend:
			n.Sent[ef.Msg.Type]++
			n.queue = append(n.queue, ef.Msg)
		case election.EffectBroadcast:
			for _, to := range n.Members {
				if to != id {
					m := ef.Msg.Clone()
					m.To = to
					n.Sent[m.Type]++
					n.queue = append(n.queue, m)
				}
			}
		case election.EffectSetTimer:
			n.timers[id][ef.Timer] = true
		case election.EffectCancelTimer:
			delete(n.timers[id], ef.Timer)
		case election.EffectView:
			n.Views[id] = ef.View
		}
	}
}

// TB is the part of testing.TB that ElectHighest uses; taking it rather
// than testing.TB keeps the testing package out of the binaries that link
// this one.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// ElectHighest runs one all-start-at-once election of algorithm on ring in
// the FIFO driver and stops t unless every node agrees on the highest ID.
// It is the common first step of every ring algorithm's count tests.
func ElectHighest(t TB, algorithm string, ring []election.NodeID) *Net {
	t.Helper()
	net, err := NewNet(algorithm, ring)
	if err != nil {
		t.Fatal(err)
	}
	if err := net.Elect(); err != nil {
		t.Fatal(err)
	}
	if leader, ok := net.Agreed(); !ok || leader != slices.Max(ring) {
		shown := ring[:min(len(ring), 12)]
		t.Fatalf("%s, n=%d, ring %v…: agreed=%v leader %d, want %d", algorithm, len(ring), shown, ok, leader, slices.Max(ring))
	}
	return net
}
