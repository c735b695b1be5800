package docker

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestAttachSeesTheRunningClusterAndLeavesIt: a second backend attaches to
// a running cluster by its run label; it finds the cluster's shape, every
// view and the cuts in force; a fault it applies is in the owner's view of
// the world too; and closing it leaves the cluster running.
func TestAttachSeesTheRunningClusterAndLeavesIt(t *testing.T) {
	dockertest.Parallel(t)
	owner, _ := startCluster(t, 3)
	await(t, owner, "all on 3", allSee(ids(1, 2, 3), 3))
	apply(t, owner, chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}}})
	apply(t, owner, chaos.Fault{Op: chaos.Loss, Nodes: ids(1), Params: chaos.ParamsOf(chaos.LossPercent.Of(0.2))})
	apply(t, owner, chaos.Fault{Op: chaos.Delay, Nodes: ids(2), Params: chaos.ParamsOf(chaos.DelayMS.OfDur(20*time.Millisecond), chaos.DelayJitter.OfDur(5*time.Millisecond))})
	apply(t, owner, chaos.Fault{Op: chaos.Clock, Nodes: ids(2), Params: chaos.ParamsOf(chaos.ClockRate.Of(0.5))})
	apply(t, owner, chaos.Fault{Op: chaos.Clock, Nodes: ids(2), Params: chaos.ParamsOf(chaos.ClockJump.OfDur(300 * time.Millisecond))})

	a := New(WithBuild(false), WithProgress(testWriter{t}))
	mem := &history.Memory{}
	got, err := a.Attach(context.Background(), owner.Run(), mem)
	if err != nil {
		t.Fatal(err)
	}
	want := spec(owner.Run(), 3)
	if why := chaos.ShapeMismatch(got, want); why != "" || got.Name != owner.Run() {
		t.Fatalf("attached to %+v, want the shape of %+v: %s", got, want, why)
	}
	st := a.State()
	if !st.Cut[[2]election.NodeID{1, 3}] || st.Cut[[2]election.NodeID{3, 1}] {
		t.Errorf("attached backend reads cuts %v, want exactly 1→3", st.Cut)
	}
	if !maps.Equal(st.Clocks, owner.State().Clocks) || st.ClockOf(2) != (chaos.Skew{Rate: 0.5, Jumped: 300 * time.Millisecond}) {
		t.Errorf("attached backend reads clocks %v, the owner holds %v", st.Clocks, owner.State().Clocks)
	}
	if !maps.EqualFunc(st.Net, owner.State().Net, chaos.Params.Equal) || len(st.Net) != 2 {
		t.Errorf("attached backend reads per-node faults %v, the owner holds %v", st.Net, owner.State().Net)
	}
	// Both read a live, faulted cluster at moments of their own; a view
	// may change between the two reads, so await the moment they agree.
	sameViews := func(st chaos.State) bool {
		o := owner.State()
		for _, id := range ids(1, 2, 3) {
			if st.Views[id].Leader != o.Views[id].Leader {
				return false
			}
		}
		return true
	}
	if ok, err := a.Await(context.Background(), 5*time.Second, sameViews); err != nil || !ok {
		st, o := a.State(), owner.State()
		for _, id := range ids(1, 2, 3) {
			if st.Views[id].Leader != o.Views[id].Leader {
				t.Errorf("node %d: attached reads view %v, the owner %v (for 5 s; %v)", id, st.Views[id], o.Views[id], err)
			}
		}
	}
	// The history starts at the attach: one view per node, nothing older.
	recs := mem.Records()
	if len(recs) < 3 || !slices.ContainsFunc(recs, func(r history.Record) bool { return r.Kind == history.KindView && r.Node == 2 }) {
		t.Errorf("history after attach begins %v, want a view record per node", recs)
	}
	for _, r := range recs {
		if r.Kind == history.KindBoot {
			t.Errorf("an attached history holds a boot from before the attach: %+v", r)
		}
	}
	// It begins with the faults in force, so that its replay starts from
	// the world as found.
	tl := check.NewTimeline(recs, ids(1, 2, 3))
	if replayed := tl.StateAt(tl.End); !maps.Equal(replayed.Cut, st.Cut) || !maps.EqualFunc(replayed.Net, st.Net, chaos.Params.Equal) || !maps.Equal(replayed.Clocks, st.Clocks) {
		t.Errorf("the attached history replays to cuts %v, per-node faults %v, clocks %v; the cluster holds %v, %v, %v",
			replayed.Cut, replayed.Net, replayed.Clocks, st.Cut, st.Net, st.Clocks)
	}

	// The attached world is the one faults work on: heal lifts what the
	// owner put in force (the delay helper the attach adopted too).
	if err := a.Apply(context.Background(), chaos.Fault{Op: chaos.Heal}, "all"); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(1, 2, 3) {
		if r := readRules(t, a, id); !r.Empty() {
			t.Errorf("node %d holds %s after the attached heal, want nothing", id, r)
		}
	}
	if err := a.Apply(context.Background(), chaos.Fault{Op: chaos.Kill, Nodes: ids(3)}, "[3]"); err != nil {
		t.Fatal(err)
	}
	await(t, owner, "1 and 2 on 2 after the attached kill", allSee(ids(1, 2), 2))
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if up := owner.State().Up; !up[1] || !up[2] {
		t.Fatalf("closing the attached backend took nodes down: %v", up)
	}
	ok, err := owner.running(context.Background(), owner.nodes[1])
	if err != nil || !ok {
		t.Fatalf("node 1 not running after the attached backend closed: %v %v", ok, err)
	}
}

// TestAttachRefusesWhatIsNotThere: no cluster, no attach, and a message
// that says what to do.
func TestAttachRefusesWhatIsNotThere(t *testing.T) {
	dockertest.Require(t) // starts no cluster: needs neither a slot nor the lock
	if _, err := New(WithBuild(false)).Attach(context.Background(), "no-such-run-"+strings.ToLower(t.Name()), nil); err == nil || !strings.Contains(err.Error(), "no such cluster is running") {
		t.Fatalf("err %v", err)
	}
}

// TestSpecFromEnvReadsTheNodeContract: the cluster's shape comes from one
// node's environment, with the node's defaults where a variable is unset.
func TestSpecFromEnvReadsTheNodeContract(t *testing.T) {
	s, id, err := specFromEnv(map[string]string{
		"RINGLEADER_ID": "2", "RINGLEADER_PEERS": "3=node3,1=node1:6222,2=node2",
		"RINGLEADER_QUORUM": "majority", "RINGLEADER_SUSPICION": "900ms", "RINGLEADER_CLUSTER": "compose",
	})
	if err != nil {
		t.Fatal(err)
	}
	if id != 2 || !slices.Equal(s.Members, ids(3, 1, 2)) || s.Algorithm != "bully" || s.Quorum != election.Majority ||
		s.Name != "compose" || s.Timing.Suspicion != 900*time.Millisecond || s.Timing.Heartbeat != election.DefaultTiming.Heartbeat {
		t.Fatalf("got %+v, node %d", s, id)
	}
	for _, env := range []map[string]string{
		{"RINGLEADER_ID": "x", "RINGLEADER_PEERS": "1=a"},
		{"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "one=a"},
		{"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "1=a", "RINGLEADER_QUORUM": "most"},
		{"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "1=a", "RINGLEADER_OPTIONS": "prevote"},
		{"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "1=a", "RINGLEADER_OPTIONS": "prevote=false"}, // bully takes none
	} {
		if _, _, err := specFromEnv(env); err == nil {
			t.Errorf("%v: accepted", env)
		}
	}
}

// TestDelayHelperCommandIsReadBack: what startDelay writes, adoptDelays
// reads.
func TestDelayHelperCommandIsReadBack(t *testing.T) {
	// The command as the helper container gets it (it once went unread:
	// the container's command begins with the subcommand netfilter).
	b := New(WithBuild(false))
	cmd := b.helperConfig(newNode(3, "node3", "c3", nil), []string{"delay", "--delay", "150ms", "--jitter", "20ms", "--queue-peers", "10.0.0.2", "--queue", "3"}).Config.Cmd
	d, ok := parseDelayArgs(cmd)
	if !ok || d.Delay != 150*time.Millisecond || d.Jitter != 20*time.Millisecond {
		t.Fatalf("got %+v %v", d, ok)
	}
	if _, ok := parseDelayArgs([]string{"netfilter", "apply", "--drop-out", "10.0.0.2"}); ok {
		t.Fatal("an apply helper read as a delay")
	}
}

// TestSpecFromEnvReadsAProgramNode: a node that hosts a program reads no
// algorithm; its quorum defaults to none, as the node's does, and options
// beside a program are a cluster that never booted.
func TestSpecFromEnvReadsAProgramNode(t *testing.T) {
	env := map[string]string{
		"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "1=node1,2=node2", "RINGLEADER_CLUSTER": "compose",
		"RINGLEADER_ALGORITHM": "bully", "RINGLEADER_PROGRAM": "python3  /program/bully.py",
	}
	s, _, err := specFromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Program, []string{"python3", "/program/bully.py"}) || s.Algorithm != "" || s.Quorum != election.NoQuorum || len(s.Options) != 0 {
		t.Fatalf("got %+v; want the program's two words, no algorithm yet, quorum none, no options", s)
	}
	env["RINGLEADER_OPTIONS"] = "prevote=true"
	if _, _, err := specFromEnv(env); err == nil || !strings.Contains(err.Error(), "a program takes no options") {
		t.Fatalf("options beside a program: %v", err)
	}
}

// TestRegisterHostedTakesTheNodesWordForTheProgramTheyRun: a boot line
// about another program, or another quorum mode, than the containers'
// environment says is refused; a matching one registers the program.
func TestRegisterHostedTakesTheNodesWordForTheProgramTheyRun(t *testing.T) {
	spec := chaos.ClusterSpec{Name: "c", Program: []string{"/program/attach-test-prog"}, Quorum: election.NoQuorum}
	pb := history.ProgramBoot{Node: 1, Boot: "b", Quorum: "none", Program: "/program/attach-test-prog", Claims: []election.Property{election.Agreement}}
	name, err := registerHosted("c", "rl-c-node1", spec, pb)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := election.Lookup(name); err != nil || !a.Claim(election.NoQuorum, election.Agreement) {
		t.Fatalf("registered %s: %+v, %v", name, a, err)
	}
	other := pb
	other.Program = "/program/another"
	if _, err := registerHosted("c", "rl-c-node1", spec, other); err == nil || !strings.Contains(err.Error(), `names the program "/program/another"`) {
		t.Errorf("another program: %v", err)
	}
	other = pb
	other.Quorum = "majority"
	if _, err := registerHosted("c", "rl-c-node1", spec, other); err == nil || !strings.Contains(err.Error(), "says quorum majority, its environment none") {
		t.Errorf("another quorum: %v", err)
	}
}
