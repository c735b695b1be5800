package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/docker/netfilter"
)

var helperSeq atomic.Uint64

// helperConfig is a netfilter helper container joining n's network
// namespace: the node image, root, NET_ADMIN and nothing else. The node
// itself stays unprivileged; only this short-lived process may change the
// namespace's tables.
func (b *Backend) helperConfig(n *node, args []string) client.ContainerCreateOptions {
	opts := client.ContainerCreateOptions{
		Name: fmt.Sprintf("rl-%s-nf%d-%d", b.run, n.id, helperSeq.Add(1)),
		Config: &container.Config{
			Image:      b.cfg.image,
			User:       "0",
			Entrypoint: []string{"/ringleader"},
			Cmd:        append([]string{"netfilter"}, args...),
			Labels:     labels(b.run, RoleNetfilter),
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    container.NetworkMode("container:" + n.cid),
			ReadonlyRootfs: true,
			// The image declares a VOLUME for the node's state; a
			// helper keeps no state, and a tmpfs there stops Docker
			// from creating an anonymous volume per helper run.
			Tmpfs: map[string]string{stateDir: ""},
		},
	}
	hardenHelper(opts.HostConfig)
	return opts
}

// setRules makes n's namespace hold exactly r (empty: no table), from
// this process when it can enter the namespace (netnsDirect), else
// through a helper container. It returns how long that took and which
// way it went, for the progress line.
func (b *Backend) setRules(ctx context.Context, n *node, r netfilter.Rules) (time.Duration, string, error) {
	t0 := time.Now()
	err := b.inNamespace(n, func(in netfilter.Option) error { return netfilter.Apply(r, in) })
	if err == nil {
		return time.Since(t0), "directly", nil
	}
	if !errors.Is(err, errNoDirect) {
		b.logf("netfilter node %d: directly: %v; through a helper instead", n.id, err)
	}
	args := append([]string{"apply"}, r.Args()...)
	if r.Empty() {
		args = []string{"heal"}
	}
	took, err := b.runHelper(ctx, n, args)
	return took, "through a helper", err
}

// readRules reads back what n's namespace holds, as setRules does.
func (b *Backend) readRules(ctx context.Context, n *node) (netfilter.Rules, error) {
	var r netfilter.Rules
	err := b.inNamespace(n, func(in netfilter.Option) (err error) {
		r, err = netfilter.Read(in)
		return err
	})
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, errNoDirect) {
		b.logf("netfilter node %d: read directly: %v; through a helper instead", n.id, err)
	}
	return b.helperRules(ctx, n)
}

// errNoDirect: this process cannot enter the node's namespace.
var errNoDirect = errors.New("namespace out of reach")

// inNamespace runs do with a netlink option that acts on n's network
// namespace, when this process can open it; errNoDirect when it cannot.
func (b *Backend) inNamespace(n *node, do func(netfilter.Option) error) error {
	b.mu.Lock()
	pid, cid := n.netPid, n.cid
	b.mu.Unlock()
	if !b.cfg.direct {
		return errNoDirect
	}
	ns, ok := netnsDirect(pid, cid)
	if !ok {
		return errNoDirect
	}
	defer ns.Close()
	return do(netfilter.InNamespace(int(ns.Fd())))
}

// runHelper runs `ringleader netfilter args...` in n's namespace and waits
// for it to finish; it returns how long that took, from create to exit.
func (b *Backend) runHelper(ctx context.Context, n *node, args []string) (time.Duration, error) {
	took, _, err := b.runHelperOutput(ctx, n, args)
	return took, err
}

// helperRules reads n's rules through a helper container: what
// `ringleader netfilter show` prints in n's namespace.
func (b *Backend) helperRules(ctx context.Context, n *node) (netfilter.Rules, error) {
	_, out, err := b.runHelperOutput(ctx, n, []string{"show"})
	if err != nil {
		return netfilter.Rules{}, err
	}
	var r netfilter.Rules
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return netfilter.Rules{}, fmt.Errorf("docker: node %d's rules %q: %w", n.id, out, err)
	}
	return r, nil
}

func (b *Backend) runHelperOutput(ctx context.Context, n *node, args []string) (time.Duration, string, error) {
	b.mu.Lock()
	cli := b.cliOfLocked(n)
	b.mu.Unlock()
	t0 := time.Now()
	opts := b.helperConfig(n, args)
	created, err := cli.ContainerCreate(ctx, opts)
	if err != nil {
		return 0, "", fmt.Errorf("docker: netfilter helper for node %d: create: %w", n.id, err)
	}
	id := created.ID
	b.mu.Lock()
	b.helpers[id] = n.eng
	b.mu.Unlock()
	// The fault is in effect once the helper exits; removing it is
	// book-keeping that need not delay Apply. Close waits for it (bg).
	defer func() {
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if _, err := cli.ContainerRemove(rctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil || isNotFound(err) {
				b.mu.Lock()
				delete(b.helpers, id)
				b.mu.Unlock()
			}
		}()
	}()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := cli.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return 0, "", fmt.Errorf("docker: netfilter helper for node %d (%s): start: %w", n.id, opts.Name, err)
	}
	var code int64
	select {
	case r := <-wait.Result:
		code = r.StatusCode
	case err := <-wait.Error:
		return 0, "", fmt.Errorf("docker: netfilter helper for node %d: wait: %w", n.id, err)
	}
	took := time.Since(t0)
	if code == 0 && args[0] != "show" {
		return took, "", nil // only show's output is wanted on success
	}
	stdout, stderr := helperOutput(ctx, cli, id)
	if code != 0 {
		msg := strings.TrimSpace(stderr + stdout)
		if msg == "" {
			msg = "(no output)"
		}
		return took, "", fmt.Errorf("docker: netfilter helper for node %d (%s) exited %d: %s", n.id, strings.Join(args, " "), code, msg)
	}
	return took, strings.TrimSpace(stdout), nil
}

// helperOutput returns what a helper wrote on stdout and stderr.
func helperOutput(ctx context.Context, cli *testcontainers.DockerClient, id string) (stdout, stderr string) {
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", fmt.Sprintf("(no output: %v)", err)
	}
	defer rc.Close()
	var out, errb bytes.Buffer
	stdcopy.StdCopy(&out, &errb, rc)
	return out.String(), errb.String()
}
