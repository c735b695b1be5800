package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// delayHelper is the long-lived helper container releasing one node's
// NFQUEUE, and the latency it adds. The kernel has no netem, so a helper in
// each delayed node's namespace binds an NFQUEUE, the rules queue the
// peers' packets there, and the helper accepts each one after
// delay±jitter. It is physical state — which container serves which
// namespace — not world: the world's delays are in chaos.State.Net.
type delayHelper struct {
	cid     string
	latency latency
}

// latency is a delay helper's delay and jitter.
type latency struct {
	Delay, Jitter time.Duration
}

// delayOf is the latency the world wants added to node id's packets, and
// whether it wants any.
func delayOf(s chaos.State, id election.NodeID) (latency, bool) {
	p, ok := s.NetOf(chaos.Delay, id)
	return latency{chaos.DelayMS.Dur(p), chaos.DelayJitter.Dur(p)}, ok
}

// ensureDelays starts a delay helper for every running node the world
// delays that has none (after a delay fault, or after a restart).
func (b *Backend) ensureDelays(ctx context.Context) error {
	type job struct {
		n   *node
		lat latency
	}
	var jobs []job
	b.mu.Lock()
	for _, id := range b.spec.Members {
		lat, delayed := delayOf(b.world, id)
		_, serving := b.delays[id]
		if n := b.nodes[id]; n != nil && delayed && !serving && b.world.Up[id] {
			jobs = append(jobs, job{n, lat})
		}
	}
	b.mu.Unlock()
	var errs []error
	for _, j := range jobs {
		if err := b.startDelay(ctx, j.n, j.lat); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// startDelay starts n's delay helper, which installs n's whole rule set
// as the world wants it and then releases the queue.
func (b *Backend) startDelay(ctx context.Context, n *node, lat latency) error {
	b.mu.Lock()
	cli := b.cliOfLocked(n)
	want := b.wantRulesLocked(n.id)
	b.mu.Unlock()
	t0 := time.Now()
	args := append([]string{"delay", "--delay", lat.Delay.String(), "--jitter", lat.Jitter.String()}, want.Args()...)
	opts := b.helperConfig(n, args)
	created, err := cli.ContainerCreate(ctx, opts)
	if err != nil {
		return fmt.Errorf("docker: delay helper for node %d: create: %w", n.id, err)
	}
	id := created.ID
	b.mu.Lock()
	b.helpers[id] = n.eng
	b.mu.Unlock()
	if _, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		b.removeContainers(ctx, []string{id})
		return fmt.Errorf("docker: delay helper for node %d: start: %w", n.id, err)
	}
	if err := b.awaitReady(ctx, cli, id); err != nil {
		b.removeContainers(ctx, []string{id})
		return fmt.Errorf("docker: delay helper for node %d (%s): %w", n.id, strings.Join(args, " "), err)
	}
	b.mu.Lock()
	b.delays[n.id] = delayHelper{cid: id, latency: lat}
	b.applied[n.id] = want
	b.mu.Unlock()
	b.logf("netfilter node %d: delay %v±%v (%s) in place after %v", n.id, lat.Delay, lat.Jitter, want, time.Since(t0).Round(time.Millisecond))
	return nil
}

// awaitReady follows a delay helper's output until it says READY (the
// queue is bound and the rules are in) or exits.
func (b *Backend) awaitReady(ctx context.Context, cli *testcontainers.DockerClient, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		return err
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	go func() {
		_, err := stdcopy.StdCopy(pw, &stderr, rc)
		pw.CloseWithError(err)
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if sc.Text() == "READY" {
			go io.Copy(io.Discard, pr) // let the copier finish when the stream closes
			return nil
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("not ready within 30s")
	}
	msg := strings.TrimSpace(stderr.String())
	if msg == "" {
		msg = "(no output)"
	}
	return fmt.Errorf("exited before binding its queue: %s", msg)
}

// forgetNamespace forgets what node id's namespace held: it went with the
// process, so its rules are none and its delay helper serves nothing (the
// helper goes). Both come back when the node starts again.
func (b *Backend) forgetNamespace(ctx context.Context, id election.NodeID) error {
	b.mu.Lock()
	delete(b.applied, id)
	h, ok := b.delays[id]
	delete(b.delays, id)
	b.mu.Unlock()
	if !ok {
		return nil
	}
	return b.removeContainers(ctx, []string{h.cid})
}

// delayHelpersLocked lists the delay helpers' container IDs.
func (b *Backend) delayHelpersLocked() []string {
	var out []string
	for _, h := range b.delays {
		out = append(out, h.cid)
	}
	return out
}

// removeContainers force-removes helper containers.
func (b *Backend) removeContainers(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		b.mu.Lock()
		cli := b.cliOfHelperLocked(id)
		b.mu.Unlock()
		_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove helper %s: %w", id[:12], err))
			continue
		}
		b.mu.Lock()
		delete(b.helpers, id)
		b.mu.Unlock()
	}
	return errors.Join(errs...)
}
