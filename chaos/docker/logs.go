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
	"github.com/ringleader-dev/ringleader/wire"
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
			// Down, by a fault or on its own; unless a restart
			// came in meanwhile (gen moved on).
			b.mu.Lock()
			if n.gen == gen && n.up {
				n.up = false
				b.paused[n.id] = false
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
	cli := b.cli
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

// lastTextMax bounds the text an exit report quotes: enough for a Go
// error chain, not a whole panic.
const lastTextMax = 240

// reportExit tells the person running it, and the history, that node n
// ended on its own (exitedOnItsOwn): a crash the checks would otherwise
// only show as a node that is down.
func (b *Backend) reportExit(n *node, st *container.State) {
	b.mu.Lock()
	why := exitedOnItsOwn(st, n.lastText)
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
	cli, since := b.cli, n.lastTS
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
	stdout := &lineWriter{fn: func(l []byte) { b.handleLine(n, l, false) }}
	stderr := &lineWriter{fn: func(l []byte) { b.handleLine(n, l, true) }}
	_, err = stdcopy.StdCopy(stdout, stderr, rc)
	stdout.flush()
	stderr.flush()
	return err
}

// lineWriter calls fn with every complete line written to it.
type lineWriter struct {
	buf []byte
	fn  func([]byte)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.fn(w.buf)
		w.buf = nil
	}
}

// handleLine takes one timestamped docker log line of node n.
func (b *Backend) handleLine(n *node, line []byte, stderr bool) {
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return
	}
	rest = bytes.TrimRight(rest, "\r")
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.After(n.lastTS) {
		n.lastTS = t
	}
	if len(rest) == 0 {
		return
	}
	if stderr || rest[0] != '{' {
		n.lastText = wire.ClipTo(string(rest), lastTextMax)
		b.logf("node %d: %s", n.id, rest)
		return
	}
	rec, ok, err := history.ParseNodeLog(rest)
	if err != nil {
		b.logf("node %d: unparsable log line (%v): %s", n.id, err, rest)
		return
	}
	if !ok {
		return
	}
	if rec.Node != n.id {
		b.logf("node %d: log line claims node %d; recorded as node %d", n.id, rec.Node, n.id)
		rec.Node = n.id
	}
	last, seen := n.lastSeq[rec.Boot]
	if rec.Seq <= last {
		return // read again after re-attaching
	}
	if rec.Seq > last+1 {
		b.gaps++
		note := fmt.Sprintf("log gap: node %d boot %s lines %d..%d never arrived", n.id, rec.Boot, last+1, rec.Seq-1)
		b.logf("%s", note)
		b.appendRecordLocked(history.Record{Time: rec.Time, Process: "node", Kind: history.KindMark, Node: n.id, Boot: rec.Boot, Note: note})
	}
	if !seen {
		n.boots = append(n.boots, rec.Boot)
	}
	n.lastSeq[rec.Boot] = rec.Seq
	switch rec.Kind {
	case history.KindBoot:
		// A new process knows nothing yet; its old view is history.
		delete(b.views, n.id)
	case history.KindView:
		b.views[n.id] = *rec.View
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
