package harness_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/reaper"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/internal/rig/rigtest"
	"github.com/ringleader-dev/ringleader/scenario"
)

// TestTwoEnginesKillAndPartitionAlongEngines runs
// scenarios/engines/two-engines-quorum.yaml across two engines of one
// swarm (the rig: a second dockerd in a network namespace, made and
// removed by the test): the leader is killed and restarted, the engines
// are cut apart and healed; every expectation and checker passes, the
// results say which engine held each node, and nothing of the run is left
// on either engine. Needs root and an engine; with CI=true their absence
// fails.
func TestTwoEnginesKillAndPartitionAlongEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a two-engine run takes a minute")
	}
	rigtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Its own tag, not the fixed ones other container tests rebuild;
	// removed from both engines after.
	const image = "ringleader-node:engines-test"
	if err := docker.BuildImage(ctx, image, nil); err != nil {
		t.Fatalf("building the node image: %v", err)
	}
	t.Cleanup(func() {
		if e, err := engine.Resolve(); err == nil {
			if c, err := e.Client(); err == nil {
				_, _ = c.ImageRemove(context.Background(), image, client.ImageRemoveOptions{PruneChildren: true})
				c.Close()
			}
		}
	})
	st := rigtest.Start(t) // the run itself loads the image into the second engine (removed with it)
	es, err := engine.ConnectList(ctx, st.First+","+st.Second)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load("../scenarios/engines/two-engines-quorum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := docker.New(docker.WithImage(image), docker.WithBuild(false), docker.WithEngines(es))
	res, err := harness.Run(ctx, sc, b, harness.Options{Store: store(t), Seed: 1, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Errorf("failed (history in %s):\n%s", res.Dir, joinLines(res.Failures))
	}
	want := []harness.EngineResult{{Engine: st.First, Nodes: []election.NodeID{1, 3, 5}}, {Engine: st.Second, Nodes: []election.NodeID{2, 4}}}
	if !slices.EqualFunc(res.Engines, want, func(a, b harness.EngineResult) bool { return a.Engine == b.Engine && slices.Equal(a.Nodes, b.Nodes) }) {
		t.Errorf("results say engines %+v, want %+v", res.Engines, want)
	}
	for _, e := range es {
		c, err := e.Client()
		if err != nil {
			t.Fatal(err)
		}
		left, err := reaper.Left(ctx, c, b.Run())
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("run %s left %v on %s", b.Run(), left, e.Host)
		}
	}
}
