package docker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/rules"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/node/control"
)

// What a node's process holds of the world that only the node itself can
// carry out: its clock (rate, and the jumps it took), its drop set (the
// receiving end of one-way cuts, rules.DropFrom), its hold set (the
// receiving end of jams, holdFrom) and, in a gated run, whether its
// machine has started (Open). The world model says what it should be;
// reconcileNodes brings each process there over the control channel
// (control.go). A new process (a restart, or a node that died and came
// back on its own) starts at rate 1 with nothing dropped or held, and
// gated when the run is.
type nodeControl struct {
	boot    int // the boot (len(rec.Boots)) this describes
	rate    float64
	jumped  time.Duration
	drop    []election.NodeID
	hold    []election.NodeID
	started bool
}

// Open starts the election machines of a gated run's nodes (chaos.Gate):
// every node that runs now, at once, each after what the world holds for
// it is in place; a paused node when it resumes, a stopped one when it
// restarts. A run that is not gated has nothing to open.
func (b *Backend) Open(ctx context.Context) error {
	b.mu.Lock()
	already := b.opened
	b.opened = true
	b.mu.Unlock()
	if already || !b.spec.Gated {
		return nil
	}
	return b.reconcileNodes(ctx, nil)
}

// A node holds as many jammed messages as the simulator does: a compile
// error if the bounds differ.
const _ = uint(control.MaxHeld-chaos.JamHeld) + uint(chaos.JamHeld-control.MaxHeld)

// jamHook carries out a jam: a jam on a node changes every node's hold
// set — the jammed node holds what every peer sends it, every peer holds
// what it sends — so that every message to and from it is held where it
// arrives, the NATS routes staying up (NFQUEUE-held packets would leave
// a route silent until its pings closed it, losing what it held). Heal
// releases them (its hook reconciles every node too).
func jamHook(b *Backend, ctx context.Context, _ chaos.Fault) error {
	return b.reconcileNodes(ctx, nil)
}

// holdFrom is node id's hold set in world s: every other member when id
// is jammed, else the jammed members.
func holdFrom(s chaos.State, members []election.NodeID, id election.NodeID) []election.NodeID {
	_, jammed := s.NetOf(chaos.Jam, id)
	var out []election.NodeID
	for _, m := range members {
		if m == id {
			continue
		}
		if _, j := s.NetOf(chaos.Jam, m); j || jammed {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// clockHook carries out a clock fault: the nodes it names take the world's
// clock live.
func clockHook(b *Backend, ctx context.Context, f chaos.Fault) error {
	return b.reconcileNodes(ctx, f.Nodes)
}

// reconcileNodes brings the processes of ids (every member when ids is
// nil) to the world's clocks, drop sets and hold sets. A node that is down or paused
// is left alone: docker exec cannot reach a frozen process, and a dead one
// has nothing to change; restart and resume reconcile it when it runs.
func (b *Backend) reconcileNodes(ctx context.Context, ids []election.NodeID) error {
	if ids == nil {
		ids = b.spec.Members
	}
	var todo []election.NodeID
	b.mu.Lock()
	for _, id := range ids {
		if n := b.nodes[id]; n != nil && b.world.Up[id] && !b.world.Paused[id] {
			todo = append(todo, id)
		}
	}
	b.mu.Unlock()
	return b.eachNode(ctx, todo, func(n *node) error { return b.reconcileNode(ctx, n) })
}

// reconcileNode sends node n what it lacks: a rate, a jump by the
// difference, the whole drop set, the whole hold set — at most two
// requests, since one request changes the clock one way.
func (b *Backend) reconcileNode(ctx context.Context, n *node) error {
	if b.spec.System != nil {
		return nil // a server has no control channel: its one-way cuts are rules (system.go)
	}
	b.mu.Lock()
	want := b.world.ClockOf(n.id)
	drop := rules.DropFrom(b.world, b.spec.Members, n.id)
	hold := holdFrom(b.world, b.spec.Members, n.id)
	start := !b.spec.Gated || b.opened
	have := b.heldLocked(n)
	b.mu.Unlock()

	var reqs []control.Request
	if want.Rate != have.rate {
		reqs = append(reqs, control.SetRate(want.Rate))
	}
	if d := want.Jumped - have.jumped; d != 0 {
		reqs = append(reqs, control.Jump(d))
	}
	if !slices.Equal(drop, have.drop) {
		if len(reqs) > 0 {
			reqs[0].DropFrom = control.DropFrom(drop...).DropFrom
		} else {
			reqs = append(reqs, control.DropFrom(drop...))
		}
	}
	if !slices.Equal(hold, have.hold) {
		if len(reqs) > 0 {
			reqs[0].HoldFrom = control.HoldFrom(hold...).HoldFrom
		} else {
			reqs = append(reqs, control.HoldFrom(hold...))
		}
	}
	if start && !have.started {
		// Last: the machine's first election sees the rest in place.
		if len(reqs) > 0 {
			reqs[len(reqs)-1].Start = true
		} else {
			reqs = append(reqs, control.Start())
		}
	}
	for _, c := range reqs {
		if _, err := b.control(ctx, n.id, c); err != nil {
			return fmt.Errorf("docker: node %d: %w", n.id, err)
		}
	}
	if len(reqs) > 0 {
		b.logf("node %d: clock %g×, jumped %v, dropping from %v, holding from %v, started %v: in effect", n.id, want.Rate, want.Jumped, drop, hold, start || have.started)
	}
	b.mu.Lock()
	b.ctl[n.id] = nodeControl{boot: have.boot, rate: want.Rate, jumped: want.Jumped, drop: drop, hold: hold, started: start || have.started}
	b.mu.Unlock()
	return nil
}

// heldLocked is what n's current process holds: what was last sent to
// it, or a new process's defaults when it booted since.
func (b *Backend) heldLocked(n *node) nodeControl {
	boot := len(n.rec.Boots)
	if c, ok := b.ctl[n.id]; ok && c.boot == boot {
		return c
	}
	return nodeControl{boot: boot, rate: 1, started: !b.spec.Gated}
}

// noted takes a node's line about a control change into what its process
// is known to hold: a clock line gives the rate (and a jump), a drop-from
// line the whole drop set. A line of a new boot starts afresh.
//
// A log read again from an earlier instant repeats lines; one no later
// than the last taken is skipped, so a jump is not counted twice.
func (n *node) noted(c history.ControlNote) {
	if c.Boot != n.saidBoot {
		n.said, n.saidBoot, n.saidAt = nodeControl{rate: 1}, c.Boot, time.Time{}
	}
	if !c.Time.After(n.saidAt) {
		return
	}
	n.saidAt = c.Time
	switch c.Event {
	case history.EventClock:
		if c.Rate > 0 {
			n.said.rate = c.Rate
		}
		n.said.jumped += time.Duration(c.JumpMS) * time.Millisecond
	case history.EventDropFrom:
		n.said.drop = slices.Clone(c.DropFrom)
	}
}

// adoptControl reads back, for an attached cluster, what the nodes' logs
// say their processes hold of the control channel's changes, into the
// world as the faults that made them: one-way cuts into each node, and its
// clock.
func (b *Backend) adoptControl() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range b.spec.Members {
		n := b.nodes[id]
		if n == nil || !b.world.Up[id] || len(n.rec.Boots) == 0 || n.saidBoot != n.rec.Boots[len(n.rec.Boots)-1] {
			continue
		}
		said := n.said
		var links [][2]election.NodeID
		for _, from := range said.drop {
			links = append(links, [2]election.NodeID{from, id})
		}
		if len(links) > 0 {
			b.world.Apply(chaos.Fault{Op: chaos.Partition, Links: links}, b.spec.Members)
		}
		if said.rate != 1 || said.jumped != 0 {
			p := chaos.ParamsOf(chaos.ClockRate.Of(said.rate), chaos.ClockJump.OfDur(said.jumped))
			b.world.Apply(chaos.Fault{Op: chaos.Clock, Nodes: []election.NodeID{id}, Params: p}, b.spec.Members)
		}
		said.boot = len(n.rec.Boots)
		said.started = true // an attached cluster's machines run (its spec is never gated)
		b.ctl[id] = said
	}
}
