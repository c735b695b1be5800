package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/docker/rules"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Apply injects f and returns once it is in effect, recording the fault's
// invoke and its ok or fail in the history: the sequence every backend
// shares (chaos.Carry). This backend's part is what it cannot do — a kind
// with no hook here is refused, before the world changes, with
// chaos.Unsupported — and its reconcile hook: the kind's hook, which makes
// the containers and their namespaces match the model.
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
	t0 := time.Now()
	err := chaos.Carry(ctx, (*world)(b), f, target)
	b.noteInterrupted(ctx, err) // a helper container's create, say
	if err == nil {
		b.logf("%s %s: in effect after %v", f.Op, target, time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// world is the backend as chaos.Carry sees it.
type world Backend

func (w *world) Name() string            { return (*Backend)(w).Name() }
func (w *world) Now() time.Time          { return (*Backend)(w).Now() }
func (w *world) Record(r history.Record) { (*Backend)(w).appendRecord(r) }

// Refuse refuses a kind this backend has no hook for, and a fault the
// cluster's system cannot take (a clock fault on a Go server).
func (w *world) Refuse(f chaos.Fault) error {
	if _, known := chaos.KindOf(f.Op); known && hooks[f.Op] == nil {
		return chaos.Unsupported(f.Op, w.Name())
	}
	return (*Backend)(w).refuseForSystem(f)
}

// LockModel holds the backend's lock while Carry changes the world.
func (w *world) LockModel() (*chaos.State, []election.NodeID) {
	w.mu.Lock()
	return &w.world, w.spec.Members
}

// UnlockModel: the nodes of the fault applied are busy from now until
// Reconcile is done: their followers leave the world alone (it is ahead
// of the containers).
func (w *world) UnlockModel(f chaos.Fault, applied bool) {
	b := (*Backend)(w)
	defer b.mu.Unlock()
	if applied {
		b.markBusyLocked(f.Nodes, true)
		b.notifyLocked()
	}
}

// Reconcile runs f's hook. When the hook fails, the world takes back
// what the engine says of those nodes' processes.
func (w *world) Reconcile(ctx context.Context, f chaos.Fault) error {
	b := (*Backend)(w)
	err := hooks[f.Op](b, ctx, f)
	if err != nil {
		b.observe(ctx, f.Nodes)
	}
	b.mu.Lock()
	b.markBusyLocked(f.Nodes, false)
	b.mu.Unlock()
	return err
}

// A hook carries out the imperative part of fault f, whose effect the
// world model already holds: it brings the containers and their network
// namespaces to what the model says.
type hook func(b *Backend, ctx context.Context, f chaos.Fault) error

// hooks is what this backend can carry out, one hook per fault kind: the
// one table that says what containers can do. A kind without an entry is
// unsupported on docker (Apply refuses it with chaos.Unsupported, and the
// conformance suite holds that outcome).
//
// What only a node's own process can carry out — its clock, the
// receiving end of a one-way cut and of a jam — goes over the control
// channel (nodectl.go).
var hooks = map[chaos.Op]hook{
	chaos.Kill:      eachNode((*Backend).crash),
	chaos.Stop:      eachNode((*Backend).crash),
	chaos.Restart:   (*Backend).restart,
	chaos.Pause:     eachNode((*Backend).pause),
	chaos.Resume:    eachNode((*Backend).resume),
	chaos.Partition: reconcileCuts,
	chaos.Heal:      reconcileCuts,
	chaos.Loss:      reconcile,
	chaos.Delay:     reconcile,
	chaos.Clock:     clockHook,
	chaos.Jam:       jamHook,
}

// reconcile is the hook of loss and delay: whatever the fault, the
// namespaces are reconciled to the world's cuts, losses and delays.
func reconcile(b *Backend, ctx context.Context, _ chaos.Fault) error { return b.reconcileNetwork(ctx) }

// reconcileCuts is the hook of partition and heal: the namespaces' rules
// (links cut both ways), then the nodes' drop sets (links cut one way).
func reconcileCuts(b *Backend, ctx context.Context, _ chaos.Fault) error {
	if err := b.reconcileNetwork(ctx); err != nil {
		return err
	}
	return b.reconcileNodes(ctx, nil)
}

// eachNode is the hook that carries out fn on every node the fault names.
func eachNode(fn func(b *Backend, ctx context.Context, op chaos.Op, n *node) error) hook {
	return func(b *Backend, ctx context.Context, f chaos.Fault) error {
		return b.eachNode(ctx, f.Nodes, func(n *node) error { return fn(b, ctx, f.Op, n) })
	}
}

func (b *Backend) markBusyLocked(ids []election.NodeID, busy bool) {
	for _, id := range ids {
		if n := b.nodes[id]; n != nil {
			n.busy = busy
			n.gen++
		}
	}
}

// observe brings the world's idea of the nodes' processes to what the
// engine says (a hook that failed half-way leaves them as they are).
func (b *Backend) observe(ctx context.Context, ids []election.NodeID) {
	for _, id := range ids {
		b.mu.Lock()
		n := b.nodes[id]
		b.mu.Unlock()
		if n == nil {
			continue
		}
		st, err := b.state(ctx, n)
		if err != nil || st == nil {
			continue
		}
		b.mu.Lock()
		b.adoptProcessLocked(id, st.Running, st.Paused)
		b.notifyLocked()
		b.mu.Unlock()
	}
}

// adoptProcessLocked brings the world's idea of node id's process to what
// the engine says — running, paused — through the faults that make it so,
// so that even what is read rather than done changes the world the one
// way (State.Apply): a process found gone is, to the model, a killed one.
func (b *Backend) adoptProcessLocked(id election.NodeID, running, paused bool) {
	apply := func(op chaos.Op) {
		b.world.Apply(chaos.Fault{Op: op, Nodes: []election.NodeID{id}}, b.spec.Members)
	}
	switch up := b.world.Up[id]; {
	case up && !running:
		apply(chaos.Kill)
	case !up && running:
		apply(chaos.Restart)
	}
	if running && paused != b.world.Paused[id] {
		if paused {
			apply(chaos.Pause)
		} else {
			apply(chaos.Resume)
		}
	}
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

// crash kills (SIGKILL) or stops (SIGTERM) n's container and returns once
// its process is gone.
func (b *Backend) crash(ctx context.Context, op chaos.Op, n *node) error {
	cli := b.cliOf(n)
	// Signal first and ask nothing before: a kill's failover is timed
	// from its invoke, and an inspect before the signal added one engine
	// round trip to it. The engine, not the world, says whether the
	// process was still there: a node may have exited on its own, unseen
	// yet, and then the signal is refused as "not running".
	//
	// Wait for the exit from before the signal, so Apply returns with
	// the process gone; on a container that is not running the wait
	// returns at once.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := cli.ContainerWait(wctx, n.cid, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	err := b.signal(ctx, op, n)
	if !isNotRunning(err) {
		if isPausedRefusal(err) {
			// An engine older than this project's refuses to signal
			// a frozen container: thaw it, then signal it. The node
			// may then run briefly before it dies.
			if _, uerr := cli.ContainerUnpause(ctx, n.cid, client.ContainerUnpauseOptions{}); uerr != nil {
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
	}
	// The namespace went with the process; its rules and delay are put
	// back when the node starts again.
	return b.forgetNamespace(ctx, n.id)
}

// restart starts the nodes' containers again, puts the network faults in
// force back into their new namespaces, and returns once each has booted.
func (b *Backend) restart(ctx context.Context, f chaos.Fault) error {
	boots := map[election.NodeID]int{}
	b.mu.Lock()
	for _, id := range f.Nodes {
		if n := b.nodes[id]; n != nil {
			boots[id] = len(n.rec.Boots)
		}
	}
	b.mu.Unlock()
	if err := b.eachNode(ctx, f.Nodes, func(n *node) error { return b.start(ctx, n) }); err != nil {
		return err
	}
	// New namespaces, maybe new addresses: put the rules back (the
	// nodes' own, and every rule naming their addresses).
	if err := b.refreshIPs(ctx); err != nil {
		return err
	}
	if err := b.reconcileNetwork(ctx); err != nil {
		return fmt.Errorf("docker: restart nodes %s: reinstall network faults: %w", chaos.IDList(f.Nodes), err)
	}
	return b.eachNode(ctx, f.Nodes, func(n *node) error {
		ok, err := b.waitFor(ctx, b.cfg.bootTimeout, func() bool { return len(n.rec.Boots) > boots[n.id] })
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("docker: restart node %d: no event=boot within %v; see `docker logs %s`", n.id, b.cfg.bootTimeout, n.name)
		}
		// A new process: the machine's clock rate and the one-way cuts
		// into it are put back.
		return b.reconcileNode(ctx, n)
	})
}

// start starts n's stopped container and sends its follower back to it.
func (b *Backend) start(ctx context.Context, n *node) error {
	up, err := b.running(ctx, n)
	if err != nil {
		return fmt.Errorf("docker: restart node %d: inspect: %w", n.id, err)
	}
	if !up {
		if _, err := b.cliOf(n).ContainerStart(ctx, n.cid, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("docker: restart node %d: %w", n.id, err)
		}
	}
	select {
	case n.started <- struct{}{}:
	default:
	}
	// A delay reader left in the old namespace (the node died on its
	// own) is useless now; a new one joins the new namespace.
	return b.forgetNamespace(ctx, n.id)
}

func (b *Backend) pause(ctx context.Context, _ chaos.Op, n *node) error {
	// A frozen process takes a SIGKILL only when thawed, which the
	// engine's kill does and killDirect does not: from here on the
	// engine kills this node, until it starts again.
	b.mu.Lock()
	n.pid = 0
	b.mu.Unlock()
	if _, err := b.cliOf(n).ContainerPause(ctx, n.cid, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("docker: pause node %d: %w", n.id, err)
	}
	return nil
}

func (b *Backend) resume(ctx context.Context, _ chaos.Op, n *node) error {
	if _, err := b.cliOf(n).ContainerUnpause(ctx, n.cid, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("docker: resume node %d: %w", n.id, err)
	}
	// What changed while it was frozen (docker exec cannot reach a
	// paused process) reaches it now.
	return b.reconcileNode(ctx, n)
}

func (b *Backend) client() *testcontainers.DockerClient {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cli
}

// reconcileNetwork brings every running node's namespace to the world's
// cuts, losses and delays: first the delay helpers that serve a delay the
// world no longer holds go, then the rules change (rules.Diff: new cuts
// first, then lifted ones in two rounds), then a helper starts for every delay in force
// that has none — it installs its namespace's whole rule set itself, so a
// namespace waiting for one is left to it.
func (b *Backend) reconcileNetwork(ctx context.Context) error {
	var stale []string
	b.mu.Lock()
	for id, h := range b.delays {
		if want, ok := delayOf(b.world, id); !ok || want != h.latency || !b.world.Up[id] {
			stale = append(stale, h.cid)
			delete(b.delays, id)
		}
	}
	b.mu.Unlock()
	if err := b.removeContainers(ctx, stale); err != nil {
		return err
	}
	if err := b.syncRules(ctx); err != nil {
		return err
	}
	return b.ensureDelays(ctx)
}

// addrsLocked is every node's address now.
func (b *Backend) addrsLocked() rules.Addrs {
	out := rules.Addrs{}
	for id, n := range b.nodes {
		if a, err := netip.ParseAddr(n.ip); err == nil {
			out[id] = a
		}
	}
	return out
}

// wantRulesLocked is what node id's namespace should hold now.
func (b *Backend) wantRulesLocked(id election.NodeID) netfilter.Rules {
	if b.spec.System != nil {
		return b.systemRulesLocked(b.addrsLocked(), id)
	}
	return rules.Want(b.world, b.spec.Members, b.addrsLocked(), id)
}

// syncRules brings every running node's namespace to what the world says,
// touching only namespaces whose rules change, in the rounds rules.Diff
// plans.
func (b *Backend) syncRules(ctx context.Context) error {
	want := map[election.NodeID]netfilter.Rules{}
	b.mu.Lock()
	addrs := b.addrsLocked()
	for _, id := range b.spec.Members {
		if b.nodes[id] == nil || !b.world.Up[id] {
			continue // installed when it starts again
		}
		if _, delayed := b.world.NetOf(chaos.Delay, id); delayed && b.delays[id].cid == "" {
			continue // its delay helper installs them as it starts
		}
		want[id] = rules.Want(b.world, b.spec.Members, addrs, id)
		if b.spec.System != nil {
			want[id] = b.systemRulesLocked(addrs, id)
		}
	}
	plan := rules.Diff(b.spec.Members, b.applied, want)
	b.mu.Unlock()
	for _, round := range [][]rules.Change{plan.Add, plan.Lift, plan.Install} {
		if err := b.applyRules(ctx, round); err != nil {
			return err
		}
	}
	return nil
}

// applyRules runs the helpers of changes, b.cfg.parallel at a time, and
// records what each namespace holds.
func (b *Backend) applyRules(ctx context.Context, changes []rules.Change) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, b.cfg.parallel)
	)
	for _, c := range changes {
		b.mu.Lock()
		n := b.nodes[c.Node]
		b.mu.Unlock()
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			took, how, err := b.setRules(ctx, n, c.Rules)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			b.logf("netfilter node %d: %s in place after %v, %s", n.id, c.Rules, took.Round(time.Microsecond), how)
			b.mu.Lock()
			if c.Rules.Empty() {
				delete(b.applied, n.id)
			} else {
				b.applied[n.id] = c.Rules
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
	cli := b.cliOf(n)
	id := n.cid
	if op == chaos.Kill {
		b.mu.Lock()
		pid := n.pid
		b.mu.Unlock()
		if b.cfg.direct && killDirect(pid, id) {
			return nil
		}
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

// isNotRunning reports the engine's refusal to signal a container whose
// process is gone already ("Container ... is not running").
func isNotRunning(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is not running")
}
