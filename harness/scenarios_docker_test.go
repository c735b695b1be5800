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
			if reason, ok := raceTheFirstElection[sc.Name]; ok {
				t.Parallel()
				t.Log("alone: " + reason)
				dockertest.Alone(t)
			} else {
				dockertest.Parallel(t)
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

// raceTheFirstElection are the shipped scenarios whose premise is set up
// by steps that race the cluster's first election: raft-deaf-node's node 1
// is to be deaf "from the start", but its four one-way cuts are four
// steps, each a round trip over the control channel, taken once every node
// has booted. Should 1 time out first and collect its votes before the
// cuts are in place, it leads (and, without check-quorum, stays leader
// with the term at 1; with it, steps down while 2–5 still follow it), and
// the scenario fails. With four scenarios at once on a loaded two-core
// machine each cut took 0.1–0.4 s and raft-deaf-node's first leader (4)
// was elected before the third cut landed; with six at once node 1 won in
// both. So they run alone, which keeps the window as narrow as it was when
// every scenario ran alone, until a one-way cut of several links is one
// step, or the cuts can be in place before the nodes boot.
//
// raft-partial-connectivity's partition is its first step too: should 4
// (or 5) win the first election before it lands, the cut makes it step
// down while 1–3 follow it, and "1–3 agree for 4 s" breaks (seen once in
// a full make test here, 4 leading, broken 261 ms into the 4 s).
var raceTheFirstElection = map[string]string{
	"raft-deaf-node":            "its four one-way cuts race the first election",
	"raft-deaf-node-no-options": "its four one-way cuts race the first election",
	"raft-partial-connectivity": "its partition races the first election",
}
