package docker

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// testImage is a tag of its own, so these tests never move the tag other
// tools (compose, make images) use.
const testImage = "ringleader-node:chaos-test"

// childEnv makes the test binary a child that starts a cluster, says READY
// and waits for SIGINT (TestInterruptedRunLeavesNothing).
const childEnv = "RINGLEADER_DOCKER_TEST_CHILD"

// childNoReaperEnv makes that child start its cluster without a reaper,
// so that its run outlives it when it is killed.
const childNoReaperEnv = "RINGLEADER_DOCKER_TEST_CHILD_NO_REAPER"

var buildErr error

func TestMain(m *testing.M) {
	if run := os.Getenv(childEnv); run != "" {
		os.Exit(child(run))
	}
	flag.Parse() // dockertest.Available honours -short
	if dockertest.Available() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		buildErr = BuildImage(ctx, testImage, nil)
		cancel()
	}
	code := m.Run()
	closeBenchCluster()
	os.Exit(code)
}

// child is the interrupted run: the pattern the CLI and harness follow
// (Close on SIGINT).
func child(run string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b := New(WithImage(testImage), WithBuild(false), WithReaper(os.Getenv(childNoReaperEnv) == ""))
	err := b.Start(ctx, spec(run, 3), &history.Memory{})
	if err == nil {
		fmt.Println("READY")
		<-ctx.Done()
	}
	if cerr := b.Close(context.Background()); cerr != nil {
		fmt.Fprintln(os.Stderr, cerr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func spec(run string, n int) chaos.ClusterSpec {
	s := chaos.ClusterSpec{Name: run, Algorithm: "bully", Seed: 1}
	for i := 1; i <= n; i++ {
		s.Members = append(s.Members, election.NodeID(i))
	}
	return s
}

// runID is unique per test and process, so runs never collide with other
// tests, other processes or compose (run=compose).
func runID(t *testing.T) string {
	name := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	if len(name) > 20 {
		name = name[:20]
	}
	return fmt.Sprintf("dt-%s-%d", name, os.Getpid())
}

// startCluster starts an n-node bully cluster and registers its Close,
// followed by the check that nothing labelled with the run remains.
func startCluster(t *testing.T, n int) (*Backend, *history.Memory) {
	t.Helper()
	return startSpec(t, func(run string) chaos.ClusterSpec { return spec(run, n) })
}

// startSpec is startCluster for the cluster specOf(run) describes.
func startSpec(t *testing.T, specOf func(run string) chaos.ClusterSpec) (*Backend, *history.Memory) {
	t.Helper()
	dockertest.Require(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	run := runID(t)
	b := New(WithImage(testImage), WithBuild(false), WithProgress(testWriter{t}))
	mem := &history.Memory{}
	ctx := context.Background()
	t.Cleanup(func() {
		if err := b.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		left, err := Leftovers(ctx, run)
		if err != nil {
			t.Errorf("list leftovers: %v", err)
		}
		if len(left) > 0 {
			t.Errorf("after Close, still labelled with run %s: %v", run, left)
		}
	})
	if err := b.Start(ctx, specOf(run), mem); err != nil {
		t.Fatalf("start: %v", err)
	}
	invoked(t, time.Now())
	return b, mem
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func ids(l ...int) []election.NodeID {
	out := make([]election.NodeID, len(l))
	for i, x := range l {
		out[i] = election.NodeID(x)
	}
	return out
}

// allSee holds when every node in nodes is live and views leader.
func allSee(nodes []election.NodeID, leader election.NodeID) func(chaos.State) bool {
	return func(st chaos.State) bool {
		for _, id := range nodes {
			if v, ok := st.Views[id]; !ok || !st.Live(id) || v.Leader != leader {
				return false
			}
		}
		return true
	}
}

const settle = 30 * time.Second // generous bound on a 2-core machine; never a timing assertion

// await waits for cond and logs how long it took since the fault before it
// was invoked (the figure docs/chaos.md quotes).
func await(t *testing.T, b *Backend, what string, cond func(chaos.State) bool) time.Duration {
	t.Helper()
	t0 := lastInvoke(t)
	ok, err := b.Await(context.Background(), settle, cond)
	if err != nil {
		t.Fatalf("await %s: %v", what, err)
	}
	if !ok {
		t.Fatalf("%s did not happen within %v; state: views %v up %v paused %v cut %v", what, settle, b.State().Views, b.State().Up, b.State().Paused, b.State().Cut)
	}
	took := time.Since(t0)
	t.Logf("%s: %v after the fault was invoked", what, took.Round(time.Millisecond))
	return took
}

// invokedAt is when each test last called Apply (or started its
// cluster): the tests of this package run side by side.
var invokedAt sync.Map // *testing.T -> time.Time

func invoked(t *testing.T, at time.Time) {
	if _, loaded := invokedAt.Swap(t, at); !loaded {
		t.Cleanup(func() { invokedAt.Delete(t) })
	}
}

// lastInvoke is when t last called Apply or started its cluster (now if
// it did neither).
func lastInvoke(t *testing.T) time.Time {
	if at, ok := invokedAt.Load(t); ok {
		return at.(time.Time)
	}
	return time.Now()
}

func apply(t *testing.T, b *Backend, f chaos.Fault) {
	t.Helper()
	t0 := time.Now()
	invoked(t, t0)
	if err := b.Apply(context.Background(), f, fmt.Sprint(f.Nodes)); err != nil {
		t.Fatalf("apply %s: %v", f.Op, err)
	}
	t.Logf("%s %v %v %v applied in %v", f.Op, f.Nodes, f.Groups, f.Links, time.Since(t0).Round(time.Millisecond))
}

func TestBullyFailsOverOnKillAndPauseAndTheHistoryHasEveryLineOnce(t *testing.T) {
	dockertest.Parallel(t)
	b, mem := startCluster(t, 3)
	await(t, b, "all see leader 3", allSee(ids(1, 2, 3), 3))

	apply(t, b, chaos.Fault{Op: chaos.Kill, Nodes: ids(3)})
	if st := b.State(); st.Up[3] {
		t.Fatalf("node 3 is Up after kill")
	}
	await(t, b, "kill 3 -> 1 and 2 see leader 2", allSee(ids(1, 2), 2))

	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: ids(3)})
	await(t, b, "restart 3 -> all see leader 3", allSee(ids(1, 2, 3), 3))

	apply(t, b, chaos.Fault{Op: chaos.Pause, Nodes: ids(3)})
	if st := b.State(); !st.Up[3] || !st.Paused[3] {
		t.Fatalf("after pause node 3 is up=%v paused=%v, want both", st.Up[3], st.Paused[3])
	}
	await(t, b, "pause 3 -> 1 and 2 see leader 2", allSee(ids(1, 2), 2))
	apply(t, b, chaos.Fault{Op: chaos.Resume, Nodes: ids(3)})
	await(t, b, "resume 3 -> all see leader 3", allSee(ids(1, 2, 3), 3))

	// Node 1 dies behind the backend's back (as a crash would): State
	// notices, and restart brings it back.
	b.mu.Lock()
	n1 := b.nodes[1]
	b.mu.Unlock()
	if _, err := b.cli.ContainerKill(context.Background(), n1.cid, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		t.Fatal(err)
	}
	await(t, b, "node 1 dies on its own -> State says down", func(st chaos.State) bool { return !st.Up[1] })
	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: ids(1)})
	await(t, b, "restart 1 -> all see leader 3", allSee(ids(1, 2, 3), 3))

	checkHistory(t, mem.Records(), map[election.NodeID]int{1: 2, 2: 1, 3: 2})
	if g := b.Gaps(); g != 0 {
		t.Errorf("the followers noticed %d log gaps", g)
	}
	checkFaultRecords(t, mem.Records(), []chaos.Op{chaos.Kill, chaos.Restart, chaos.Pause, chaos.Resume, chaos.Restart})
}

// checkHistory asserts every node record appears once, each boot's seqs run
// 1, 2, 3, ... without a hole, and each node booted as often as wantBoots.
func checkHistory(t *testing.T, recs []history.Record, wantBoots map[election.NodeID]int) {
	t.Helper()
	type key struct {
		node election.NodeID
		boot string
	}
	next := map[key]uint64{}
	boots := map[election.NodeID][]string{}
	for _, r := range recs {
		if r.Process != "node" || r.Kind == history.KindMark {
			continue
		}
		k := key{r.Node, r.Boot}
		if _, ok := next[k]; !ok {
			next[k] = 1
			boots[r.Node] = append(boots[r.Node], r.Boot)
			if r.Kind != history.KindBoot {
				t.Errorf("node %d boot %s: first record is %s, want boot", r.Node, r.Boot, r.Kind)
			}
		}
		if r.Seq != next[k] {
			t.Fatalf("node %d boot %s: record seq %d, want %d (a duplicate or a gap)", r.Node, r.Boot, r.Seq, next[k])
		}
		next[k]++
	}
	for id, n := range wantBoots {
		if len(boots[id]) != n {
			t.Errorf("node %d: %d boots in the history, want %d", id, len(boots[id]), n)
		}
	}
}

func checkFaultRecords(t *testing.T, recs []history.Record, ops []chaos.Op) {
	t.Helper()
	var got []string
	for _, r := range recs {
		if r.Kind == history.KindFault {
			got = append(got, r.Fault.Op+":"+string(r.Fault.Phase))
		}
	}
	var want []string
	for _, op := range ops {
		want = append(want, string(op)+":invoke", string(op)+":ok")
	}
	if !slices.Equal(got, want) {
		t.Errorf("fault records %v, want %v", got, want)
	}
}

// readRules runs `ringleader netfilter show` in node id's namespace, a
// helper container whichever way the backend wrote the rules.
func readRules(t *testing.T, b *Backend, id election.NodeID) netfilter.Rules {
	t.Helper()
	b.mu.Lock()
	n := b.nodes[id]
	b.mu.Unlock()
	r, err := b.helperRules(context.Background(), n)
	if err != nil {
		t.Fatalf("show rules of node %d: %v", id, err)
	}
	return r
}

func TestPartitionWithoutQuorumSplitsBrainAndNetworkFaultsHeal(t *testing.T) {
	dockertest.Parallel(t)
	b, mem := startCluster(t, 5)
	all := ids(1, 2, 3, 4, 5)
	await(t, b, "all see leader 5", allSee(all, 5))

	apply(t, b, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{ids(1, 2, 3), ids(4, 5)}})
	if st := b.State(); st.Reachable(1, 4) || st.Reachable(5, 3) || !st.Reachable(1, 2) || !st.Reachable(4, 5) {
		t.Fatalf("State.Cut after partition {1,2,3}|{4,5}: %v", st.Cut)
	}
	await(t, b, "split brain: 3 leads {1,2,3} while 5 leads {4,5}", func(st chaos.State) bool {
		return allSee(ids(1, 2, 3), 3)(st) && allSee(ids(4, 5), 5)(st) &&
			st.Views[3].Role == election.Leader && st.Views[5].Role == election.Leader
	})
	// A restarted node gets a new namespace; the cut comes back with it.
	apply(t, b, chaos.Fault{Op: chaos.Kill, Nodes: ids(4)})
	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: ids(4)})
	if r := readRules(t, b, 4); len(r.DropOut) != 3 {
		t.Errorf("after restart inside the partition node 4 holds %v, want drops to 1, 2 and 3", r)
	}
	await(t, b, "restart 4 inside the partition -> 4 and 5 see 5, 1..3 see 3", func(st chaos.State) bool {
		return allSee(ids(1, 2, 3), 3)(st) && allSee(ids(4, 5), 5)(st)
	})
	apply(t, b, chaos.Fault{Op: chaos.Heal})
	if st := b.State(); len(st.Cut) != 0 {
		t.Fatalf("State.Cut after heal: %v", st.Cut)
	}
	await(t, b, "heal -> one leader, 5", allSee(all, 5))

	// One-way: 5's packets to everyone else vanish; 5 keeps running.
	apply(t, b, chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{5, 1}, {5, 2}, {5, 3}, {5, 4}}})
	if st := b.State(); st.Reachable(5, 1) || !st.Reachable(1, 5) {
		t.Fatalf("State after one-way cut 5->others: cut %v", st.Cut)
	}
	// A one-way cut is no netfilter rule (a TCP route would stall both
	// ways) but each receiver's drop set, which the node carries out.
	for _, id := range all {
		if r := readRules(t, b, id); !r.Empty() {
			t.Errorf("one-way cut from 5 put rules into node %d's namespace: %v", id, r)
		}
	}
	await(t, b, "one-way cut 5->others -> 1..4 see leader 4 while 5 runs", func(st chaos.State) bool {
		return allSee(ids(1, 2, 3, 4), 4)(st) && st.Live(5)
	})
	apply(t, b, chaos.Fault{Op: chaos.Heal})
	await(t, b, "heal -> all see leader 5", allSee(all, 5))

	apply(t, b, chaos.Fault{Op: chaos.Loss, Nodes: ids(2), Params: chaos.ParamsOf(chaos.LossPercent.Of(0.3))})
	if r := readRules(t, b, 2); r.LossPercent != 30 || len(r.LossPeers) != 4 {
		t.Errorf("loss 0.3 on node 2: its namespace holds %v, want 30%% to/from its 4 peers", r)
	}
	apply(t, b, chaos.Fault{Op: chaos.Loss, Nodes: ids(5), Params: chaos.ParamsOf(chaos.LossPercent.Of(1))})
	await(t, b, "100% loss at 5 -> 1..4 see leader 4", allSee(ids(1, 2, 3, 4), 4))
	apply(t, b, chaos.Fault{Op: chaos.Heal})
	for _, id := range ids(2, 5) {
		if r := readRules(t, b, id); !r.Empty() {
			t.Errorf("after heal node %d still holds %v", id, r)
		}
	}
	await(t, b, "heal -> all see leader 5", allSee(all, 5))

	// Held far longer than the suspicion timeout, 5's heartbeats come
	// too late: the others elect 4 although no packet is lost.
	apply(t, b, chaos.Fault{Op: chaos.Delay, Nodes: ids(5), Params: chaos.ParamsOf(chaos.DelayMS.OfDur(2*time.Second), chaos.DelayJitter.OfDur(100*time.Millisecond))})
	if r := readRules(t, b, 5); len(r.QueuePeers) != 4 || r.Queue != 5 {
		t.Errorf("delay on node 5: its namespace holds %v, want its 4 peers queued to queue 5", r)
	}
	await(t, b, "delay 2s at 5 -> 1..4 see leader 4", allSee(ids(1, 2, 3, 4), 4))
	apply(t, b, chaos.Fault{Op: chaos.Kill, Nodes: ids(5)})
	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: ids(5)})
	if r := readRules(t, b, 5); len(r.QueuePeers) != 4 {
		t.Errorf("after restart the delayed node 5 holds %v, want its 4 peers queued", r)
	}
	apply(t, b, chaos.Fault{Op: chaos.Heal})
	if r := readRules(t, b, 5); !r.Empty() {
		t.Errorf("after heal node 5 still holds %v", r)
	}
	await(t, b, "heal -> all see leader 5", allSee(all, 5))
	checkHistory(t, mem.Records(), map[election.NodeID]int{1: 1, 2: 1, 3: 1, 4: 2, 5: 2})
}

func TestInterruptedRunLeavesNothing(t *testing.T) {
	dockertest.Parallel(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	run := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := startChildRun(ctx, t, run)
	left, err := Leftovers(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) < 8 {
		t.Fatalf("child's run %s has %v, want 3 node containers, their 3 state volumes, a network and the reaper", run, left)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child after SIGINT: %v", err)
	}
	left, err = Leftovers(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("after SIGINT the run left %v", left)
	}
}

// startChildRun starts this test binary as a child that starts a cluster
// of run (childEnv; env adds to its environment) and returns once the
// child says READY. Cleanup kills the child if it still runs and removes
// what the run left.
func startChildRun(ctx context.Context, t *testing.T, run string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+run), env...)
	cmd.Stderr = testWriter{t}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // not waited for by the test
			cmd.Process.Kill()
			cmd.Wait()
		}
		CleanRun(context.Background(), run, true)
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "READY" {
			return cmd
		}
	}
	t.Fatalf("the child never started its cluster")
	return nil
}

// TestCleanLeavesARunALiveProcessOwns starts a run in another process
// (without a reaper, so that only the owner label tells it is alive):
// clean leaves it and names the owner; once that process is killed, the
// same clean removes it.
func TestCleanLeavesARunALiveProcessOwns(t *testing.T) {
	dockertest.Parallel(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	run := runID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := startChildRun(ctx, t, run, childNoReaperEnv+"=1")
	c, err := CleanRun(ctx, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() > 0 || !strings.Contains(c.LiveRuns[run], fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Fatalf("clean of a live run: removed %v, live %v; want nothing removed and the run left naming process %d", c.Lines(), c.LiveRuns, cmd.Process.Pid)
	}
	if left, _ := Leftovers(ctx, run); len(left) != 7 {
		t.Fatalf("the live run has %v, want 3 nodes, their 3 volumes and the network", left)
	}

	cmd.Process.Kill()
	cmd.Wait()
	c, err = CleanRun(ctx, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LiveRuns) > 0 || len(c.Containers) != 3 || len(c.Networks) != 1 || len(c.Volumes) != 3 {
		t.Errorf("clean after its owner died: removed %v, live %v; want 3 containers, 3 volumes, 1 network", c.Lines(), c.LiveRuns)
	}
	if left, _ := Leftovers(ctx, run); len(left) > 0 {
		t.Errorf("after clean: %v", left)
	}
}

func TestCleanRunRemovesOnlyThatRun(t *testing.T) {
	dockertest.Parallel(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	ctx := context.Background()
	// A Backend that dies without Close: its run is found by label.
	run := runID(t)
	b := New(WithImage(testImage), WithBuild(false))
	if err := b.Start(ctx, spec(run, 1), &history.Memory{}); err != nil {
		b.Close(ctx)
		t.Fatal(err)
	}
	other := New(WithImage(testImage), WithBuild(false))
	if err := other.Start(ctx, spec(run+"-other", 1), &history.Memory{}); err != nil {
		b.Close(ctx)
		other.Close(ctx)
		t.Fatal(err)
	}
	defer other.Close(ctx)
	b.cancel() // the followers go as they would with the process
	// This process made both runs and is alive: only force takes one.
	rm, err := CleanRun(ctx, run, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Containers) != 2 || len(rm.Networks) != 1 || len(rm.Volumes) != 1 {
		t.Errorf("CleanRun removed %v, want the node and the reaper, the node's state volume and one network", rm.Lines())
	}
	if left, _ := Leftovers(ctx, run); len(left) > 0 {
		t.Errorf("after CleanRun: %v", left)
	}
	if left, _ := Leftovers(ctx, run+"-other"); len(left) != 4 {
		t.Errorf("CleanRun(%s) touched another run: it has %v", run, left)
	}
	b.Close(ctx) // idempotent over what is gone
}

// TestFailedStartLeavesNothing starts nodes that exit at once (an image
// whose entrypoint is an unknown subcommand): Start fails waiting for
// event=boot, and Close still removes every container and the network.
func TestFailedStartLeavesNothing(t *testing.T) {
	dockertest.Parallel(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	ctx := context.Background()
	broken := "ringleader-node:chaos-test-broken"
	cli, err := newClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	df := t.TempDir() + "/Dockerfile"
	if err := os.WriteFile(df, []byte("FROM "+testImage+"\nENTRYPOINT [\"/ringleader\", \"no-such-command\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := tarFiles(map[string]string{"Dockerfile": df})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cli.ImageBuild(ctx, tr, client.ImageBuildOptions{Tags: []string{broken}, Labels: map[string]string{LabelProject: Project}, Remove: true, Version: build.BuilderV1})
	if err != nil {
		t.Fatal(err)
	}
	err = readBuildStream(res.Body, io.Discard)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(ctx, broken, client.ImageRemoveOptions{Force: true}) })

	run := runID(t)
	b := New(WithImage(broken), WithBuild(false), WithBootTimeout(3*time.Second))
	err = b.Start(ctx, spec(run, 2), &history.Memory{})
	if err == nil || !strings.Contains(err.Error(), "event=boot") {
		t.Errorf("Start with nodes that never boot: err = %v, want one naming event=boot", err)
	}
	if left, _ := Leftovers(ctx, run); len(left) != 6 {
		t.Errorf("before Close the failed run has %v, want 2 containers, their 2 state volumes, a network and the reaper", left)
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("second close: %v", err)
	}
	if left, _ := Leftovers(ctx, run); len(left) > 0 {
		t.Errorf("after Close the failed run left %v", left)
	}
	if err := b.Apply(ctx, chaos.Fault{Op: chaos.Kill, Nodes: ids(1)}, "1"); err == nil {
		t.Errorf("Apply after Close succeeded")
	}
}
