package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
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
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
	t.Cleanup(cancel)
	if err := docker.BuildImage(ctx, docker.DefaultImage, nil); err != nil {
		t.Fatalf("building the node image: %v", err)
	}
	for _, sc := range shipped(t) {
		t.Run(sc.Name, func(t *testing.T) {
			dockertest.Parallel(t)
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
