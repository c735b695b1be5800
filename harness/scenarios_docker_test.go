package harness_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/internal/keptstore"
)

// TestShippedScenariosPassInContainers runs every shipped scenario once in
// real containers, side by side as `make chaos-test` runs them (each
// subtest is parallel: go test's -parallel says how many at once), and
// demands the same as the simulator test: every expectation holds, every
// checker gives the expected verdict, split brain shows without quorum and
// never with it, and raft's figures show. One after another they take eight
// minutes; -short skips it. Without a
// Docker engine it skips, unless CI=true, where it fails.
func TestShippedScenariosPassInContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: container scenarios take minutes")
	}
	dockertest.Require(t)
	// etcd's first build takes two minutes. The parallel subtests run
	// once this function has returned: cancel when they are done.
	// Only a hang should reach this: the whole suite took 11 minutes on
	// one loaded CI machine.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	t.Cleanup(cancel)
	if err := docker.BuildImage(ctx, docker.DefaultImage, nil); err != nil {
		t.Fatalf("building the node image: %v", err)
	}
	for _, sc := range shipped(t) {
		t.Run(sc.Name, func(t *testing.T) {
			dockertest.Parallel(t)
			b := docker.New(docker.WithBuild(false))
			res, err := harness.Run(ctx, sc, b, harness.Options{Store: keptstore.For(t), Seed: 1, Progress: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Pass {
				t.Errorf("failed (history in %s):\n%s", res.Dir, joinLines(res.Failures))
				logOutline(t, filepath.Join(res.Dir, "history.jsonl"))
			}
			assertSplitBrainFigures(t, sc, res)
			// Nothing of this run may be left behind.
			left, err := docker.Leftovers(context.Background(), b.Run())
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("run %s left %v", b.Run(), left)
			}
		})
	}
}

// outlineMax bounds the outline a failed run logs.
const outlineMax = 400

// logOutline logs a failed run's history without its messages: every
// fault, view change, boot, stop and mark, as milliseconds from the first
// record. A CI log is all that is left of a run on a machine that is gone,
// and the verdict alone does not say how it came about.
func logOutline(t *testing.T, path string) {
	t.Helper()
	recs, err := history.ReadFile(path)
	if err != nil || len(recs) == 0 {
		t.Logf("no outline: %v", err)
		return
	}
	var b strings.Builder
	n := 0
	for _, r := range recs {
		if r.Kind == history.KindSend || r.Kind == history.KindRecv || r.Kind == history.KindDrop {
			continue
		}
		if n++; n > outlineMax {
			fmt.Fprintf(&b, "... (outline cut at %d records)\n", outlineMax)
			break
		}
		fmt.Fprintf(&b, "%+9.1f %-6s", float64(r.Time.Sub(recs[0].Time).Microseconds())/1000, r.Kind)
		if r.Node > 0 {
			fmt.Fprintf(&b, " node %d", r.Node)
		}
		switch {
		case r.View != nil:
			fmt.Fprintf(&b, " %s leader %d epoch %d", r.View.Role, r.View.Leader, r.View.Epoch)
		case r.Fault != nil:
			fmt.Fprintf(&b, " %s %s %v", r.Fault.Op, r.Fault.Phase, r.Fault.Nodes)
		case r.Note != "":
			fmt.Fprintf(&b, " %s", r.Note)
		}
		b.WriteByte('\n')
	}
	t.Logf("outline of %s (messages left out):\n%s", path, b.String())
}
