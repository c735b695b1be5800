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

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// delaySpec is one node's delay: its NFQUEUE number and the long-lived
// helper container releasing the queue ("" while none runs).
type delaySpec struct {
	queue  uint16
	delay  time.Duration
	jitter time.Duration
	helper string
}

// applyDelay delays every packet to and from the target nodes' peers. The
// kernel has no netem, so a long-lived helper in each target's namespace
// binds an NFQUEUE, the rules queue the peers' packets there, and the
// helper accepts each one after delay±jitter.
// A delay of 0 with no jitter removes the targets' delay (chaos.Decide has
// checked the rest).
func (b *Backend) applyDelay(ctx context.Context, f chaos.Fault) error {
	remove := f.Delay == 0 && f.Jitter == 0
	var old []string
	b.mu.Lock()
	for _, id := range f.Nodes {
		if d, ok := b.delay[id]; ok && d.helper != "" {
			old = append(old, d.helper)
		}
		if remove {
			delete(b.delay, id)
			continue
		}
		// The queue number only needs to be unique inside one
		// namespace; the node ID is.
		b.delay[id] = delaySpec{queue: uint16(id), delay: f.Delay, jitter: f.Jitter}
	}
	b.mu.Unlock()
	if err := b.removeContainers(ctx, old); err != nil {
		return err
	}
	if remove {
		return b.syncRules(ctx)
	}
	return b.ensureDelays(ctx)
}

// ensureDelays starts a delay helper for every running node that should
// have one and has none (after applyDelay, or after a restart).
func (b *Backend) ensureDelays(ctx context.Context) error {
	type job struct {
		n    *node
		spec delaySpec
	}
	var jobs []job
	b.mu.Lock()
	for id, d := range b.delay {
		if n := b.nodes[id]; n != nil && n.up && d.helper == "" {
			jobs = append(jobs, job{n, d})
		}
	}
	b.mu.Unlock()
	var errs []error
	for _, j := range jobs {
		if err := b.startDelay(ctx, j.n, j.spec); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *Backend) startDelay(ctx context.Context, n *node, d delaySpec) error {
	b.mu.Lock()
	cli := b.cli
	want := b.wantRulesLocked(n.id)
	b.mu.Unlock()
	t0 := time.Now()
	args := append([]string{"delay", "--delay", d.delay.String(), "--jitter", d.jitter.String()}, want.Args()...)
	opts := b.helperConfig(n, args)
	created, err := cli.ContainerCreate(ctx, opts)
	if err != nil {
		return fmt.Errorf("docker: delay helper for node %d: create: %w", n.id, err)
	}
	id := created.ID
	b.mu.Lock()
	b.helpers[id] = true
	b.mu.Unlock()
	if _, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		b.removeContainers(ctx, []string{id})
		return fmt.Errorf("docker: delay helper for node %d: start: %w", n.id, err)
	}
	if err := b.awaitReady(ctx, id); err != nil {
		b.removeContainers(ctx, []string{id})
		return fmt.Errorf("docker: delay helper for node %d (%s): %w", n.id, strings.Join(args, " "), err)
	}
	b.mu.Lock()
	if cur, ok := b.delay[n.id]; ok && cur.helper == "" {
		cur.helper = id
		b.delay[n.id] = cur
		b.applied[n.id] = want
	}
	b.mu.Unlock()
	b.logf("netfilter node %d: delay %v±%v (%s) in place after %v", n.id, d.delay, d.jitter, want, time.Since(t0).Round(time.Millisecond))
	return nil
}

// awaitReady follows a delay helper's output until it says READY (the
// queue is bound and the rules are in) or exits.
func (b *Backend) awaitReady(ctx context.Context, id string) error {
	b.mu.Lock()
	cli := b.cli
	b.mu.Unlock()
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

// stopDelays removes every delay helper; the caller's syncRules then
// takes the queue rules out.
func (b *Backend) stopDelays(ctx context.Context) error {
	b.mu.Lock()
	ids := b.delayHelpersLocked()
	clear(b.delay)
	b.mu.Unlock()
	return b.removeContainers(ctx, ids)
}

// dropDelayHelper forgets node id's delay helper (its namespace is gone
// with the process); the delay comes back with the node.
func (b *Backend) dropDelayHelper(ctx context.Context, id election.NodeID) error {
	b.mu.Lock()
	d, ok := b.delay[id]
	var ids []string
	if ok && d.helper != "" {
		ids = []string{d.helper}
		d.helper = ""
		b.delay[id] = d
	}
	b.mu.Unlock()
	return b.removeContainers(ctx, ids)
}

// delayHelpersLocked lists the delay helpers' container IDs.
func (b *Backend) delayHelpersLocked() []string {
	var out []string
	for _, d := range b.delay {
		if d.helper != "" {
			out = append(out, d.helper)
		}
	}
	return out
}

// removeContainers force-removes helper containers.
func (b *Backend) removeContainers(ctx context.Context, ids []string) error {
	b.mu.Lock()
	cli := b.cli
	b.mu.Unlock()
	var errs []error
	for _, id := range ids {
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
