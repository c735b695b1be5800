package docker

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/history/logrecord"
)

// follow streams one node's log into the history for the life of the run.
// A docker log stream ends when the container stops; after a restart the
// follower attaches again from the timestamp of the last line it read. The
// overlap that leaves is removed by (boot, seq): a line whose seq its boot
// has already reached is dropped, and a seq that skips ahead is recorded as
// a gap. So the history gets every line once, in order, across restarts.
func (b *Backend) follow(ctx context.Context, n *node) {
	defer b.followers.Done()
	for {
		err := b.readLogs(ctx, n)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			b.logf("node %d: log stream: %v", n.id, err)
		}
		// The stream ends when the container stops. If it is running
		// again already (or the engine merely closed the stream),
		// re-attach at once; otherwise wait for Apply's restart.
		b.mu.Lock()
		gen := n.gen
		b.mu.Unlock()
		st, ierr := b.state(ctx, n)
		running := st != nil && st.Running
		if ctx.Err() != nil {
			return
		}
		if ierr == nil && !running {
			b.reportExit(n, st)
			// Down on its own, unless a fault on the node was in
			// flight meanwhile (busy, or gen moved on): that fault
			// has said what the world is.
			b.mu.Lock()
			if !n.busy && n.gen == gen && b.world.Up[n.id] {
				b.adoptProcessLocked(n.id, false, false)
				// The namespace went with the process; the delay
				// helper goes when the node starts again.
				delete(b.applied, n.id)
				b.notifyLocked()
			}
			b.mu.Unlock()
		}
		if ierr == nil && running {
			if err != nil {
				// Do not spin against an engine that fails.
				select {
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
			continue
		}
		select {
		case <-n.started:
		case <-ctx.Done():
			return
		}
	}
}

func (b *Backend) running(ctx context.Context, n *node) (bool, error) {
	st, err := b.state(ctx, n)
	return st != nil && st.Running, err
}

func (b *Backend) state(ctx context.Context, n *node) (*container.State, error) {
	b.mu.Lock()
	cli := b.cliOfLocked(n)
	b.mu.Unlock()
	res, err := cli.ContainerInspect(ctx, n.cid, client.ContainerInspectOptions{})
	if err != nil {
		return nil, err
	}
	return res.Container.State, nil
}

// exitedOnItsOwn says why a node's process ended when no fault ended it:
// the engine killed it for memory, or it exited with a code that neither
// kill (137) nor stop (143, or 0 after a clean shutdown) gives. Empty for
// the exits the faults cause.
func exitedOnItsOwn(st *container.State, lastText string) string {
	if st == nil || st.Running {
		return ""
	}
	var why string
	switch {
	case st.OOMKilled:
		why = "killed by the engine for memory (OOMKilled)"
	case st.ExitCode != 0 && st.ExitCode != 137 && st.ExitCode != 143:
		why = fmt.Sprintf("exited with code %d", st.ExitCode)
	default:
		return ""
	}
	if lastText != "" {
		why += ": " + lastText
	}
	return why
}

// reportExit tells the person running it, and the history, that node n
// ended on its own (exitedOnItsOwn): a crash the checks would otherwise
// only show as a node that is down.
func (b *Backend) reportExit(n *node, st *container.State) {
	b.mu.Lock()
	why := exitedOnItsOwn(st, n.rec.LastText)
	if why != "" {
		b.appendRecordLocked(history.Record{Time: time.Now(), Process: "harness", Kind: history.KindMark, Node: n.id,
			Note: fmt.Sprintf("node %d %s", n.id, why)})
	}
	b.mu.Unlock()
	if why != "" {
		b.warnf("docker: run %s: node %d %s", b.run, n.id, why)
	}
}

func (b *Backend) readLogs(ctx context.Context, n *node) error { return b.readLogsFollow(ctx, n, true) }

// readLogsFollow reads n's log from where the last read stopped: to its
// end and returns (follow false), or on as it grows (follow true).
func (b *Backend) readLogsFollow(ctx context.Context, n *node, follow bool) error {
	b.mu.Lock()
	cli, since := b.cliOfLocked(n), n.lastTS
	b.mu.Unlock()
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: follow, Timestamps: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	rc, err := cli.ContainerLogs(ctx, n.cid, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	stdout := logrecord.NewLines(func(l []byte) { b.handleLine(n, l, false) })
	stderr := logrecord.NewLines(func(l []byte) { b.handleLine(n, l, true) })
	_, err = stdcopy.StdCopy(stdout, stderr, rc)
	stdout.Flush()
	stderr.Flush()
	return err
}

// handleLine takes one timestamped docker log line of node n: the docker
// timestamp is where a re-attached follower resumes; the rest is the
// node's line, for its recorder (package logrecord).
func (b *Backend) handleLine(n *node, line []byte, stderr bool) {
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.After(n.lastTS) {
		n.lastTS = t
	}
	if note, ok := history.ParseControlNote(rest); ok {
		n.noted(note)
	}
	out := n.rec.Take(rest, stderr)
	switch {
	case out.Text != "":
		b.logf("node %d: %s", n.id, out.Text)
	case out.Problem != "":
		b.logf("node %d: %s", n.id, out.Problem)
	}
	if out.Gap != nil {
		b.logf("%s", out.Gap.Note)
		b.appendRecordLocked(*out.Gap)
	}
	if out.Record == nil {
		return
	}
	rec := *out.Record
	switch rec.Kind {
	case history.KindBoot:
		// A new process knows nothing yet; its old view is history.
		delete(b.world.Views, n.id)
	case history.KindView:
		b.world.Views[n.id] = *rec.View
	}
	switch {
	case b.replaying:
		// Attach's snapshot will stand for what is read back now.
	case !rec.Time.Before(b.recordFrom):
		b.appendRecordLocked(rec)
	case rec.Kind == history.KindView:
		// An attached backend's snapshot was taken a moment before
		// this line, logged earlier, was read: the view it records is
		// the node's from the snapshot on.
		rec.Time = b.recordFrom
		b.appendRecordLocked(rec)
	}
	b.notifyLocked()
}
