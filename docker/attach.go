package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/docker/rules"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// ComposeRun is the run label of the compose cluster (docker-compose.yml).
const ComposeRun = "compose"

var _ chaos.Attacher = (*Backend)(nil)

// Attach adopts a cluster that is already running — the compose cluster
// (run label ComposeRun) or a harness run, by its run label — instead of
// starting one. It finds the run's node containers and network by label,
// reads the cluster's shape from the nodes' own environment, reads back the
// faults in force (paused containers, every namespace's netfilter rules,
// running delay helpers), and reads every node's log from its start, so
// that views are known at once. The history (sink, when not nil) starts at
// the moment of attaching: one view record per running node saying what
// it views then, and after that everything as it happens, as after Start.
//
// Faults then work as after Start. Close detaches: it stops following and
// removes only the short-lived helpers it ran; the cluster, and any fault
// it put in force, stays (`make down` or `ringleader clean --run` remove
// them).
func (b *Backend) Attach(ctx context.Context, run string, sink history.Sink) (chaos.ClusterSpec, error) {
	ctx, done, ok := b.begin(ctx)
	defer done()
	if !ok {
		return chaos.ClusterSpec{}, fmt.Errorf("docker: backend closed before Attach")
	}
	b.mu.Lock()
	if b.started {
		b.mu.Unlock()
		return chaos.ClusterSpec{}, fmt.Errorf("docker: backend already holds run %s; use a new Backend", b.run)
	}
	b.takeRunLocked(run, sink)
	// Nothing is recorded while the logs are read back: the snapshot
	// below stands for all of it.
	b.attached, b.replaying = true, true
	followCtx := b.life
	b.mu.Unlock()

	cli, err := newClient(ctx)
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	b.mu.Lock()
	b.cli = cli
	b.mu.Unlock()
	if err := b.dialOthers(ctx, cli); err != nil {
		return chaos.ClusterSpec{}, fmt.Errorf("docker: attach %s: %w", run, err)
	}

	spec, err := b.adoptNodes(ctx, run)
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	if err := b.adoptNetwork(ctx, run); err != nil {
		return chaos.ClusterSpec{}, err
	}
	if err := b.refreshIPs(ctx); err != nil {
		return chaos.ClusterSpec{}, err
	}
	if err := b.adoptRules(ctx); err != nil {
		return chaos.ClusterSpec{}, err
	}
	if err := b.adoptDelays(ctx, run); err != nil {
		return chaos.ClusterSpec{}, err
	}
	if spec.System != nil {
		return b.attachSystem(ctx, followCtx, spec) // probed, not read from logs
	}
	// Read every log to its end first, so that the views are the ones
	// the nodes hold now before any fault is resolved against them; the
	// followers then go on from there.
	if err := b.eachNode(ctx, spec.Members, func(n *node) error {
		if err := b.readLogsFollow(ctx, n, false); err != nil {
			return fmt.Errorf("docker: attach %s: read node %d's log: %w", run, n.id, err)
		}
		return nil
	}); err != nil {
		return chaos.ClusterSpec{}, err
	}
	b.adoptControl()
	b.snapshot()
	for _, n := range b.nodes {
		b.followers.Add(1)
		go b.follow(followCtx, n)
	}
	// Every running node has logged its boot: its view is what its log
	// says last (a node still electing may have none yet).
	caught, err := b.waitFor(ctx, b.cfg.bootTimeout, func() bool {
		for _, n := range b.nodes {
			if b.world.Up[n.id] && len(n.rec.Boots) == 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	if !caught {
		return chaos.ClusterSpec{}, fmt.Errorf("docker: attach %s: no boot line in the logs of nodes %s within %v", run, b.notBooted(), b.cfg.bootTimeout)
	}
	return spec, nil
}

// adoptNodes finds the run's node containers, on every engine of the
// backend, and the cluster they form; across engines, each node's engine
// is where its container was found, and the world's placement says so.
func (b *Backend) adoptNodes(ctx context.Context, run string) (chaos.ClusterSpec, error) {
	spec, found, err := findNodes(ctx, b.engineClients(), run, b.cfg.bootTimeout)
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range found {
		if !b.cfg.imageSet && f.image != "" {
			// Helpers run from the nodes' own image: it holds the
			// netfilter command of the same build.
			b.cfg.image = f.image
		}
		n := newNode(f.id, f.name, f.cid, nil)
		n.eng = f.eng
		b.nodes[f.id] = n
	}
	if b.multi() {
		b.world.Placement = placementOf(found, len(b.cfg.engines))
		b.logf("attach %s: %d engines, placement %s", run, len(b.cfg.engines), b.world.Placement)
	}
	// The world starts with every node down and nothing in force; what
	// the engine says of each process is applied to it.
	b.spec = spec
	for _, f := range found {
		b.adoptProcessLocked(f.id, f.running, f.paused)
	}
	return spec, nil
}

// placementOf groups the nodes found by the engine that holds them, one
// group per engine (in ID order; empty for an engine that holds none).
func placementOf(found []foundNode, engines int) chaos.Placement {
	p := make(chaos.Placement, engines)
	for _, f := range found {
		p[f.eng] = append(p[f.eng], f.id)
	}
	for _, g := range p {
		slices.Sort(g)
	}
	return p
}

// foundNode is one node container of a running cluster, on engine eng
// (an index into the engines searched), read through cli.
type foundNode struct {
	id              election.NodeID
	name, cid       string
	image           string
	running, paused bool
	eng             int
	cli             client.APIClient
}

// Describe reads the shape of the running cluster labelled run — the
// compose cluster (ComposeRun) or a harness run — from its nodes, as
// Attach does, without attaching: nothing is followed and nothing is
// recorded. For a cluster of programs, Algorithm is the name the
// program is registered under in this process, from what its nodes said
// of it at boot (program.RegisterHosted), and Program the command line
// the nodes run; it waits up to a minute for a node to have said it.
// With more than one engine in es (--engines; the first the process's
// own), the nodes are looked for on each, as Attach does WithEngines.
func Describe(ctx context.Context, run string, es []engine.Engine) (chaos.ClusterSpec, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	defer cli.Close()
	clis := []client.APIClient{cli}
	if len(es) > 1 {
		others, err := dialEngines(ctx, cli, es)
		if err != nil {
			return chaos.ClusterSpec{}, fmt.Errorf("docker: describe %s: %w", run, err)
		}
		for _, r := range others {
			defer r.cli.Close()
			clis = append(clis, r.cli)
		}
	}
	spec, _, err := findNodes(ctx, clis, run, 60*time.Second)
	return spec, err
}

// engineListing is one engine's node containers of a run.
type engineListing struct {
	cli   client.APIClient
	items []container.Summary
}

// findNodes finds the run's node containers on every engine of clis (the
// run's engines in order; one for a cluster on one engine) and reads the
// cluster's shape from their environment (specFromEnv); every container
// must tell the same. A cluster of programs takes its algorithm from what
// its nodes said of the program at boot (hostedProgram), waiting up to
// wait for one to have said it.
func findNodes(ctx context.Context, clis []client.APIClient, run string, wait time.Duration) (chaos.ClusterSpec, []foundNode, error) {
	f := runFilter(run).Add("label", LabelRole+"="+RoleNode)
	var (
		lists []engineListing
		total int
	)
	for _, cli := range clis {
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: list containers on %s: %w", run, cli.DaemonHost(), err)
		}
		lists = append(lists, engineListing{cli: cli, items: cs.Items})
		total += len(cs.Items)
	}
	if total == 0 {
		hint := "start it with `make up`"
		if run != ComposeRun {
			hint = "`docker ps --filter label=" + LabelProject + "=" + Project + " --format '{{.Label \"" + LabelRun + "\"}}'` lists the runs that exist"
		}
		where := ""
		if len(clis) > 1 {
			where = fmt.Sprintf(" on any of the %d engines", len(clis))
		}
		return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: no node container is labelled %s=%s%s: no such cluster is running (%s)", LabelRun, run, where, hint)
	}
	var (
		spec  chaos.ClusterSpec
		found []foundNode
		seen  = map[election.NodeID]string{}
	)
	for eng, l := range lists {
		var err error
		if spec, found, err = readNodes(ctx, l, eng, run, spec, found, seen); err != nil {
			return chaos.ClusterSpec{}, nil, err
		}
	}
	if spec.System != nil {
		if len(clis) > 1 {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: a system's cluster (%s) runs on one engine; drop --engines", run, spec.System.Name)
		}
		// A server's labels name the member, not the membership: the
		// members are the containers found.
		for id := range seen {
			spec.Members = append(spec.Members, id)
		}
		slices.Sort(spec.Members)
	}
	for _, id := range spec.Members {
		if _, ok := seen[id]; !ok {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: node %d is a member but has no container%s", run, id, engineHint(len(clis)))
		}
	}
	if len(spec.Program) > 0 {
		var err error
		if spec.Algorithm, err = hostedProgram(ctx, run, spec, found, wait); err != nil {
			return chaos.ClusterSpec{}, nil, err
		}
	}
	return spec, found, nil
}

// engineHint says, for a member missing on one engine, where else to look.
func engineHint(engines int) string {
	if engines > 1 {
		return fmt.Sprintf(" on any of the %d engines named", engines)
	}
	return " (a cluster across engines: name them all with --engines)"
}

// readNodes reads the node containers one engine listed (engine index
// eng) into found, checking each against the cluster spec read so far.
func readNodes(ctx context.Context, l engineListing, eng int, run string, spec chaos.ClusterSpec, found []foundNode, seen map[election.NodeID]string) (chaos.ClusterSpec, []foundNode, error) {
	cli := l.cli
	for _, c := range l.items {
		res, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: inspect %s: %w", run, c.ID[:12], err)
		}
		ct := res.Container
		name := strings.TrimPrefix(ct.Name, "/")
		image := ct.Config.Image
		var s chaos.ClusterSpec
		var id election.NodeID
		if _, isSystem := ct.Config.Labels[LabelSystem]; isSystem {
			s, id, err = specFromSystemLabels(run, ct.Config.Labels)
			image = "" // a server's image holds no netfilter helper
		} else {
			s, id, err = specFromEnv(envMap(ct.Config.Env))
		}
		if err != nil {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: container %s: %w", run, name, err)
		}
		if spec.Name == "" {
			spec = s
		} else if !sameCluster(s, spec) {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: container %s belongs to another cluster (%s) than the rest (%s)", run, name, clusterText(s), clusterText(spec))
		}
		if other, ok := seen[id]; ok {
			return chaos.ClusterSpec{}, nil, fmt.Errorf("docker: attach %s: two containers claim node %d (%s and %s)", run, id, other, name)
		}
		seen[id] = name
		found = append(found, foundNode{id: id, name: name, cid: ct.ID, image: image,
			running: ct.State != nil && ct.State.Running, paused: ct.State != nil && ct.State.Paused,
			eng: eng, cli: cli})
	}
	return spec, found, nil
}

// sameCluster says whether two nodes' environments describe one cluster.
func sameCluster(a, b chaos.ClusterSpec) bool {
	if (a.System == nil) != (b.System == nil) || (a.System != nil && (a.System.Name != b.System.Name || !maps.Equal(a.SystemOptions, b.SystemOptions))) {
		return false
	}
	return a.Name == b.Name && slices.Equal(a.Members, b.Members) && a.Algorithm == b.Algorithm &&
		slices.Equal(a.Program, b.Program) && a.Quorum == b.Quorum && maps.Equal(a.Options, b.Options)
}

func clusterText(s chaos.ClusterSpec) string {
	what := "algorithm " + s.Algorithm
	if len(s.Program) > 0 {
		what = "program " + strings.Join(s.Program, " ")
	}
	return fmt.Sprintf("%s, members %v, %s, quorum %s", s.Name, s.Members, what, s.Quorum.Text())
}

// specFromEnv reads a cluster's shape from one node's environment, the
// node contract (docs/node.md).
func specFromEnv(env map[string]string) (chaos.ClusterSpec, election.NodeID, error) {
	var s chaos.ClusterSpec
	id, err := strconv.Atoi(env["RINGLEADER_ID"])
	if err != nil || id <= 0 {
		return s, 0, fmt.Errorf("RINGLEADER_ID %q is not a node ID", env["RINGLEADER_ID"])
	}
	for _, p := range strings.Split(env["RINGLEADER_PEERS"], ",") {
		m, _, _ := strings.Cut(strings.TrimSpace(p), "=")
		mid, err := strconv.Atoi(m)
		if err != nil || mid <= 0 {
			return s, 0, fmt.Errorf("RINGLEADER_PEERS %q: %q is not a node ID", env["RINGLEADER_PEERS"], m)
		}
		s.Members = append(s.Members, election.NodeID(mid))
	}
	s.Name = env["RINGLEADER_CLUSTER"]
	if s.Name == "" {
		s.Name = "ringleader"
	}
	if s.Quorum, err = election.ParseQuorum(env["RINGLEADER_QUORUM"]); err != nil {
		return s, 0, fmt.Errorf("RINGLEADER_QUORUM: %w", err)
	}
	if p := strings.Fields(env["RINGLEADER_PROGRAM"]); len(p) > 0 {
		// The node hosts a program and reads no algorithm: its name,
		// claims and message classes are what the node's own probe
		// found (hostedProgram).
		s.Program = p
		if s.Quorum == election.QuorumDefault {
			s.Quorum = election.NoQuorum // the node's default for a program
		}
		if strings.TrimSpace(env["RINGLEADER_OPTIONS"]) != "" {
			return s, 0, fmt.Errorf("RINGLEADER_OPTIONS %q beside RINGLEADER_PROGRAM: a program takes no options (its node refuses to start)", env["RINGLEADER_OPTIONS"])
		}
		s.Options = election.Options{}
		return s, election.NodeID(id), timingFromEnv(&s, env)
	}
	s.Algorithm = env["RINGLEADER_ALGORITHM"]
	if s.Algorithm == "" {
		s.Algorithm = "bully"
	}
	if s.Options, err = election.ParseOptions(env["RINGLEADER_OPTIONS"]); err != nil {
		return s, 0, fmt.Errorf("RINGLEADER_OPTIONS: %w", err)
	}
	// What the node runs: its algorithm's defaults where the environment
	// left a setting out, as the node itself resolves them.
	if a, lerr := election.Lookup(s.Algorithm); lerr == nil {
		if s.Quorum, s.Options, err = a.Resolve(s.Quorum, s.Options); err != nil {
			return s, 0, fmt.Errorf("RINGLEADER_QUORUM, RINGLEADER_OPTIONS: %w", err)
		}
	}
	return s, election.NodeID(id), timingFromEnv(&s, env)
}

// timingFromEnv reads the node's timeouts, the node's defaults where unset.
func timingFromEnv(s *chaos.ClusterSpec, env map[string]string) error {
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"RINGLEADER_HEARTBEAT", &s.Timing.Heartbeat}, {"RINGLEADER_SUSPICION", &s.Timing.Suspicion}, {"RINGLEADER_ANSWER", &s.Timing.Answer}} {
		if v := env[d.name]; v != "" {
			var err error
			if *d.dst, err = time.ParseDuration(v); err != nil {
				return fmt.Errorf("%s: %w", d.name, err)
			}
		}
	}
	s.Timing = s.Timing.WithDefaults()
	return nil
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// adoptNetwork finds the run's network: the one labelled with the run.
func (b *Backend) adoptNetwork(ctx context.Context, run string) error {
	ns, err := b.cli.NetworkList(ctx, client.NetworkListOptions{Filters: runFilter(run).Add("label", LabelRole+"="+RoleNetwork)})
	if err != nil {
		return fmt.Errorf("docker: attach %s: list networks: %w", run, err)
	}
	if len(ns.Items) != 1 {
		return fmt.Errorf("docker: attach %s: want one network labelled %s=%s, found %d", run, LabelRun, run, len(ns.Items))
	}
	b.mu.Lock()
	b.netID, b.netName = ns.Items[0].ID, ns.Items[0].Name
	b.mu.Unlock()
	return nil
}

// adoptRules reads back every running node's netfilter rules and applies
// the faults they carry out (rules.Faults) to the world.
func (b *Backend) adoptRules(ctx context.Context) error {
	var running []*node
	b.mu.Lock()
	for id, n := range b.nodes {
		if b.world.Up[id] {
			running = append(running, n)
		}
	}
	b.mu.Unlock()
	held := map[election.NodeID]netfilter.Rules{}
	var errs []error
	for _, n := range running {
		r, err := b.readRules(ctx, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("read node %d's rules: %w", n.id, err))
			continue
		}
		held[n.id] = r
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, r := range held {
		if !r.Empty() {
			b.applied[id] = r
		}
	}
	for _, f := range rules.Faults(b.spec.Members, b.addrsLocked(), held) {
		b.world.Apply(f, b.spec.Members)
	}
	return errors.Join(errs...)
}

// adoptDelays finds the run's running delay helpers — their command says
// the delay, their network mode whose namespace they serve — and applies
// each delay to the world.
func (b *Backend) adoptDelays(ctx context.Context, run string) error {
	byCID := map[string]election.NodeID{}
	b.mu.Lock()
	for id, n := range b.nodes {
		byCID[n.cid] = id
	}
	b.mu.Unlock()
	for eng, cli := range b.engineClients() {
		if err := b.adoptDelaysOn(ctx, cli, eng, run, byCID); err != nil {
			return err
		}
	}
	return nil
}

// adoptDelaysOn adopts the delay helpers running on engine eng (a delay
// helper joins its node's namespace, so it runs on the node's engine).
func (b *Backend) adoptDelaysOn(ctx context.Context, cli client.APIClient, eng int, run string, byCID map[string]election.NodeID) error {
	f := runFilter(run).Add("label", LabelRole+"="+RoleNetfilter)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("docker: attach %s: list helpers on %s: %w", run, cli.DaemonHost(), err)
	}
	for _, c := range cs.Items {
		res, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil || res.Container.HostConfig == nil || res.Container.Config == nil {
			continue
		}
		id, ok := byCID[strings.TrimPrefix(string(res.Container.HostConfig.NetworkMode), "container:")]
		if !ok {
			continue
		}
		lat, ok := parseDelayArgs(res.Container.Config.Cmd)
		if !ok {
			continue
		}
		b.mu.Lock()
		b.delays[id] = delayHelper{cid: c.ID, latency: lat}
		b.helpers[c.ID] = eng // where it is removed when the delay is healed
		b.world.Apply(chaos.Fault{Op: chaos.Delay, Nodes: []election.NodeID{id}, Params: chaos.ParamsOf(chaos.DelayMS.OfDur(lat.Delay), chaos.DelayJitter.OfDur(lat.Jitter))}, b.spec.Members)
		b.mu.Unlock()
	}
	return nil
}

// parseDelayArgs reads `netfilter delay --delay D --jitter J ...`, the
// command startDelay gives a delay helper.
func parseDelayArgs(cmd []string) (latency, bool) {
	if len(cmd) > 0 && cmd[0] == "netfilter" {
		cmd = cmd[1:]
	}
	if len(cmd) == 0 || cmd[0] != "delay" {
		return latency{}, false
	}
	var d latency
	for i := 1; i+1 < len(cmd); i++ {
		var dst *time.Duration
		switch cmd[i] {
		case "--delay":
			dst = &d.Delay
		case "--jitter":
			dst = &d.Jitter
		default:
			continue
		}
		v, err := time.ParseDuration(cmd[i+1])
		if err != nil {
			return latency{}, false
		}
		*dst = v
		i++
	}
	return d, true
}

// detach ends an attached backend: the followers stop and the short-lived
// helpers it ran are removed; the nodes, their network and the delay
// helpers that hold a delay in force stay.
func (b *Backend) detach(ctx context.Context) error {
	b.followers.Wait()
	b.mu.Lock()
	keep := map[string]bool{}
	for _, h := range b.delays {
		keep[h.cid] = true
	}
	type helper struct {
		id  string
		cli *testcontainers.DockerClient
	}
	var gone []helper
	for id := range b.helpers {
		if !keep[id] {
			gone = append(gone, helper{id, b.cliOfHelperLocked(id)})
		}
	}
	others := b.others
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	for _, h := range gone {
		if h.cli == nil {
			continue
		}
		if _, err := h.cli.ContainerRemove(ctx, h.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	for _, r := range others {
		r.cli.Close()
	}
	return errors.Join(errs...)
}

// snapshot starts the history of an attached cluster: at this instant,
// the faults in force as found (nodes down or paused, cuts, loss, delay,
// clocks: chaos.State.InForce, each an invoke and an ok noted
// chaos.InForceNote, so that a replay starts from the world as it is and
// no failover is measured from them), then one view record per running
// node with the view its log shows last (carrying that line's boot and
// seq, so the records that follow continue its sequence); from now on
// every line is recorded.
func (b *Backend) snapshot() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	for _, f := range b.world.InForce(b.spec.Members) {
		b.appendRecordLocked(f.Record(now, "", history.FaultInvoke, "", nil))
		b.appendRecordLocked(f.Record(now, "", history.FaultOK, chaos.InForceNote, nil))
	}
	for _, id := range b.spec.Members {
		n := b.nodes[id]
		v, ok := b.world.Views[id]
		if n == nil || !b.world.Up[id] || !ok || len(n.rec.Boots) == 0 {
			continue
		}
		boot := n.rec.LastBoot()
		b.appendRecordLocked(history.Record{Time: now, Process: "node", Kind: history.KindView, Node: id, Boot: boot, Seq: n.rec.LastSeq(boot), View: &v})
	}
	b.replaying, b.recordFrom = false, now
}
