package docker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/neigh"
	"github.com/ringleader-dev/ringleader/trust"
)

// Start builds (once per process) or checks the node image, creates a
// labelled network for the run, starts one container per member (up to
// startParallel at a time), follows their logs into sink and returns once
// every node has logged event=boot. After an error, Close removes whatever was created.
func (b *Backend) Start(ctx context.Context, spec chaos.ClusterSpec, sink history.Sink) (err error) {
	if err := spec.Validate(); err != nil {
		return err
	}
	if !runName.MatchString(spec.Name) {
		return fmt.Errorf("docker: cluster name %q cannot name containers (valid: letters, digits, '_', '.', '-', starting with a letter or digit, at most 63)", spec.Name)
	}
	ctx, done, ok := b.begin(ctx)
	defer done()
	if !ok {
		return fmt.Errorf("docker: backend closed before Start")
	}
	defer func() { b.noteInterrupted(ctx, err) }() // before done() cancels ctx
	b.mu.Lock()
	if b.started {
		b.mu.Unlock()
		return fmt.Errorf("docker: backend already started run %s; use a new Backend per run", b.run)
	}
	b.takeRunLocked(spec.Name, sink)
	b.spec = spec
	b.secret = trust.NewSecret()
	followCtx := b.life
	b.mu.Unlock()

	start := time.Now()
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	plan, err := checkCapacity(ctx, cli, len(spec.Members))
	if err == nil {
		err = plan.apply(neigh.Dir, b.warnf)
	}
	if err != nil {
		cli.Close()
		return err
	}
	b.mu.Lock()
	b.cli = cli
	b.mu.Unlock()
	if err := b.connectEngines(ctx, cli, spec); err != nil {
		return err
	}

	if b.cfg.build {
		if err := BuildImage(ctx, b.cfg.image, b.cfg.progress); err != nil {
			return err
		}
	} else if ok, err := imageExists(ctx, cli, b.cfg.image); err != nil {
		return fmt.Errorf("docker: inspect image %s: %w", b.cfg.image, err)
	} else if !ok {
		return fmt.Errorf("docker: image %s not found; build it with `make images` or leave WithBuild on", b.cfg.image)
	}
	if err := checkImageExposesNothing(ctx, cli, b.cfg.image); err != nil {
		return err
	}
	b.nodeImage = b.cfg.image
	if spec.System != nil {
		// The node image still serves the netfilter helpers and the
		// reaper; the members run the system's.
		if err := BuildSystemImage(ctx, spec.System, b.cfg.progress); err != nil {
			return err
		}
		if err := checkImageExposesNothing(ctx, cli, spec.System.Image); err != nil {
			return err
		}
		b.nodeImage = spec.System.Image
	}
	if len(spec.Program) > 0 {
		if b.nodeImage, b.programLine, err = buildProgramImage(ctx, cli, b.cfg.image, spec.Program, spec.ProgramImage, nil, b.cfg.progress); err != nil {
			return err
		}
	}

	if b.multi() {
		if err := b.copyImages(ctx, uniq(b.cfg.image, b.nodeImage)...); err != nil {
			return err
		}
	}

	// The reaper comes first: from here on, whatever the run creates goes
	// when this process does (reaper.go); one on each engine.
	if err := b.startReaper(ctx, cli.Client, &b.reaper); err != nil {
		return err
	}
	if err := b.startOtherReapers(ctx); err != nil {
		return err
	}
	var (
		nw    *testcontainers.DockerNetwork
		addrs map[election.NodeID]netip.Addr
	)
	if b.multi() {
		nw, addrs, err = b.createOverlay(ctx, spec.Members)
	} else {
		nw, addrs, err = b.createNetwork(ctx, cli, spec.Members)
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.netID, b.netName = nw.ID, nw.Name
	b.mu.Unlock()

	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, b.cfg.startParallel)
		emu     sync.Mutex
		errs    []error
		started atomic.Int64
	)
	stopProgress := b.startProgress(start, len(spec.Members), &started)
	for _, id := range startOrder(spec.Members) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := b.startNode(ctx, followCtx, nw, addrs, id); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
				return
			}
			started.Add(1)
		}()
	}
	wg.Wait()
	stopProgress()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := b.refreshIPs(ctx); err != nil {
		return err
	}
	if b.multi() {
		if err := b.awaitOverlayPeers(ctx, b.cfg.bootTimeout); err != nil {
			return err
		}
	}
	booted, err := b.waitFor(ctx, b.cfg.bootTimeout, func() bool {
		for _, n := range b.nodes {
			if len(n.rec.Boots) == 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if !booted && spec.System != nil {
		return fmt.Errorf("docker: run %s: not every %s member answered its probe within %v:\n%s", b.run, spec.System.Name, b.cfg.bootTimeout, b.notAnswered(ctx))
	}
	if !booted {
		return fmt.Errorf("docker: run %s: not every node logged event=boot within %v (not booted: %s); see `docker logs rl-%s-node<ID>`",
			b.run, b.cfg.bootTimeout, b.notBooted(), b.run)
	}
	b.logf("run %s: %d nodes booted in %v", b.run, len(spec.Members), time.Since(start).Round(time.Millisecond))
	return nil
}

// startOrder is the order members' containers start in: highest ID first.
// The highest node elects itself and every later one joins a leader that
// stays (a Bully node that boots asks only higher IDs, and the leader
// answers with its COORDINATOR). Lowest first, each start was a takeover:
// 64 elections in a row while 64 containers started on 2 cores, and the
// last of them, overlapping, still running when the scenario began.
func startOrder(members []election.NodeID) []election.NodeID {
	order := slices.Clone(members)
	slices.SortFunc(order, func(a, b election.NodeID) int { return cmp.Compare(b, a) })
	return order
}

// startProgressEvery is how often a long start says how far it got: a
// 64-node start takes about a minute on 2 cores, long enough to look hung.
const startProgressEvery = 10 * time.Second

// startProgress prints, every startProgressEvery until the returned stop is
// called, how many of n containers have started since t0 (nothing for a
// start quicker than that).
func (b *Backend) startProgress(t0 time.Time, n int, started *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(startProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				b.warnf("docker: run %s: %d of %d nodes started (%v)", b.run, started.Load(), n, time.Since(t0).Round(time.Second))
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

func (b *Backend) notBooted() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s []string
	for _, id := range b.spec.Members {
		if n := b.nodes[id]; n == nil || len(n.rec.Boots) == 0 {
			s = append(s, strconv.Itoa(int(id)))
		}
	}
	return strings.Join(s, ",")
}

// nodeEnv is the node contract's environment for member id, whose peers
// are at addrs.
// programLine, when not empty, is the command line of the program the
// node hosts (RINGLEADER_PROGRAM), inside its image.
func nodeEnv(spec chaos.ClusterSpec, programLine, secret string, addrs map[election.NodeID]netip.Addr, id election.NodeID) map[string]string {
	peers := make([]string, len(spec.Members))
	for i, m := range spec.Members {
		peers[i] = fmt.Sprintf("%d=%s", m, addrs[m])
	}
	quorum := spec.Quorum.String()
	t := spec.Timing.WithDefaults()
	env := map[string]string{
		"RINGLEADER_ID":        strconv.Itoa(int(id)),
		"RINGLEADER_PEERS":     strings.Join(peers, ","),
		"RINGLEADER_ALGORITHM": spec.Algorithm,
		"RINGLEADER_QUORUM":    quorum,
		"RINGLEADER_OPTIONS":   spec.Options.String(),
		"RINGLEADER_HEARTBEAT": t.Heartbeat.String(),
		"RINGLEADER_SUSPICION": t.Suspicion.String(),
		"RINGLEADER_ANSWER":    t.Answer.String(),
		"RINGLEADER_CLUSTER":   spec.Name,
		// A line per message sent and received: the checkers count
		// messages and the report draws them. (At debug the embedded
		// NATS server's own log stays off; that is trace.)
		"RINGLEADER_LOG_LEVEL": "debug",
		// The run's own secret, made in Start and never in an image.
		trust.SecretEnv: secret,
	}
	if programLine != "" {
		env["RINGLEADER_PROGRAM"] = programLine
		env["RINGLEADER_OPTIONS"] = "" // a program takes none
		if spec.ProgramTimeout > 0 {
			env["RINGLEADER_PROGRAM_TIMEOUT"] = spec.ProgramTimeout.String()
		}
	}
	if spec.Gated && spec.System == nil {
		// Booted gated, started by Open (nodectl.go); a restarted
		// container keeps it and is started again the same way.
		env["RINGLEADER_GATED"] = "true"
	}
	if spec.Seed != 0 {
		// One seed per node, all derived from the run's.
		env["RINGLEADER_SEED"] = strconv.FormatInt(spec.Seed*1_000_003+int64(id), 10)
	}
	return env
}

func alias(id election.NodeID) string { return fmt.Sprintf("node%d", id) }

func (b *Backend) containerName(id election.NodeID) string {
	return fmt.Sprintf("rl-%s-node%d", b.run, id)
}

func (b *Backend) startNode(ctx, followCtx context.Context, nw *testcontainers.DockerNetwork, addrs map[election.NodeID]netip.Addr, id election.NodeID) error {
	if b.spec.System != nil {
		return b.startSystemMember(ctx, followCtx, nw, addrs, id)
	}
	if b.multi() {
		return b.startPlacedNode(ctx, followCtx, nw, addrs, id)
	}
	name := b.containerName(id)
	var ph startPhases
	ph.begin = time.Now()
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:    b.nodeImage,
			Name:     name,
			Env:      nodeEnv(b.spec, b.programLine, b.secret, addrs, id),
			Labels:   labels(b.run, RoleNode),
			Networks: []string{nw.Name},
			NetworkAliases: map[string][]string{
				nw.Name: {alias(id)},
			},
			EndpointSettingsModifier: func(eps map[string]*network.EndpointSettings) {
				if ep := eps[nw.Name]; ep != nil {
					ep.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: addrs[id]}
				}
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				// The node contract promises it runs read-only;
				// holding it to that keeps state where the
				// contract says (the volume).
				hc.ReadonlyRootfs = true
				hardenNode(hc)
				// Rather than the anonymous volume the image's
				// VOLUME would make.
				hc.Mounts = append(hc.Mounts, b.runVolume(name+"-state", stateDir))
			},
		},
		Started: true,
	}
	req.LifecycleHooks = ph.hooks()
	c, err := testcontainers.GenericContainer(ctx, req)
	b.adopt(c, err == nil, id, name, nil, func(n *node) { go b.follow(followCtx, n) })
	if err != nil {
		return fmt.Errorf("docker: run %s: start node %d (%s): %w", b.run, id, name, err)
	}
	b.logf("node %d: container %s started in %v (%s)", id, name, time.Since(ph.begin).Round(time.Millisecond), ph)
	return nil
}

// startPhases are the instants of one container's start, for the progress
// line that says where a start's time goes: testcontainers' preparation
// (its provider, the image and network lookups), the engine's create and
// start calls, and what testcontainers does after each.
type startPhases struct {
	begin, prepared, created, starting, started time.Time
}

// hooks stamps the phases; testcontainers runs a request's own pre-hooks
// after its defaults and its post-hooks before them.
func (p *startPhases) hooks() []testcontainers.ContainerLifecycleHooks {
	stamp := func(t *time.Time) testcontainers.ContainerHook {
		return func(context.Context, testcontainers.Container) error { *t = time.Now(); return nil }
	}
	return []testcontainers.ContainerLifecycleHooks{{
		PreCreates: []testcontainers.ContainerRequestHook{func(context.Context, testcontainers.ContainerRequest) error {
			p.prepared = time.Now()
			return nil
		}},
		PostCreates: []testcontainers.ContainerHook{stamp(&p.created)},
		PreStarts:   []testcontainers.ContainerHook{stamp(&p.starting)},
		PostStarts:  []testcontainers.ContainerHook{stamp(&p.started)},
	}}
}

func (p startPhases) String() string {
	ms := func(a, b time.Time) time.Duration { return b.Sub(a).Round(time.Millisecond) }
	return fmt.Sprintf("prepare %v, create %v, between %v, start %v, after %v",
		ms(p.begin, p.prepared), ms(p.prepared, p.created), ms(p.created, p.starting), ms(p.starting, p.started), ms(p.started, time.Now()))
}

// runVolume is a named volume carrying the run's labels, mounted at
// target: it survives kill and restart, and clean-up by label finds it
// after a crash.
func (b *Backend) runVolume(name, target string) mount.Mount {
	return mount.Mount{
		Type: mount.TypeVolume, Source: name, Target: target,
		VolumeOptions: &mount.VolumeOptions{Labels: labels(b.run, RoleNode)},
	}
}

// adopt keeps the container a start returned as node id (a failed start
// can still leave one, which Close must find): prepare, when set, fills
// in the node before anyone sees it, and watch starts its follower (one
// of b.followers). A node that started is, to the world, one that booted.
func (b *Backend) adopt(c testcontainers.Container, started bool, id election.NodeID, name string, prepare, watch func(*node)) {
	dc, _ := c.(*testcontainers.DockerContainer)
	if dc == nil {
		return
	}
	n := newNode(id, name, dc.GetContainerID(), dc)
	if prepare != nil {
		prepare(n)
	}
	b.adoptNode(n, started, watch)
}

// adoptNode keeps n as its member's node, started or not, and starts its
// follower with watch: the tail of every start, through testcontainers
// (adopt) or on another engine with its client (startPlacedNode).
func (b *Backend) adoptNode(n *node, started bool, watch func(*node)) {
	b.mu.Lock()
	b.nodes[n.id] = n
	b.adoptProcessLocked(n.id, started, false)
	b.notifyLocked()
	b.mu.Unlock()
	b.followers.Add(1)
	watch(n)
}

// refreshIPs reads every running node's address on the run network. It
// reports whether any address changed (a restarted container may get a new
// one).
func (b *Backend) refreshIPs(ctx context.Context) error {
	b.mu.Lock()
	netName := b.netName
	nodes := make([]*node, 0, len(b.nodes))
	for _, n := range b.nodes {
		nodes = append(nodes, n)
	}
	b.mu.Unlock()
	for _, n := range nodes {
		res, err := b.cliOf(n).ContainerInspect(ctx, n.cid, client.ContainerInspectOptions{})
		if err != nil {
			return fmt.Errorf("docker: inspect node %d: %w", n.id, err)
		}
		if res.Container.State == nil || !res.Container.State.Running || res.Container.NetworkSettings == nil {
			continue
		}
		ep := res.Container.NetworkSettings.Networks[netName]
		if (ep == nil || !ep.IPAddress.IsValid()) && b.attached {
			// Someone ran `docker network disconnect` on a cluster
			// this backend only attached to: no address, no rules
			// naming it, until it is connected again.
			b.mu.Lock()
			n.ip = ""
			b.mu.Unlock()
			continue
		}
		if ep == nil || !ep.IPAddress.IsValid() {
			return fmt.Errorf("docker: node %d is not on network %s", n.id, netName)
		}
		b.mu.Lock()
		n.ip = ep.IPAddress.String()
		n.pid, n.netPid = 0, res.Container.State.Pid
		if !b.attached && !res.Container.State.Paused {
			n.pid = res.Container.State.Pid
		}
		b.mu.Unlock()
	}
	return nil
}

// waitFor waits until pred (called with b.mu held) holds, for up to d.
func (b *Backend) waitFor(ctx context.Context, d time.Duration, pred func() bool) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		b.mu.Lock()
		ok, ch := pred(), b.changed
		b.mu.Unlock()
		if ok {
			return true, nil
		}
		select {
		case <-ch:
		case <-t.C:
			b.mu.Lock()
			defer b.mu.Unlock()
			return pred(), nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// appendRecord keeps the history and the state in one order: records are
// appended under the lock that guards the state they change.
func (b *Backend) appendRecordLocked(r history.Record) {
	if b.sink == nil {
		return
	}
	if err := b.sink.Append(r); err != nil {
		b.logf("history: %v", err)
	}
}

func (b *Backend) appendRecord(r history.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.appendRecordLocked(r)
	b.notifyLocked()
}

// Close stops every node and removes every container (nodes and helpers),
// their volumes and the run's network; then it removes anything else still
// labelled with the run (what a half-finished Start created). Safe after a
// failed Start and more than once. It works even when ctx is already
// cancelled (an interrupted run still cleans up), bounded by 10 s plus 1 s
// per container. Last it stops the run's reaper, and it returns an error
// naming whatever is still labelled with the run.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.cancel()
	attached := b.attached
	b.mu.Unlock()
	b.ops.Wait() // a cancelled Start or Apply returns soon
	b.bg.Wait()
	if attached {
		return b.detach(ctx)
	}
	b.mu.Lock()
	run, cli, netID := b.run, b.cli, b.netID
	var nodes []*node
	for _, n := range b.nodes {
		nodes = append(nodes, n)
	}
	var helpers []string
	for id := range b.helpers {
		helpers = append(helpers, id)
	}
	delays := b.delayHelpersLocked()
	b.mu.Unlock()
	if run == "" {
		return nil // Start never began
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout(len(nodes)+len(helpers)+len(delays)))
	defer cancel()
	t0 := time.Now()

	var errs []error
	if cli == nil {
		var err error
		if cli, err = newClient(ctx); err != nil {
			return err
		}
	}
	defer cli.Close()
	for _, id := range append(helpers, delays...) {
		b.mu.Lock()
		hcli := b.cliOfHelperLocked(id)
		b.mu.Unlock()
		if _, err := hcli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove helper %s: %w", id, err))
		}
	}
	b.killAll(ctx, nodes)
	var (
		wg  sync.WaitGroup
		emu sync.Mutex
		sem = make(chan struct{}, cleanParallel)
	)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// No grace period: the run is over, its history is
			// complete, and SIGTERM would only add records.
			var err error
			if n.owned {
				err = b.removeNode(ctx, n)
			} else {
				err = n.container.Terminate(ctx, testcontainers.StopTimeout(0))
			}
			if err != nil && !isNotFound(err) {
				emu.Lock()
				errs = append(errs, fmt.Errorf("terminate node %d: %w", n.id, err))
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.followers.Wait()
	if netID != "" && b.multi() {
		if err := b.removeOverlay(ctx, netID); err != nil {
			errs = append(errs, fmt.Errorf("remove overlay network: %w", err))
		}
	} else if netID != "" {
		if _, err := cli.NetworkRemove(ctx, netID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network: %w", err))
		}
	}
	errs = append(errs, b.closeOthers(ctx, run)...)
	// Whatever Start created but never handed back carries the run label;
	// then the reaper goes, and what is left, if anything, is named.
	errs = append(errs, b.finishClose(ctx, cli, run, t0)...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("docker: close run %s: %w", run, err)
	}
	return nil
}

// killAll sends every node SIGKILL at once before anything is removed. A
// large cluster left running while its containers go a few at a time keeps
// electing and starves the removal: 64 nodes took minutes. A kill is
// cheap; removal, which unmounts, is what goes cleanParallel at a time.
// Errors are left to the removal that follows, which reports them.
func (b *Backend) killAll(ctx context.Context, nodes []*node) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = b.cliOf(n).ContainerKill(ctx, n.cid, client.ContainerKillOptions{Signal: "KILL"})
		}()
	}
	wg.Wait()
}
