package harness_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/watch"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/keptstore"
	"github.com/ringleader-dev/ringleader/internal/rig/rigtest"
	"github.com/ringleader-dev/ringleader/scenario"
)

// TestTwoEngines runs clusters across two engines of one swarm (the
// rig: a second dockerd in a network namespace, made and removed by the
// test, once for both subtests). Needs root and an engine; with CI=true
// their absence fails.
func TestTwoEngines(t *testing.T) {
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
	st := rigtest.Start(t) // the first run loads the image into the second engine (removed with it)
	es, err := engine.ConnectList(ctx, st.First+","+st.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("KillAndPartitionAlongEngines", func(t *testing.T) { twoEnginesScenario(ctx, t, es, image) })
	t.Run("AttachFaultAndWatch", func(t *testing.T) { twoEnginesAttach(ctx, t, es, image) })
}

// twoEnginesScenario runs scenarios/engines/two-engines-quorum.yaml: the
// leader is killed and restarted, the engines are cut apart and healed;
// every expectation and checker passes, the results say which engine
// held each node, and nothing of the run is left on either engine.
func twoEnginesScenario(ctx context.Context, t *testing.T, es []engine.Engine, image string) {
	sc, err := scenario.Load("../scenarios/engines/two-engines-quorum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := docker.New(docker.WithImage(image), docker.WithBuild(false), docker.WithEngines(es), docker.WithProgress(testWriter{t}))
	res, err := harness.Run(ctx, sc, b, harness.Options{Store: keptstore.For(t), Seed: 1, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Errorf("failed (history in %s):\n%s", res.Dir, joinLines(res.Failures))
	}
	want := []harness.EngineResult{{Engine: es[0].Host, Nodes: []election.NodeID{1, 3, 5}}, {Engine: es[1].Host, Nodes: []election.NodeID{2, 4}}}
	if !slices.EqualFunc(res.Engines, want, func(a, b harness.EngineResult) bool { return a.Engine == b.Engine && slices.Equal(a.Nodes, b.Nodes) }) {
		t.Errorf("results say engines %+v, want %+v", res.Engines, want)
	}
	wantNothingLeft(ctx, t, es, b.Run())
}

func wantNothingLeft(ctx context.Context, t *testing.T, es []engine.Engine, run string) {
	t.Helper()
	for _, e := range es {
		left, err := docker.LeftoversOn(ctx, e, run, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("run %s left %v on %s", run, left, e.Host)
		}
	}
}

// twoEnginesAttach: a cluster across both engines (five quorum Bully
// nodes, 1,3,5 on the first, 2,4 on the second) is adopted by a second
// backend WithEngines, as `ringleader fault --engines` does. It finds
// every node on its engine; `partition engines` cuts 2,4 from 1,3,5 (the
// minority loses its leader, the majority keeps 5); after heal, a kill of
// node 4, on the second engine, stops its container there. The attached
// history holds both faults and every node's views; watch, following
// both engines, shows each node's engine and node 4 down. Detaching
// leaves the cluster running.
func twoEnginesAttach(ctx context.Context, t *testing.T, es []engine.Engine, image string) {
	members := election.FirstIDs(5)
	owner := docker.New(docker.WithImage(image), docker.WithBuild(false), docker.WithEngines(es), docker.WithProgress(testWriter{t}))
	t.Cleanup(func() {
		if err := owner.Close(context.Background()); err != nil {
			t.Error(err)
		}
		wantNothingLeft(context.Background(), t, es, owner.Run())
	})
	spec := chaos.ClusterSpec{Name: fmt.Sprintf("attach-engines-%06x", rand.Uint32()&0xffffff), Algorithm: "bully", Quorum: election.Majority, Members: members}
	if err := owner.Start(ctx, spec, nil); err != nil {
		t.Fatal(err)
	}

	a := docker.New(docker.WithBuild(false), docker.WithEngines(es), docker.WithProgress(testWriter{t}))
	mem := &history.Memory{}
	got, err := a.Attach(ctx, owner.Run(), mem)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Members, members) || got.Quorum != election.Majority {
		t.Fatalf("attached to %+v, want members %v, quorum majority", got, members)
	}
	hosts, pl := a.Placement()
	wantPl := chaos.Placement{{1, 3, 5}, {2, 4}}
	if !slices.Equal(hosts, []string{es[0].Host, es[1].Host}) || pl.String() != wantPl.String() {
		t.Fatalf("attached placement %v on %v, want %v on %s, %s", pl, hosts, wantPl, es[0].Host, es[1].Host)
	}
	cluster := scenario.Cluster{Algorithm: got.Algorithm, IDs: got.Members, Quorum: got.Quorum, Options: got.Options, Timing: got.Timing}
	p := harness.NewPlayer(a, cluster, 1)
	play := func(words ...string) {
		t.Helper()
		step, err := scenario.ParseWords(words, members)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Play(ctx, step, &harness.StepResult{}); err != nil {
			t.Fatalf("%s: %v", strings.Join(words, " "), err)
		}
	}
	awaitState := func(what string, cond func(chaos.State) bool) {
		t.Helper()
		ok, err := a.Await(ctx, 30*time.Second, cond)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("not within 30 s: %s; state: %s", what, a.State().Describe(members))
		}
	}
	leads := func(s chaos.State, nodes []election.NodeID, leader election.NodeID) bool {
		for _, id := range nodes {
			if v, ok := s.Views[id]; !ok || !s.Up[id] || v.Leader != leader {
				return false
			}
		}
		return true
	}
	awaitState("all five follow 5", func(s chaos.State) bool { return leads(s, members, 5) })

	play("partition", "engines")
	st := a.State()
	for _, l := range [][2]election.NodeID{{1, 2}, {2, 1}, {5, 4}, {4, 3}} {
		if !st.Cut[l] {
			t.Errorf("after partition engines, %d→%d is not cut: %v", l[0], l[1], st.Cut)
		}
	}
	if st.Cut[[2]election.NodeID{1, 3}] || st.Cut[[2]election.NodeID{2, 4}] {
		t.Errorf("partition engines cut within an engine: %v", st.Cut)
	}
	awaitState("2 and 4 without a leader, 1, 3, 5 still on 5", func(s chaos.State) bool {
		return leads(s, []election.NodeID{1, 3, 5}, 5) && leads(s, []election.NodeID{2, 4}, election.None)
	})
	play("heal")
	awaitState("all five follow 5 after the heal", func(s chaos.State) bool { return leads(s, members, 5) })

	play("kill", "4")
	awaitState("node 4 down", func(s chaos.State) bool { return !s.Up[4] })
	c, err := es[1].Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ContainerInspect(ctx, "rl-"+owner.Run()+"-node4", client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("node 4's container on %s: %v", es[1].Host, err)
	}
	if res.Container.State.Running {
		t.Errorf("node 4's container on %s still runs after the kill", es[1].Host)
	}

	// The attached history: both faults, as carried out, and views of
	// nodes on both engines.
	var faults []string
	viewed := map[election.NodeID]bool{}
	for _, r := range mem.Records() {
		if r.Kind == history.KindFault && r.Fault.Phase == history.FaultOK {
			faults = append(faults, fmt.Sprintf("%s %v %v", r.Fault.Op, r.Fault.Nodes, r.Fault.Groups))
		}
		if r.Kind == history.KindView {
			viewed[r.Node] = true
		}
	}
	wantFaults := []string{"partition [] [[1 3 5] [2 4]]", "heal [] []", "kill [4] []"}
	if !slices.Equal(faults, wantFaults) {
		t.Errorf("attached history's faults %q, want %q", faults, wantFaults)
	}
	for _, id := range members {
		if !viewed[id] {
			t.Errorf("attached history has no view of node %d", id)
		}
	}

	watchShowsEngines(ctx, t, es, owner.Run())

	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !owner.State().Up[1] || !owner.State().Up[2] {
		t.Errorf("after detaching, the owner sees %s, want nodes 1 and 2 still up", owner.State().Describe(members))
	}
}

// watchShowsEngines follows the run on both engines as `ringleader watch
// --engines` does and waits until the board shows every node on its
// engine, and node 4 down.
func watchShowsEngines(ctx context.Context, t *testing.T, es []engine.Engine, run string) {
	t.Helper()
	var srcs []watch.Source
	for _, e := range es {
		c, err := e.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		srcs = append(srcs, watch.Source{Name: e.Host, Engine: c})
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	in := make(chan watch.Input, 256)
	followed := make(chan error, 1)
	go func() { followed <- watch.FollowEngines(wctx, srcs, run, in) }()
	want := map[election.NodeID]string{1: es[0].Host, 2: es[1].Host, 3: es[0].Host, 4: es[1].Host, 5: es[0].Host}
	b := watch.NewBoard(0)
	shows := func() bool {
		st := b.Status(b.Now())
		if len(st) != len(want) {
			return false
		}
		for _, n := range st {
			if n.Engine != want[n.Node] || (n.Node == 4) != (n.State == watch.Down) {
				return false
			}
		}
		return true
	}
	for !shows() {
		select {
		case i := <-in:
			i.Feed(b)
		case err := <-followed:
			t.Fatalf("watch ended: %v; board: %+v", err, b.Status(b.Now()))
		case <-wctx.Done():
			t.Fatalf("watch does not show each node's engine and node 4 down within 30 s: %+v", b.Status(b.Now()))
		}
	}
	cancel()
	<-followed
}
