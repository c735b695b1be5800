package docker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/chaos/rules"
	"github.com/ringleader-dev/ringleader/election"
	rlnode "github.com/ringleader-dev/ringleader/node"
)

// What a node's process holds of the world that only the node itself can
// carry out: its clock (rate, and the jumps it took) and its drop set (the
// receiving end of one-way cuts, rules.DropFrom). The world model says what
// it should be; reconcileNodes brings each process there over the control
// channel (control.go). A new process (a restart, or a node that died and
// came back on its own) starts at rate 1 with nothing dropped.
type nodeControl struct {
	boot   int // the boot (len(rec.Boots)) this describes
	rate   float64
	jumped time.Duration
	drop   []election.NodeID
}

// clockHook carries out a clock fault: the nodes it names take the world's
// clock live.
func clockHook(b *Backend, ctx context.Context, f chaos.Fault) error {
	return b.reconcileNodes(ctx, f.Nodes)
}

// reconcileNodes brings the processes of ids (every member when ids is
// nil) to the world's clocks and drop sets. A node that is down or paused
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
// difference, the whole drop set — at most two requests, since one
// request changes the clock one way.
func (b *Backend) reconcileNode(ctx context.Context, n *node) error {
	b.mu.Lock()
	want := b.world.ClockOf(n.id)
	drop := rules.DropFrom(b.world, b.spec.Members, n.id)
	have := b.heldLocked(n)
	b.mu.Unlock()

	var reqs []rlnode.Control
	if want.Rate != have.rate {
		reqs = append(reqs, rlnode.SetRate(want.Rate))
	}
	if d := want.Jumped - have.jumped; d != 0 {
		reqs = append(reqs, rlnode.Jump(d))
	}
	if !slices.Equal(drop, have.drop) {
		if len(reqs) > 0 {
			reqs[0].DropFrom = rlnode.DropFrom(drop...).DropFrom
		} else {
			reqs = append(reqs, rlnode.DropFrom(drop...))
		}
	}
	for _, c := range reqs {
		if _, err := b.control(ctx, n.id, c); err != nil {
			return fmt.Errorf("docker: node %d: %w", n.id, err)
		}
	}
	if len(reqs) > 0 {
		b.logf("node %d: clock %g×, jumped %v, dropping from %v: in effect", n.id, want.Rate, want.Jumped, drop)
	}
	b.mu.Lock()
	b.ctl[n.id] = nodeControl{boot: have.boot, rate: want.Rate, jumped: want.Jumped, drop: drop}
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
	return nodeControl{boot: boot, rate: 1}
}
