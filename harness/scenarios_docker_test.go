package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos/docker"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// measuresTime names the scenarios whose test holds a duration to a bound
// (assertSplitBrainFigures: a cut-off leader's overlap): they run alone,
// before the others, so that no other cluster shares the machine with them.
var measuresTime = map[string]bool{
	"raft-leader-cut-off": true, "etcd-leader-cut-off": true, "raft-leader-cut-off-no-check-quorum": true,
}

// TestShippedScenariosPassInContainers runs every shipped scenario once in
// real containers and demands the same as the simulator test: every
// expectation holds, every checker gives the expected verdict, split brain
// shows without quorum and never with it, and raft's figures show. Those
// that measure time (measuresTime) run alone first; the rest run side by
// side, as many at once as go test's -parallel (GOMAXPROCS unless set),
// each on a cluster, network and names of its own. -short skips it.
// Without a Docker engine it skips, unless CI=true, where it fails.
func TestShippedScenariosPassInContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: container scenarios take minutes")
	}
	dockertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute) // etcd's first build takes two
	t.Cleanup(cancel)                                                        // after the parallel subtests, which run once this function returns
	if err := docker.BuildImage(ctx, docker.DefaultImage, nil); err != nil {
		t.Fatalf("building the node image: %v", err)
	}
	for _, sc := range shipped(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if !measuresTime[sc.Name] {
				t.Parallel()
			}
			b := docker.New(docker.WithBuild(false))
			res, err := harness.Run(ctx, sc, b, harness.Options{Store: store(t), Seed: 1, Progress: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Pass {
				t.Errorf("failed (history in %s):\n%s", res.Dir, joinLines(res.Failures))
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
