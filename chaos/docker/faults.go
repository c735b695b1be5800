package docker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/chaos/netfilter"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Apply injects f and returns once it is in effect, recording the fault's
// invoke and its ok or fail in the history.
func (b *Backend) Apply(ctx context.Context, f chaos.Fault, target string) error {
	ctx, done, ok := b.begin(ctx)
	defer done()
	b.mu.Lock()
	ready := ok && b.started && b.cli != nil
	b.mu.Unlock()
	if !ready {
		return fmt.Errorf("docker: apply %s: the backend is not running (Start it first; it must not be closed)", f.Op)
	}
	// One fault at a time: rule sets are computed from the state and
	// installed after, so two partitions racing could install an older
	// set last.
	b.applyMu.Lock()
	defer b.applyMu.Unlock()
	b.appendRecord(f.Record(b.Now(), target, history.FaultInvoke, "", nil))
	t0 := time.Now()
	b.mu.Lock()
	st := b.stateLocked()
	b.mu.Unlock()
	out, err := chaos.Decide(f, st, b.spec.Members)
	if err != nil {
		err = fmt.Errorf("docker: %w", err)
	} else {
		err = b.apply(ctx, out.Fault)
	}
	phase := history.FaultOK
	if err != nil {
		phase = history.FaultFail
	}
	b.appendRecord(f.Record(b.Now(), target, phase, out.Note, err))
	if err == nil {
		b.logf("%s %s: in effect after %v", f.Op, target, time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// apply carries out a fault chaos.Decide has checked.
func (b *Backend) apply(ctx context.Context, f chaos.Fault) error {
	switch f.Op {
	case chaos.Kill, chaos.Stop, chaos.Restart, chaos.Pause, chaos.Resume:
		return b.eachNode(ctx, f.Nodes, func(n *node) error { return b.lifecycle(ctx, f.Op, n) })
	case chaos.Partition:
		b.mu.Lock()
		for _, l := range f.CutLinks(b.spec.Members) {
			b.cut[l] = true
		}
		b.notifyLocked()
		b.mu.Unlock()
		return b.syncRules(ctx)
	case chaos.Loss:
		b.mu.Lock()
		for _, id := range f.Nodes {
			if p := int(math.Round(f.Loss * 100)); p > 0 {
				b.loss[id] = p
			} else {
				delete(b.loss, id)
			}
		}
		b.mu.Unlock()
		return b.syncRules(ctx)
	case chaos.Delay:
		return b.applyDelay(ctx, f)
	case chaos.Heal:
		b.mu.Lock()
		clear(b.cut)
		clear(b.loss)
		b.notifyLocked()
		b.mu.Unlock()
		err := b.stopDelays(ctx)
		return errors.Join(err, b.syncRules(ctx))
	}
	return fmt.Errorf("docker: unknown fault %q (valid: %v)", f.Op, chaos.Ops)
}

// eachNode runs fn for every target, a few at a time.
func (b *Backend) eachNode(ctx context.Context, ids []election.NodeID, fn func(*node) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, b.cfg.parallel)
	)
	for _, id := range ids {
		b.mu.Lock()
		n := b.nodes[id]
		b.mu.Unlock()
		if n == nil {
			return fmt.Errorf("docker: node %d has no container", id)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(n); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lifecycle applies kill, stop, restart, pause or resume to one node. A
// fault that is already in effect (killing a dead node) is a no-op.
func (b *Backend) lifecycle(ctx context.Context, op chaos.Op, n *node) error {
	b.mu.Lock()
	cli, paused := b.cli, b.paused[n.id]
	b.mu.Unlock()
	id := n.cid
	// Ask the engine, not our book-keeping: a node may also have exited
	// on its own.
	up, err := b.running(ctx, n)
	if err != nil {
		return fmt.Errorf("docker: %s node %d: inspect: %w", op, n.id, err)
	}
	switch op {
	case chaos.Kill, chaos.Stop:
		if !up {
			return nil
		}
		// Wait for the exit from before the signal, so Apply returns
		// with the process gone.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wait := cli.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		err = b.signal(ctx, op, n)
		if err != nil && paused && isPausedRefusal(err) {
			// An engine older than this project's refuses to signal
			// a frozen container: thaw it, then signal it. The node
			// may then run briefly before it dies.
			if _, uerr := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{}); uerr != nil {
				return fmt.Errorf("docker: %s paused node %d: the engine refused (%v) and the thaw failed: %w", op, n.id, err, uerr)
			}
			err = b.signal(ctx, op, n)
		}
		if err != nil {
			return fmt.Errorf("docker: %s node %d: %w", op, n.id, err)
		}
		select {
		case <-wait.Result:
		case err := <-wait.Error:
			return fmt.Errorf("docker: %s node %d: wait for exit: %w", op, n.id, err)
		}
		b.mu.Lock()
		n.up = false
		b.paused[n.id] = false
		// The namespace went with the process; rules are put back
		// when the node starts again.
		delete(b.applied, n.id)
		b.notifyLocked()
		b.mu.Unlock()
		return b.dropDelayHelper(ctx, n.id)
	case chaos.Restart:
		if up {
			return nil
		}
		b.mu.Lock()
		boots := len(n.boots)
		b.mu.Unlock()
		if _, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("docker: restart node %d: %w", n.id, err)
		}
		b.mu.Lock()
		n.up = true
		n.gen++
		b.notifyLocked()
		b.mu.Unlock()
		select {
		case n.started <- struct{}{}:
		default:
		}
		// A new namespace, maybe a new address: put the rules back
		// (this node's own, and every rule naming its address).
		if err := b.refreshIPs(ctx); err != nil {
			return err
		}
		// A delay reader left in the old namespace (the node died on
		// its own) is useless now; a new one joins the new namespace.
		if err := b.dropDelayHelper(ctx, n.id); err != nil {
			return err
		}
		if err := errors.Join(b.syncRules(ctx), b.ensureDelays(ctx)); err != nil {
			return fmt.Errorf("docker: restart node %d: reinstall network faults: %w", n.id, err)
		}
		ok, err := b.waitFor(ctx, b.cfg.bootTimeout, func() bool { return len(n.boots) > boots })
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("docker: restart node %d: no event=boot within %v; see `docker logs %s`", n.id, b.cfg.bootTimeout, n.name)
		}
		return nil
	case chaos.Pause:
		if !up {
			return fmt.Errorf("docker: pause node %d: it is not running (killed or stopped); restart it first", n.id)
		}
		if paused {
			return nil
		}
		if _, err := cli.ContainerPause(ctx, id, client.ContainerPauseOptions{}); err != nil {
			return fmt.Errorf("docker: pause node %d: %w", n.id, err)
		}
		b.mu.Lock()
		b.paused[n.id] = true
		b.notifyLocked()
		b.mu.Unlock()
		return nil
	case chaos.Resume:
		if !paused {
			return nil
		}
		if _, err := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{}); err != nil {
			return fmt.Errorf("docker: resume node %d: %w", n.id, err)
		}
		b.mu.Lock()
		b.paused[n.id] = false
		b.notifyLocked()
		b.mu.Unlock()
		return nil
	}
	return fmt.Errorf("docker: %s is not a node lifecycle fault", op)
}

// wantRulesLocked computes what node id's namespace should hold now. A
// directed cut a->b is one rule in a's output chain (the sender drops what
// it would send to b): one place per direction, so a one-way cut touches
// only the sender's namespace.
func (b *Backend) wantRulesLocked(id election.NodeID) netfilter.Rules {
	var r netfilter.Rules
	ip := func(m election.NodeID) (netip.Addr, bool) {
		n := b.nodes[m]
		if n == nil || n.ip == "" {
			return netip.Addr{}, false
		}
		a, err := netip.ParseAddr(n.ip)
		return a, err == nil
	}
	for _, m := range b.spec.Members {
		if m == id {
			continue
		}
		a, ok := ip(m)
		if !ok {
			continue
		}
		if b.cut[[2]election.NodeID{id, m}] {
			r.DropOut = append(r.DropOut, a)
		}
		if p := b.loss[id]; p > 0 {
			r.LossPercent = p
			r.LossPeers = append(r.LossPeers, a)
		}
		if d, ok := b.delay[id]; ok {
			r.Queue = d.queue
			r.QueuePeers = append(r.QueuePeers, a)
		}
	}
	return r
}

// ruleJob is one namespace's new rules.
type ruleJob struct {
	n    *node
	want netfilter.Rules
}

// syncRules brings every running node's namespace to what the current cuts
// and loss say, touching only namespaces whose rules change.
//
// Cuts are lifted in two rounds. The helpers of one round land up to a few
// hundred milliseconds apart, and a node whose cut is gone would meanwhile
// dial a peer still cutting it: the peer's answer is dropped and the dial
// hangs for NATS's whole dial timeout (a second), after which the route
// comes back only at the next attempt. So every namespace that lifts a cut
// first only refuses new connections to those peers and drops nothing
// (RefuseOut), and only when all of them do are the refusals removed: a
// dial then meets either a refusal, which fails at once and is retried in
// routes.Redial, or a peer that answers.
func (b *Backend) syncRules(ctx context.Context) error {
	var jobs, lifting []ruleJob
	b.mu.Lock()
	for _, id := range b.spec.Members {
		n := b.nodes[id]
		if n == nil || !n.up {
			continue // installed when it starts again
		}
		want := b.wantRulesLocked(id)
		if want.String() == b.applied[id].String() {
			continue
		}
		jobs = append(jobs, ruleJob{n, want})
		if lifted := liftedCuts(b.applied[id], want); len(lifted) > 0 {
			interim := want
			interim.RefuseOut = lifted
			lifting = append(lifting, ruleJob{n, interim})
		}
	}
	b.mu.Unlock()
	if len(lifting) > 0 {
		if err := b.applyRules(ctx, lifting); err != nil {
			return err
		}
	}
	return b.applyRules(ctx, jobs)
}

// liftedCuts are the peers applied cut this namespace off from that want
// no longer does.
func liftedCuts(applied, want netfilter.Rules) []netip.Addr {
	var out []netip.Addr
	for _, a := range applied.DropOut {
		if !slices.Contains(want.DropOut, a) {
			out = append(out, a)
		}
	}
	return out
}

// applyRules runs the helpers of jobs, b.cfg.parallel at a time, and
// records what each namespace holds.
func (b *Backend) applyRules(ctx context.Context, jobs []ruleJob) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, b.cfg.parallel)
	)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			args := append([]string{"apply"}, j.want.Args()...)
			if j.want.Empty() {
				args = []string{"heal"}
			}
			took, err := b.runHelper(ctx, j.n, args)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			b.logf("netfilter node %d: %s in place after %v", j.n.id, j.want, took.Round(time.Millisecond))
			b.mu.Lock()
			if j.want.Empty() {
				delete(b.applied, j.n.id)
			} else {
				b.applied[j.n.id] = j.want
			}
			b.mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// signal kills (SIGKILL) or stops (SIGTERM, 10 s grace) n's container.
// Docker 20.10 signals a paused container itself and then thaws it
// (measured: a paused container's kill exits 137 with no log line after
// the freeze; its stop runs the node's SIGTERM handler and exits 0), so a
// paused node killed here dies without running again.
func (b *Backend) signal(ctx context.Context, op chaos.Op, n *node) error {
	b.mu.Lock()
	cli := b.cli
	b.mu.Unlock()
	id := n.cid
	if op == chaos.Kill {
		_, err := cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "SIGKILL"})
		return err
	}
	grace := 10
	_, err := cli.ContainerStop(ctx, id, client.ContainerStopOptions{Signal: "SIGTERM", Timeout: &grace})
	return err
}

// isPausedRefusal reports the error of an engine that will not signal a
// paused container ("Container ... is paused. Unpause the container before
// stopping or killing").
func isPausedRefusal(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is paused")
}
