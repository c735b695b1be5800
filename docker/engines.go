package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/reaper"
	"github.com/ringleader-dev/ringleader/election"
)

// A run across several engines (docs/engines.md). The engines must be in
// one swarm; the run's network is then an attachable overlay made on the
// first engine (a manager), and every node stays a plain container with
// its fixed name, alias and address, on the engine its placement names.
// Whatever is done to a node — its faults' signals, its netfilter and
// delay helpers (which join its namespace), its log stream — is done on
// that engine. Each engine gets the run's reaper, and Close sweeps each.

// WithEngines spreads the run's nodes over es, in order (--engines):
// round-robin, or as the cluster's placement says. The first must be the
// engine this process is pinned to (engine.Connect's; the CLI pins it).
// With fewer than two it changes nothing.
func WithEngines(es []engine.Engine) Option { return func(c *config) { c.engines = es } }

// remote is an engine of the run beyond the first.
type remote struct {
	e      engine.Engine
	cli    *testcontainers.DockerClient
	reaper *watcher
}

// multi reports whether the run spans several engines.
func (b *Backend) multi() bool { return len(b.cfg.engines) > 1 }

// cliOfLocked is the client of the engine that holds n (the first for
// nil); b.mu must be held.
func (b *Backend) cliOfLocked(n *node) *testcontainers.DockerClient {
	if n != nil && n.eng > 0 && n.eng <= len(b.others) {
		return b.others[n.eng-1].cli
	}
	return b.cli
}

// cliOf is cliOfLocked taking the lock.
func (b *Backend) cliOf(n *node) *testcontainers.DockerClient {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cliOfLocked(n)
}

// cliOfHelperLocked is the client of the engine a helper container runs
// on; b.mu must be held.
func (b *Backend) cliOfHelperLocked(id string) *testcontainers.DockerClient {
	if e := b.helpers[id]; e > 0 && e <= len(b.others) {
		return b.others[e-1].cli
	}
	return b.cli
}

// engineHost is the address of engine i of the run.
func (b *Backend) engineHost(i int) string {
	if i > 0 && i <= len(b.others) {
		return b.others[i-1].e.Host
	}
	if b.cli != nil {
		return b.cli.DaemonHost()
	}
	return ""
}

// connectEngines, for a run across several engines, checks that the
// first is cli's, dials the others, checks that they share one swarm and
// fixes the placement; it never changes a swarm.
func (b *Backend) connectEngines(ctx context.Context, cli *testcontainers.DockerClient, spec chaos.ClusterSpec) error {
	es := b.cfg.engines
	if len(es) < 2 {
		if spec.Placement != nil {
			return fmt.Errorf("docker: run %s: the cluster's placement names %d engines, and the run has one; name them with --engines", b.run, len(spec.Placement))
		}
		return nil
	}
	if spec.System != nil {
		return fmt.Errorf("docker: run %s: a system's cluster (%s) runs on one engine; drop --engines", b.run, spec.System.Name)
	}
	if got := cli.DaemonHost(); got != es[0].Host {
		return fmt.Errorf("docker: run %s: the first of the engines is %s, but this process uses %s (pin it: DOCKER_HOST=%s)", b.run, es[0], got, es[0].Host)
	}
	placement, err := spreadPlacement(spec.Members, spec.Placement, len(es))
	if err != nil {
		return fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	if err := engine.SameSwarm(ctx, es); err != nil {
		return fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	others, err := dialEngines(ctx, cli, es)
	if err != nil {
		return fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	clis := []client.APIClient{cli}
	for _, r := range others {
		clis = append(clis, r.cli)
	}
	if err := checkSpread(ctx, clis, es, placement); err != nil {
		for _, r := range others {
			r.cli.Close()
		}
		return err
	}
	b.mu.Lock()
	b.others = others
	b.world.Placement = placement
	b.mu.Unlock()
	b.logf("run %s: %d engines, placement %s", b.run, len(es), placement)
	return nil
}

// spreadPlacement is where the members go over n engines: the cluster's own
// placement, checked, or round-robin when it gives none.
func spreadPlacement(members []election.NodeID, p chaos.Placement, n int) (chaos.Placement, error) {
	if p == nil {
		p = chaos.RoundRobin(members, n)
	}
	if err := p.Validate(members, n); err != nil {
		return nil, err
	}
	return p, nil
}

// dialEngines checks that es[0] is cli's engine and dials the others;
// the first that cannot be dialled is the error (never skipped).
func dialEngines(ctx context.Context, cli *testcontainers.DockerClient, es []engine.Engine) ([]*remote, error) {
	if got := cli.DaemonHost(); got != es[0].Host {
		return nil, fmt.Errorf("the first of the engines is %s, but this process uses %s (pin it: DOCKER_HOST=%s)", es[0], got, es[0].Host)
	}
	var others []*remote
	for _, e := range es[1:] {
		c, err := testcontainers.NewDockerClientWithOpts(ctx, e.Options()...)
		if err == nil && c.DaemonHost() != e.Host {
			err = fmt.Errorf("the client dialled %s instead", c.DaemonHost())
			c.Close()
		}
		if err != nil {
			for _, r := range others {
				r.cli.Close()
			}
			return nil, fmt.Errorf("docker: engine %s: %w", e, err)
		}
		others = append(others, &remote{e: e, cli: c})
	}
	return others, nil
}

// dialOthers, for an Attach across several engines, dials every engine
// beyond cli's (the first).
func (b *Backend) dialOthers(ctx context.Context, cli *testcontainers.DockerClient) error {
	if !b.multi() {
		return nil
	}
	others, err := dialEngines(ctx, cli, b.cfg.engines)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.others = others
	b.mu.Unlock()
	return nil
}

// engineClients are the clients of the run's engines, in order: the
// first's alone on one engine.
func (b *Backend) engineClients() []client.APIClient {
	b.mu.Lock()
	defer b.mu.Unlock()
	clis := []client.APIClient{b.cli}
	for _, r := range b.others {
		clis = append(clis, r.cli)
	}
	return clis
}

// Placement is which engine holds each node, by engine address (nil on
// one engine): what results and reports say of a run across engines.
func (b *Backend) Placement() ([]string, chaos.Placement) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.world.Placement) == 0 {
		return nil, nil
	}
	hosts := make([]string, len(b.world.Placement))
	for i := range hosts {
		hosts[i] = b.engineHost(i)
	}
	return hosts, b.world.Placement
}

// engineOf is the engine index the placement gives id (0 on one engine).
func (b *Backend) engineOf(id election.NodeID) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, _ := b.world.Placement.Engine(id)
	return e
}

// copyImages makes every image the run uses present on every other
// engine, loading it from the first (save and load: nothing is pulled)
// unless that engine holds the same image ID already.
func (b *Backend) copyImages(ctx context.Context, images ...string) error {
	src := b.cfg.engines[0]
	for _, r := range b.others {
		for _, img := range images {
			want, err := b.cli.ImageInspect(ctx, img)
			if err != nil {
				return fmt.Errorf("docker: image %s: %w", img, err)
			}
			if got, err := r.cli.ImageInspect(ctx, img); err == nil && got.ID == want.ID {
				continue
			}
			t0 := time.Now()
			if err := engine.CopyImage(ctx, src, r.e, img); err != nil {
				return fmt.Errorf("docker: run %s: %w", b.run, err)
			}
			b.logf("image %s (%s) loaded into %s in %v", img, shortID(want.ID), r.e.Host, time.Since(t0).Round(time.Millisecond))
		}
	}
	return nil
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// firstOverlayHost is the host number of the first member's address on
// an overlay. Below it, in the network's IP range, the swarm takes what it
// allocates itself: every engine that joins the network gets a
// load-balancer endpoint when its first container attaches, and a
// member's fixed address taken that way fails the member's attach
// ("attaching to network failed … context deadline exceeded", seen with
// members from .2 and the whole subnet dynamic).
const firstOverlayHost = 32

// createOverlay makes the run's network an attachable overlay on the
// first engine (a swarm manager), with a subnet the swarm chose for a
// throwaway one spelt out, as createNetwork does for a bridge: only a
// network with a configured subnet takes fixed addresses.
func (b *Backend) createOverlay(ctx context.Context, members []election.NodeID) (*testcontainers.DockerNetwork, map[election.NodeID]netip.Addr, error) {
	name := fmt.Sprintf("rl-%s-overlay", b.run)
	// Internal: the nodes need no way out, and a container on a
	// non-internal overlay gets a second endpoint, on docker_gwbridge,
	// for one: a veth more per node, and endpoints the engine was seen
	// to keep counting after a 64-node run under heavy load (which then
	// barred the rig's removal of the bridge).
	opts := client.NetworkCreateOptions{Driver: "overlay", Attachable: true, Internal: true, Labels: labels(b.run, RoleNetwork)}
	probe, err := b.cli.NetworkCreate(ctx, name+"-probe", opts)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: create overlay network: %w", b.run, err)
	}
	// The swarm's allocator gives the subnet a moment after the create.
	var cfg []network.IPAMConfig
	for i := 0; i < 50 && len(cfg) == 0 && err == nil; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		var res client.NetworkInspectResult
		res, err = b.cli.NetworkInspect(ctx, probe.ID, client.NetworkInspectOptions{})
		cfg = res.Network.IPAM.Config
	}
	_, _ = b.cli.NetworkRemove(ctx, probe.ID, client.NetworkRemoveOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: inspect overlay network: %w", b.run, err)
	}
	subnet, gateway, err := ipv4Subnet(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	addrs, err := memberAddrs(subnet, members, firstOverlayHost)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	// What the swarm allocates itself comes from below the members.
	dyn := netip.PrefixFrom(subnet.Addr(), 27)
	opts.IPAM = &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet, IPRange: dyn, Gateway: gateway}}}
	nw, err := b.cli.NetworkCreate(ctx, name, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: create overlay network on %s: %w", b.run, subnet, err)
	}
	b.logf("run %s: overlay network %s on %s", b.run, name, subnet)
	return &testcontainers.DockerNetwork{ID: nw.ID, Name: name, Driver: "overlay"}, addrs, nil
}

// startPlacedNode starts node id on the engine its placement names, with
// the engine client itself (testcontainers knows one engine per
// process): the same name, environment, labels, alias, address, volume
// and confinement as startNode gives a node on one engine.
func (b *Backend) startPlacedNode(ctx, followCtx context.Context, nw *testcontainers.DockerNetwork, addrs map[election.NodeID]netip.Addr, id election.NodeID) error {
	eng := b.engineOf(id)
	b.mu.Lock()
	cli := b.cliOfLocked(&node{eng: eng})
	b.mu.Unlock()
	name := b.containerName(id)
	t0 := time.Now()
	var env []string
	for k, v := range nodeEnv(b.spec, b.programLine, b.secret, addrs, id) {
		env = append(env, k+"="+v)
	}
	hc := &container.HostConfig{ReadonlyRootfs: true, Mounts: []mount.Mount{b.runVolume(name+"-state", stateDir)}}
	hardenNode(hc)
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:       name,
		Config:     &container.Config{Image: b.nodeImage, Env: env, Labels: labels(b.run, RoleNode)},
		HostConfig: hc,
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			nw.Name: {Aliases: []string{alias(id)}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: addrs[id]}},
		}},
	})
	if err != nil {
		return fmt.Errorf("docker: run %s: create node %d (%s) on %s: %w", b.run, id, name, b.engineHost(eng), err)
	}
	n := newNode(id, name, created.ID, nil)
	n.eng, n.owned = eng, true
	_, err = cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{})
	b.adoptNode(n, err == nil, func(n *node) { go b.follow(followCtx, n) })
	if err != nil {
		return fmt.Errorf("docker: run %s: start node %d (%s) on %s: %w", b.run, id, name, b.engineHost(eng), err)
	}
	b.logf("node %d: container %s started on %s in %v", id, name, b.engineHost(eng), time.Since(t0).Round(time.Millisecond))
	return nil
}

// awaitOverlayPeers waits, for up to d, until every engine that holds a
// node lists every such engine among the overlay's peers: the engines
// that joined the network's gossip, which carries each endpoint's
// address to the others. An engine not yet among a peer's is one whose
// nodes the peer's kernel cannot reach yet (its messages to them go
// nowhere), so a run across engines counts its nodes up only after this
// holds. Measured on the rig it holds within half a second of the last
// node's start; the error names what each engine lists when it does not.
func (b *Backend) awaitOverlayPeers(ctx context.Context, d time.Duration) error {
	b.mu.Lock()
	netName := b.netName
	want := 0
	for _, g := range b.world.Placement {
		if len(g) > 0 {
			want++
		}
	}
	var clis []*testcontainers.DockerClient
	for i, g := range b.world.Placement {
		if len(g) > 0 {
			clis = append(clis, b.cliOfLocked(&node{eng: i}))
		}
	}
	b.mu.Unlock()
	t0 := time.Now()
	deadline := t0.Add(d)
	for {
		var seen []string
		all := true
		for _, cli := range clis {
			res, err := cli.NetworkInspect(ctx, netName, client.NetworkInspectOptions{})
			n := len(res.Network.Peers)
			all = all && err == nil && n >= want
			if err != nil {
				seen = append(seen, fmt.Sprintf("%s: %v", cli.DaemonHost(), err))
			} else {
				seen = append(seen, fmt.Sprintf("%s lists %d", cli.DaemonHost(), n))
			}
		}
		if all {
			b.logf("run %s: every engine among the overlay's peers after %v", b.run, time.Since(t0).Round(time.Millisecond))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("docker: run %s: the overlay %s has not reached every engine within %v: of %d engines, %s (the engines' gossip, TCP and UDP 7946, and VXLAN, UDP 4789, must pass between them; docs/engines.md)", b.run, netName, d, want, strings.Join(seen, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// removeNode removes the container of a node started by
// startPlacedNode (testcontainers removes the others), with its
// anonymous volumes; the run volume goes with the run's sweep.
func (b *Backend) removeNode(ctx context.Context, n *node) error {
	_, err := b.cliOf(n).ContainerRemove(ctx, n.cid, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	return err
}

// startOtherReapers starts the run's reaper on every other engine, as
// on the first: each sweeps its own engine when this process goes.
func (b *Backend) startOtherReapers(ctx context.Context) error {
	for _, r := range b.others {
		if err := b.startReaper(ctx, r.cli.Client, &r.reaper); err != nil {
			return err
		}
	}
	return nil
}

// closeOthers sweeps the run from every other engine, stops its reapers
// and names what is left there; the clients are closed after.
func (b *Backend) closeOthers(ctx context.Context, run string) []error {
	var errs []error
	for _, r := range b.others {
		waitOverlayGone(ctx, r.cli, run)
		rm, err := reaper.Sweep{Run: run, KeepReapers: true}.Do(ctx, r.cli)
		if err != nil {
			errs = append(errs, fmt.Errorf("engine %s: %w", r.e.Host, err))
		}
		if l := rm.Lines(); len(l) > 0 {
			b.logf("run %s: also removed on %s: %s", run, r.e.Host, strings.Join(l, ", "))
		}
		if _, err := b.stopReaper(ctx, r.cli, &r.reaper); err != nil {
			errs = append(errs, fmt.Errorf("engine %s: %w", r.e.Host, err))
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		left, err := reaper.Left(lctx, r.cli, run)
		cancel()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("engine %s: cannot tell what is left: %w", r.e.Host, err))
		case len(left) > 0:
			errs = append(errs, fmt.Errorf("engine %s: still there: %s (`ringleader clean --engines ... --run %s` removes them)", r.e.Host, strings.Join(left, ", "), run))
		}
		r.cli.Close()
	}
	return errs
}

// removeOverlay removes the run's overlay from the first engine once the
// last endpoint on any engine is gone, which the swarm learns a moment
// after the containers go: it retries for a few seconds.
func (b *Backend) removeOverlay(ctx context.Context, netID string) error {
	var err error
	for i := 0; i < 20; i++ {
		_, err = b.cli.NetworkRemove(ctx, netID, client.NetworkRemoveOptions{})
		if err == nil || isNotFound(err) || reaper.NetworkUnlisted(ctx, b.cli, netID) {
			// A refused removal may still have gone through (the
			// swarm removes the network a moment later), and the
			// next one is then told "not found" with a status
			// that does not say so.
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return err
}

// uniq is its arguments without repeats, in order.
func uniq(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// waitOverlayGone waits, for up to five seconds, until a worker engine no
// longer lists the run's overlay: it shows a swarm network while it has
// endpoints, and a moment after the manager removed it, and a worker
// cannot remove one itself ("This node is not a swarm manager"), so a
// sweep that found it there would fail.
func waitOverlayGone(ctx context.Context, cli client.APIClient, run string) {
	for i := 0; i < 50; i++ {
		ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: reaper.Filter(run).Add("driver", "overlay")})
		if err != nil || len(ns.Items) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
