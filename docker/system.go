package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/docker/rules"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/system"
)

// A system's members (docs/systems.md) are containers like the election
// nodes: the same network with fixed addresses, names, labels, reaper,
// kill, stop, restart and pause, and the same nftables rules for cuts,
// loss and delay. What differs is how the harness learns what a member
// believes: a server writes no history lines, so the harness asks each
// member its probe every interval, from the host, and records a view when
// the answer changes. The rules name only members' addresses, so the
// probes (from the network's gateway, the host) pass every cut, loss and
// delay between members. A member that does not answer is unknown (no
// view in the world model; the history keeps the last view it gave and a
// mark), never leaderless.

// LabelSystem names, on a system member's container, the system it runs.
const LabelSystem = "org.ringleader.system"

// probeState is what the harness knows of one member's answers.
type probeState struct {
	answered bool            // this start has answered once
	view     *election.View  // the last view recorded (this start)
	seq      uint64          // view records of this start
	boot     string          // this start's boot ID in the history
	failing  string          // why the probes fail now; empty: they answer
	since    time.Time       // when they began failing
	checked  time.Time       // when the engine was last asked after a failure
	stats    system.Counters // for the results
}

// Keep makes Close leave the cluster running, as it leaves an attached
// one (`ringleader up`): the followers stop, the short-lived helpers go,
// the members, their network and volumes stay.
func (b *Backend) Keep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attached = true
}

// SystemStats are the probes' counts for a run's results (nil: not a
// system run).
func (b *Backend) SystemStats() *system.Counters {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spec.System == nil {
		return nil
	}
	var c system.Counters
	for _, n := range b.nodes {
		if n.probe != nil {
			c.Add(n.probe.stats)
		}
	}
	return &c
}

// startSystemMember starts member id's server container.
func (b *Backend) startSystemMember(ctx, followCtx context.Context, nw *testcontainers.DockerNetwork, addrs map[election.NodeID]netip.Addr, id election.NodeID) error {
	sys := b.spec.System
	name := b.containerName(id)
	var all []system.Member
	for _, m := range b.spec.Members {
		all = append(all, system.Member{ID: m, Name: alias(m), Addr: addrs[m].String()})
	}
	self := system.Member{ID: id, Name: alias(id), Addr: addrs[id].String()}
	argv := sys.CommandLine(self, all, b.run, b.spec.SystemOptions)
	env := map[string]string{}
	for _, kv := range sys.Environment(self, all, b.run) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	lbl := labels(b.run, RoleNode)
	for k, v := range systemLabels(sys, id, b.spec.SystemOptions) {
		lbl[k] = v
	}
	t0 := time.Now()
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:    sys.Image,
			Name:     name,
			Env:      env,
			Labels:   lbl,
			Networks: []string{nw.Name},
			NetworkAliases: map[string][]string{
				nw.Name: {alias(id)},
			},
			ConfigModifier: func(c *container.Config) {
				if len(argv) > 0 {
					c.Entrypoint, c.Cmd = argv[:1], argv[1:]
				}
				c.User = sys.User
			},
			EndpointSettingsModifier: func(eps map[string]*network.EndpointSettings) {
				if ep := eps[nw.Name]; ep != nil {
					ep.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: addrs[id]}
				}
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.ReadonlyRootfs = true
				hardenNode(hc)
				hc.Memory = int64(sys.MemoryMiB) << 20
				if sys.DataDir != "" {
					// The member's state, kept across kill and restart.
					hc.Mounts = append(hc.Mounts, b.runVolume(name+"-data", sys.DataDir))
				}
			},
		},
		Started: true,
	}
	c, err := testcontainers.GenericContainer(ctx, req)
	b.adopt(c, err == nil, id, name,
		func(n *node) { n.probe, n.ip = &probeState{}, addrs[id].String() },
		func(n *node) { go b.probeMember(followCtx, n) })
	if err != nil {
		return fmt.Errorf("docker: run %s: start member %d of %s (%s): %w", b.run, id, sys.Name, name, err)
	}
	b.logf("member %d: %s container %s started in %v", id, sys.Name, name, time.Since(t0).Round(time.Millisecond))
	return nil
}

// probeMember asks member n who leads, every interval, for the life of
// the run.
func (b *Backend) probeMember(ctx context.Context, n *node) {
	defer b.followers.Done()
	sys := b.spec.System
	interval := time.Duration(sys.Probe.Interval)
	hc, tr := sys.Probe.Client()
	defer tr.CloseIdleConnections()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.started:
			// A restart. The prober saw the member down before it
			// (a kill or stop returns once the process is gone), and
			// forgot the old process then.
			tr.CloseIdleConnections()
			continue
		case <-tick.C:
		}
		b.mu.Lock()
		up, paused, ip := b.world.Up[n.id], b.world.Paused[n.id], n.ip
		if !up {
			b.newStartLocked(n) // whatever comes next is a new process
		}
		b.mu.Unlock()
		if !up || paused || ip == "" {
			// Down or frozen: the engine says so, and the world
			// holds it; a frozen server would only time out.
			continue
		}
		body, err := sys.Probe.Ask(ctx, hc, ip)
		if ctx.Err() != nil {
			return
		}
		b.answered(ctx, n, body, err)
	}
}

// newStartLocked forgets what the member's last process said.
func (b *Backend) newStartLocked(n *node) {
	p := n.probe
	p.answered, p.view, p.seq, p.failing = false, nil, 0, ""
}

// answered takes one probe's outcome for member n.
func (b *Backend) answered(ctx context.Context, n *node, body []byte, err error) {
	sys := b.spec.System
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	p := n.probe
	p.stats.Probes++
	if !b.world.Up[n.id] || b.world.Paused[n.id] {
		return // a fault on the member landed meanwhile; the world holds it
	}
	if err != nil {
		p.stats.Unanswered++
		b.unknownLocked(ctx, n, now, err.Error())
		return
	}
	a, rerr := sys.Probe.Read(body)
	var v election.View
	if rerr == nil {
		rerr = b.claimLocked(n, a.ID)
	}
	if rerr == nil {
		v, rerr = sys.Probe.View(a, n.id, b.sysIDs)
	}
	if errors.Is(rerr, system.ErrUnmapped) && len(b.sysIDs) < len(b.spec.Members) {
		// The leader has not answered once yet: unknown for now.
		p.stats.Unmapped++
		b.unknownLocked(ctx, n, now, "leader not yet known")
		return
	}
	if rerr != nil {
		// Refused: counted, logged in bounded form, never adopted.
		p.stats.Refused++
		if p.stats.Refused <= 5 || p.stats.Refused%100 == 0 {
			b.logf("member %d: probe answer refused (%d so far): %v", n.id, p.stats.Refused, rerr)
			b.recordLocked(history.Record{Time: now, Process: "harness", Kind: history.KindMark, Node: n.id,
				Note: fmt.Sprintf("node %d: probe answer refused (%d so far): %s", n.id, p.stats.Refused, clipNote(rerr.Error()))})
		}
		b.unknownLocked(ctx, n, now, "refused answer")
		return
	}
	p.stats.Answers++
	if !p.answered {
		p.failing = ""
	}
	if p.failing != "" && p.answered {
		b.recordLocked(history.Record{Time: now, Process: "harness", Kind: history.KindMark, Node: n.id,
			Note: fmt.Sprintf("node %d answers its probe again after %v unknown", n.id, now.Sub(p.since).Round(time.Millisecond))})
		p.failing = ""
	}
	if !p.answered {
		// The first answer of a process is its boot.
		p.answered = true
		p.boot = fmt.Sprintf("%s-%d", n.cid[:min(12, len(n.cid))], len(n.rec.Boots)+1)
		n.rec.Boots = append(n.rec.Boots, p.boot)
		delete(b.world.Views, n.id)
		b.recordLocked(history.Record{Time: now, Process: "node", Kind: history.KindBoot, Node: n.id, Boot: p.boot, Seq: 1})
		p.seq = 1
	}
	if b.world.Views == nil {
		b.world.Views = map[election.NodeID]election.View{}
	}
	b.world.Views[n.id] = v
	if p.view == nil || *p.view != v {
		// The record's time is the answer's arrival: the member
		// held the view by then, and since at most one interval and
		// a round trip earlier (the resolution the results state).
		p.seq++
		p.view = &v
		vv := v
		b.recordLocked(history.Record{Time: now, Process: "node", Kind: history.KindView, Node: n.id, Boot: p.boot, Seq: p.seq, View: &vv})
	}
	b.notifyLocked()
}

// recordLocked appends r to the history, unless an attach is still
// reading the cluster back (its snapshot stands for that).
func (b *Backend) recordLocked(r history.Record) {
	if !b.replaying {
		b.appendRecordLocked(r)
	}
}

// claimLocked maps the server ID a member answered with to it: the first
// answer teaches it, a later one must repeat it, and no two members may
// claim one ID (a forged or confused answer is refused).
func (b *Backend) claimLocked(n *node, id string) error {
	if b.sysIDs == nil {
		b.sysIDs = map[string]election.NodeID{}
	}
	if owner, ok := b.sysIDs[id]; ok && owner != n.id {
		return fmt.Errorf("member %d answered with ID %q, which is member %d's", n.id, clipNote(id), owner)
	}
	for sid, owner := range b.sysIDs {
		if owner == n.id && sid != id {
			return fmt.Errorf("member %d answered with ID %q, but its ID is %q", n.id, clipNote(id), clipNote(sid))
		}
	}
	b.sysIDs[id] = n.id
	return nil
}

// unknownLocked marks member n's view unknown: the world forgets it (an
// expectation cannot count it), the history keeps the last view it gave
// and says, once per streak, that the member stopped answering. A member
// the engine finds gone without a fault is down, as a node's follower
// would find it.
func (b *Backend) unknownLocked(ctx context.Context, n *node, now time.Time, why string) {
	p := n.probe
	if _, had := b.world.Views[n.id]; had {
		delete(b.world.Views, n.id)
		b.notifyLocked()
	}
	if p.failing == "" {
		p.failing, p.since = why, now
		if p.answered {
			b.recordLocked(history.Record{Time: now, Process: "harness", Kind: history.KindMark, Node: n.id,
				Note: fmt.Sprintf("node %d does not answer its probe (%s): its view is unknown", n.id, clipNote(why))})
		}
	}
	if now.Sub(p.checked) < time.Second || n.busy || b.cli == nil {
		return
	}
	p.checked = now
	gen := n.gen
	go func() {
		st, err := b.state(ctx, n)
		if err != nil || st == nil || st.Running {
			return
		}
		b.reportExit(n, st)
		b.mu.Lock()
		defer b.mu.Unlock()
		if !n.busy && n.gen == gen && b.world.Up[n.id] {
			b.adoptProcessLocked(n.id, false, false)
			delete(b.applied, n.id)
			b.notifyLocked()
		}
	}()
}

func clipNote(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// systemRulesLocked is what member id's namespace holds in a system
// cluster: the rules of rules.Want, and the receiving end of each one-way
// cut as dropped input. A server's process has no drop set of its own, so
// a one-way cut A→B drops A's packets at B, as a Jepsen one-way partition
// does; TCP then stalls the connections between them both ways (B's
// packets still reach A: its connection attempts, its data, unacknowledged)
// — docs/systems.md says what that means for a server.
func (b *Backend) systemRulesLocked(addrs rules.Addrs, id election.NodeID) netfilter.Rules {
	r := rules.Want(b.world, b.spec.Members, addrs, id)
	for _, from := range rules.DropFrom(b.world, b.spec.Members, id) {
		if a, ok := addrs[from]; ok {
			r.DropIn = append(r.DropIn, a)
		}
	}
	return r
}

// refuseForSystem refuses a fault the cluster's system cannot take,
// naming why (chaos.Unsupported's words plus the system's own reason).
func (b *Backend) refuseForSystem(f chaos.Fault) error {
	if b.spec.System == nil {
		return nil
	}
	if why := b.spec.System.Refusal(string(f.Op)); why != "" {
		return fmt.Errorf("%w: system %s cannot take it: %s", chaos.Unsupported(f.Op, b.Name()), b.spec.System.Name, why)
	}
	return nil
}

// MemberLogTails are the last lines every member's server wrote, member
// by member, for an error that says why the members never elected.
func (b *Backend) MemberLogTails(ctx context.Context, lines int) string {
	b.mu.Lock()
	var nodes []*node
	for _, id := range slices.Sorted(maps.Keys(b.nodes)) {
		nodes = append(nodes, b.nodes[id])
	}
	b.mu.Unlock()
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("member %d's log ends:\n%s", n.id, indent(b.memberLogTail(ctx, n, lines))))
	}
	return strings.Join(parts, "\n")
}

// memberLogTail is the last lines member n's server wrote, for an error
// that says why it did not answer.
func (b *Backend) memberLogTail(ctx context.Context, n *node, lines int) string {
	b.mu.Lock()
	cli := b.cli
	b.mu.Unlock()
	rc, err := cli.ContainerLogs(ctx, n.cid, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(lines)})
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer rc.Close()
	var out bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &out, io.LimitReader(rc, 16<<10))
	return strings.TrimSpace(out.String())
}

// notAnswered says, for a start that timed out, which members never
// answered and what each logged last.
func (b *Backend) notAnswered(ctx context.Context) string {
	b.mu.Lock()
	var silent []*node
	for _, id := range b.spec.Members {
		if n := b.nodes[id]; n != nil && len(n.rec.Boots) == 0 {
			silent = append(silent, n)
		}
	}
	b.mu.Unlock()
	var parts []string
	for _, n := range silent {
		why := ""
		b.mu.Lock()
		if n.probe != nil {
			why = n.probe.failing
		}
		b.mu.Unlock()
		parts = append(parts, fmt.Sprintf("member %d (last probe: %s); its log ends:\n%s", n.id, why, indent(b.memberLogTail(ctx, n, 10))))
	}
	return strings.Join(parts, "\n")
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// Labels of a system member's container, which an attach reads the
// cluster's shape from: a server's container carries no RINGLEADER_*
// environment.
const (
	LabelMember        = "org.ringleader.member"
	LabelSystemFile    = "org.ringleader.system.file"
	LabelSystemOptions = "org.ringleader.system.options"
	LabelProbeInterval = "org.ringleader.system.probe-interval"
)

// systemLabels are the labels that say which member of which system a
// container is, with the options the cluster was given.
func systemLabels(sys *system.System, id election.NodeID, given election.Options) map[string]string {
	l := map[string]string{
		LabelSystem:        sys.Name,
		LabelMember:        strconv.Itoa(int(id)),
		LabelSystemOptions: given.String(),
		LabelProbeInterval: time.Duration(sys.Probe.Interval).String(),
	}
	if f := sys.File(); strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") {
		if abs, err := filepath.Abs(f); err == nil {
			l[LabelSystemFile] = abs
		}
	}
	return l
}

// SystemOfLabels is the system a member's container runs and the
// member's ID, read from its labels (systemLabels); an error when they
// are not a system member's.
func SystemOfLabels(l map[string]string) (*system.System, election.NodeID, error) {
	s, id, err := specFromSystemLabels("", l)
	return s.System, id, err
}

// specFromSystemLabels reads a system cluster's shape from one member's
// labels (systemLabels).
func specFromSystemLabels(run string, l map[string]string) (chaos.ClusterSpec, election.NodeID, error) {
	var s chaos.ClusterSpec
	id, err := strconv.Atoi(l[LabelMember])
	if err != nil || id <= 0 {
		return s, 0, fmt.Errorf("label %s %q is not a member ID", LabelMember, l[LabelMember])
	}
	name := l[LabelSystem]
	if f := l[LabelSystemFile]; f != "" {
		name = f
	}
	sys, err := system.Lookup(name, "")
	if err != nil {
		return s, 0, err
	}
	if d, err := time.ParseDuration(l[LabelProbeInterval]); err == nil && d > 0 {
		sys.Probe.Interval = system.Duration(d)
	}
	given, err := election.ParseOptions(l[LabelSystemOptions])
	if err != nil {
		return s, 0, fmt.Errorf("label %s: %w", LabelSystemOptions, err)
	}
	alg := sys.Algorithm()
	q, opts, err := alg.Resolve(election.Majority, given)
	if err != nil {
		return s, 0, fmt.Errorf("label %s: %w", LabelSystemOptions, err)
	}
	hb, el, err := sys.Timings(opts)
	if err != nil {
		return s, 0, err
	}
	s = chaos.ClusterSpec{Name: run, Algorithm: sys.Name, Quorum: q, Options: opts, System: sys, SystemOptions: given,
		Timing: election.Timing{Heartbeat: hb, Suspicion: el, Answer: hb}}
	return s, election.NodeID(id), nil
}

// attachSystem finishes Attach for a system cluster: every member is
// probed, the world waits for each running member's first answer (read,
// not recorded), and the history begins with the snapshot.
func (b *Backend) attachSystem(ctx, followCtx context.Context, spec chaos.ClusterSpec) (chaos.ClusterSpec, error) {
	b.mu.Lock()
	for _, n := range b.nodes {
		n.probe = &probeState{}
		b.followers.Add(1)
		go b.probeMember(followCtx, n)
	}
	b.mu.Unlock()
	caught, err := b.waitFor(ctx, b.cfg.bootTimeout, func() bool {
		for _, n := range b.nodes {
			if b.world.Up[n.id] && !b.world.Paused[n.id] && len(n.rec.Boots) == 0 {
				return false
			}
		}
		return true
	})
	if err != nil {
		return chaos.ClusterSpec{}, err
	}
	if !caught {
		return chaos.ClusterSpec{}, fmt.Errorf("docker: attach %s: not every running %s member answered its probe within %v:\n%s", b.run, spec.System.Name, b.cfg.bootTimeout, b.notAnswered(ctx))
	}
	b.snapshot()
	return spec, nil
}
