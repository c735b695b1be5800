package docker

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	rlnode "github.com/ringleader-dev/ringleader/node"
	"github.com/ringleader-dev/ringleader/node/control"
)

// TestControlChangesAClockAndDropSetLive: the backend's control runs
// `ringleader control` in node 1's container, and the running node takes
// both changes without a restart: it answers with rate 0.5 and drop set
// [3], logs its clock and drop-from lines, and from then on the recorded
// history shows the leader's messages dropped at node 1 (reason cut) while
// node 3 still receives node 1's (its elections, once it stops hearing
// the leader).
func TestControlChangesAClockAndDropSetLive(t *testing.T) {
	dockertest.Parallel(t)
	b, mem := startCluster(t, 3)
	await(t, b, "every node on leader 3", allSee(ids(1, 2, 3), 3))

	c := control.SetRate(0.5)
	c.DropFrom = control.DropFrom(3).DropFrom
	t0 := time.Now()
	r, err := b.control(context.Background(), 1, c)
	if err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	t.Logf("control: node 1 answered %v after the call", answered.Sub(t0).Round(time.Millisecond))
	if r.Node != 1 || r.Rate != 0.5 || len(r.DropFrom) != 1 || r.DropFrom[0] != 3 {
		t.Fatalf("node 1 answered %+v, want rate 0.5 and drop set [3]", r)
	}

	ok, err := b.waitFor(context.Background(), settle, func() bool {
		var dropped, heard bool
		for _, rec := range mem.Records() {
			if rec.Msg == nil || rec.Time.Before(answered) {
				continue
			}
			dropped = dropped || rec.Kind == history.KindDrop && rec.Node == 1 && rec.Reason == rlnode.DropCut && rec.Msg.From == 3
			heard = heard || rec.Kind == history.KindRecv && rec.Node == 3 && rec.Msg.From == 1
		}
		return dropped && heard
	})
	if err != nil || !ok {
		t.Fatalf("within %v the history shows no cut drop from 3 at node 1 together with a recv from 1 at node 3 (err %v)", settle, err)
	}
	var boots int
	for _, rec := range mem.Records() {
		if rec.Node == 1 && rec.Kind == history.KindBoot {
			boots++
		}
		if rec.Node == 1 && rec.Kind == history.KindRecv && rec.Msg.From == 3 && rec.Time.After(answered) {
			t.Fatalf("node 1 received from 3 after its answer: %+v", rec)
		}
	}
	if boots != 1 {
		t.Fatalf("node 1 booted %d times; the change must be live, without a restart", boots)
	}

	// The node's own word, in its container's log.
	b.mu.Lock()
	cli, cid := b.cli, b.nodes[1].cid
	b.mu.Unlock()
	for _, l := range awaitLogLines(t, cli.Client, cid, `"event":"clock"`, `"event":"drop-from"`) {
		t.Logf("node 1: %s", l)
		if strings.Contains(l, `"event":"clock"`) && !strings.Contains(l, `"clock_rate":0.5`) ||
			strings.Contains(l, `"event":"drop-from"`) && !strings.Contains(l, `"drop_from":[3]`) {
			t.Fatalf("node 1 logged %s; want rate 0.5 and drop set [3]", l)
		}
	}

	// A member that is not there is a clear error.
	if _, err := b.control(context.Background(), election.NodeID(9), control.SetRate(2)); err == nil || !strings.Contains(err.Error(), "no such node") {
		t.Fatalf("control of node 9: %v, want no such node", err)
	}
}

// awaitLogLines follows a container's stdout until a line containing
// each of wants has appeared (bounded by settle), and returns those lines.
func awaitLogLines(t *testing.T, cli *client.Client, cid string, wants ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	rc, err := cli.ContainerLogs(ctx, cid, client.ContainerLogsOptions{ShowStdout: true, Follow: true})
	if err != nil {
		t.Fatalf("docker logs: %v", err)
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	go func() { _, err := stdcopy.StdCopy(pw, io.Discard, rc); pw.CloseWithError(err) }()
	found := map[string]string{}
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for len(found) < len(wants) && sc.Scan() {
		for _, w := range wants {
			if _, ok := found[w]; !ok && strings.Contains(sc.Text(), w) {
				found[w] = sc.Text()
			}
		}
	}
	if len(found) < len(wants) {
		t.Fatalf("within %v the container logged lines for %d of %q (%v)", settle, len(found), wants, sc.Err())
	}
	var out []string
	for _, w := range wants {
		out = append(out, found[w])
	}
	return out
}
