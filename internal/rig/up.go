package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// Up makes the rig and returns its state. When anything fails, or ctx
// ends (a signal), what was made is removed again before Up returns.
func Up(ctx context.Context, cfg Config) (State, error) {
	if cfg.Dir == "" {
		cfg.Dir = Dir()
	}
	first, err := precheck(ctx, cfg)
	if err != nil {
		return State{}, err
	}
	st := State{First: first.Host, Holder: cfg.Holder}
	if l, err := neigh.ReadAll(neigh.Dir); err == nil {
		st.Neighbours = l // unreadable (a /proc without them): nothing to put back
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return State{}, fmt.Errorf("rig: %w", err)
	}
	if err := save(cfg.Dir, st); err != nil {
		return State{}, err
	}
	if err := up(ctx, cfg, first, &st); err != nil {
		cfg.logf("%v; removing what was made", err)
		// The undo must finish even though ctx has ended.
		if derr := Down(context.WithoutCancel(ctx), cfg.Dir, cfg.Log); derr != nil {
			return State{}, errors.Join(err, fmt.Errorf("and the undo failed: %w", derr))
		}
		return State{}, err
	}
	return st, nil
}

// precheck says why the rig cannot be made here, before anything is:
// not root, a tool missing, a rig already up, the names taken, the first
// engine not answering, remote, or already in a swarm.
func precheck(ctx context.Context, cfg Config) (engine.Engine, error) {
	if os.Geteuid() != 0 {
		return engine.Engine{}, errors.New("rig: needs root (it adds a network namespace and starts a dockerd)")
	}
	for _, tool := range []string{"ip", "nsenter", "dockerd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return engine.Engine{}, fmt.Errorf("rig: %s not found on PATH", tool)
		}
	}
	if s, err := Load(cfg.Dir); err == nil {
		if !s.holderGone() {
			return engine.Engine{}, fmt.Errorf("rig: a rig is already up (%s); `ringleader rig down` removes it", statePath(cfg.Dir))
		}
		cfg.logf("rig: the rig's holder (PID %d) is gone; removing the rig it left", s.Holder)
		if err := Down(ctx, cfg.Dir, cfg.Log); err != nil {
			return engine.Engine{}, err
		}
	} else if !errors.Is(err, ErrNotUp) {
		return engine.Engine{}, err
	}
	if err := exec.Command("ip", "netns", "pids", Netns).Run(); err == nil {
		return engine.Engine{}, fmt.Errorf("rig: network namespace %s exists but no rig state names it: not the rig's; remove it yourself (ip netns del %s)", Netns, Netns)
	}
	if _, err := os.Stat(Socket); err == nil {
		return engine.Engine{}, fmt.Errorf("rig: %s exists but no rig state names it: another dockerd may be listening there", Socket)
	}
	first, err := engine.Connect(ctx)
	if err != nil {
		return engine.Engine{}, fmt.Errorf("rig: the first engine: %w", err)
	}
	if !strings.HasPrefix(first.Host, "unix://") {
		return engine.Engine{}, fmt.Errorf("rig: the first engine is %s; the rig's second engine runs on this machine, so the first must be this machine's (a unix socket)", first)
	}
	info, err := infoOf(ctx, first.Host)
	if err != nil {
		return engine.Engine{}, err
	}
	if s := info.Swarm.LocalNodeState; s != swarm.LocalNodeStateInactive {
		return engine.Engine{}, fmt.Errorf("rig: the engine at %s is in a swarm (state %q, node %s) that the rig did not make; ringleader never joins or leaves a swarm it did not make. Use that swarm's engines with --engines, or leave it yourself first", first.Host, s, info.Swarm.NodeID)
	}
	return first, nil
}

// up takes the steps. Each marks in st what it is about to make and
// saves st before making it, so that a process killed half way through a
// step leaves a state file naming it (Down tolerates what is not there).
func up(ctx context.Context, cfg Config, first engine.Engine, st *State) error {
	type stepT struct {
		name string
		mark func()
		f    func() error
	}
	steps := []stepT{
		{"network namespace " + Netns, func() { st.Netns = true }, func() error { return run("ip", "netns", "add", Netns) }},
		{"veth " + HostVeth + " " + HostAddr + " <-> " + NsVeth + " " + NsAddr, func() { st.Veth = true }, veth},
		{"second dockerd on " + Socket, func() { st.Data = filepath.Join(cfg.Dir, "h2") }, func() error { return startDaemon(ctx, st) }},
		{"swarm init on " + first.Host, func() { st.SwarmInit = true }, func() error { return swarmInit(ctx, st) }},
		{"swarm join of the second engine", func() { st.Joined = true }, func() error { return swarmJoin(ctx, st) }},
	}
	for _, img := range cfg.Images {
		steps = append(steps, stepT{"image " + img + " into the second engine", func() {}, func() error { return copyImage(ctx, st, img) }})
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rig: interrupted before %s: %w", s.name, err)
		}
		cfg.logf("rig: %s", s.name)
		s.mark()
		if err := save(cfg.Dir, *st); err != nil {
			return err
		}
		if err := s.f(); err != nil {
			return fmt.Errorf("rig: %s: %w", s.name, err)
		}
		if err := save(cfg.Dir, *st); err != nil {
			return err
		}
	}
	return nil
}

// run runs a command and returns its output in the error when it fails.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// veth links the namespace to this host: addresses, links up, the
// namespace's default route via this side.
func veth() error {
	in := func(args ...string) []string { return append([]string{"-n", Netns}, args...) }
	for _, c := range [][]string{
		{"link", "add", HostVeth, "type", "veth", "peer", "name", NsVeth, "netns", Netns},
		{"addr", "add", HostAddr + "/24", "dev", HostVeth},
		{"link", "set", HostVeth, "up"},
		in("addr", "add", NsAddr+"/24", "dev", NsVeth),
		in("link", "set", NsVeth, "up"),
		in("link", "set", "lo", "up"),
		in("route", "add", "default", "via", HostAddr),
	} {
		if err := run("ip", c...); err != nil {
			return err
		}
	}
	return nil
}

// startDaemon starts the second dockerd inside the namespace, in a
// session of its own so that it outlives `ringleader rig up`, and waits
// until it answers.
func startDaemon(ctx context.Context, st *State) error {
	data := st.Data
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	// Only the MTU: the machine's daemon.json may name a data root,
	// which would clash with the flag.
	conf := filepath.Join(data, "daemon.json")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("{\"mtu\": %d}\n", MTU)), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(data, "dockerd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	// nsenter, not ip netns exec: that remounts /sys and hides the
	// cgroups the daemon needs.
	cmd := exec.Command("nsenter", "--net=/var/run/netns/"+Netns, "dockerd",
		"--config-file", conf,
		"--data-root", filepath.Join(data, "data"),
		"--exec-root", filepath.Join(data, "exec"),
		"-H", "unix://"+Socket,
		"--pidfile", filepath.Join(data, "dockerd.pid"),
		"--cgroup-parent", CgroupParent,
		"--bridge", "none", "--iptables=false", "--ip-masq=false",
		"--storage-driver", "vfs")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	st.PID = cmd.Process.Pid // nsenter execs dockerd: the same process
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	e := engine.Engine{Host: "unix://" + Socket, Source: "the rig"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := e.Ping(ctx); err == nil {
			st.Second = e.Host
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("dockerd exited (%v); its log: %s", err, tail(filepath.Join(data, "dockerd.log")))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer on %s in 90s; its log: %s", Socket, tail(filepath.Join(data, "dockerd.log")))
		}
	}
}

// tail is a file's last lines, for an error.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}

// cli is a client of the engine at host.
func cli(host string) (*client.Client, error) {
	return engine.Engine{Host: host}.Client()
}

func infoOf(ctx context.Context, host string) (SwarmInfo, error) {
	c, err := cli(host)
	if err != nil {
		return SwarmInfo{}, err
	}
	defer c.Close()
	r, err := c.Info(ctx, client.InfoOptions{})
	if err != nil {
		return SwarmInfo{}, fmt.Errorf("rig: docker info at %s: %w", host, err)
	}
	return SwarmInfo{Swarm: r.Info.Swarm}, nil
}

// SwarmInfo is the part of an engine's info the rig reads.
type SwarmInfo struct{ Swarm swarm.Info }

// swarmInit makes the first engine the manager, advertising the veth's
// address, and records whether docker_gwbridge was there before.
func swarmInit(ctx context.Context, st *State) error {
	c, err := cli(st.First)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.NetworkInspect(ctx, "docker_gwbridge", client.NetworkInspectOptions{})
	st.GWBridgeBefore = err == nil
	_, err = c.SwarmInit(ctx, client.SwarmInitOptions{
		ListenAddr:    HostAddr + ":2377",
		AdvertiseAddr: HostAddr,
	})
	return err
}

// swarmJoin joins the second engine as a worker.
func swarmJoin(ctx context.Context, st *State) error {
	m, err := cli(st.First)
	if err != nil {
		return err
	}
	defer m.Close()
	sw, err := m.SwarmInspect(ctx, client.SwarmInspectOptions{})
	if err != nil {
		return err
	}
	w, err := cli(st.Second)
	if err != nil {
		return err
	}
	defer w.Close()
	_, err = w.SwarmJoin(ctx, client.SwarmJoinOptions{
		ListenAddr:    NsAddr + ":2377",
		AdvertiseAddr: NsAddr,
		RemoteAddrs:   []string{HostAddr + ":2377"},
		JoinToken:     sw.Swarm.JoinTokens.Worker,
	})
	return err
}

// copyImage streams img from the first engine into the second (docker
// save | docker load): nothing can be pulled.
func copyImage(ctx context.Context, st *State, img string) error {
	if err := engine.CopyImage(ctx, engine.Engine{Host: st.First}, engine.Engine{Host: st.Second}, img); err != nil {
		return err
	}
	st.Images = append(st.Images, img)
	return nil
}
