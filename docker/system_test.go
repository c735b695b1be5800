package docker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/system"
)

// startEtcd starts an n-member etcd cluster (its image built from
// system/etcd/build when its source changed) with the given options.
func startEtcd(t *testing.T, n int, opts election.Options) (*Backend, *history.Memory, *system.System) {
	t.Helper()
	sys, err := system.Lookup("etcd", "")
	if err != nil {
		t.Fatal(err)
	}
	b, mem := startSpec(t, func(run string) chaos.ClusterSpec {
		s := spec(run, n)
		s.Algorithm, s.System, s.SystemOptions = sys.Name, sys, opts
		return s
	})
	return b, mem, sys
}

// oneLeader holds when every live member views one same leader that is
// live and views itself as leader; it returns that leader through *got.
func oneLeader(members []election.NodeID, got *election.NodeID) func(chaos.State) bool {
	return func(st chaos.State) bool {
		var l election.NodeID
		for _, m := range members {
			if !st.Live(m) {
				continue
			}
			v, ok := st.Views[m]
			if !ok || v.Leader == election.None || (l != election.None && v.Leader != l) {
				return false
			}
			l = v.Leader
		}
		if l == election.None || !st.Live(l) || st.Views[l].Role != election.Leader {
			return false
		}
		*got = l
		return true
	}
}

func judge(recs []history.Record, sys *system.System, members []election.NodeID, opts election.Options) *check.Analysis {
	hb, el, _ := sys.Timings(opts)
	return check.Analyze(recs, check.Options{Algorithm: sys.Algorithm(), Quorum: election.Majority, Members: members,
		Timing: election.Timing{Heartbeat: hb, Suspicion: el, Answer: hb}}, check.Agreement, check.NoSplitBrain, check.EpochSafety, check.Liveness)
}

func TestEtcdElectsAgreesAndFailsOverWhenItsLeaderIsKilled(t *testing.T) {
	dockertest.Parallel(t)
	members := ids(1, 2, 3)
	b, mem, sys := startEtcd(t, 3, nil)
	var leader election.NodeID
	await(t, b, "every member follows one leader", oneLeader(members, &leader))
	apply(t, b, chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{leader}})
	old := leader
	took := await(t, b, "the two others follow a new leader", oneLeader(members, &leader))
	if leader == old {
		t.Fatalf("the killed member %d still leads", old)
	}
	// Restarted from the data directory it kept: the same member (its
	// server ID, which the probe checks, unchanged) rejoins as follower.
	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: []election.NodeID{old}})
	await(t, b, "the restarted member follows", func(st chaos.State) bool {
		var l election.NodeID
		return oneLeader(members, &l)(st) && st.Live(old) && st.Views[old].Leader == l
	})
	if s := b.SystemStats(); s.Refused != 0 || s.Answers == 0 {
		t.Errorf("probe counters %+v: want answers and none refused", s)
	}
	an := judge(mem.Records(), sys, members, nil)
	for _, v := range an.Verdicts {
		if !v.Pass && v.Checker != check.NoSplitBrain {
			t.Errorf("%s: %s", v.Checker, v.Summary)
		}
	}
	if len(an.Failovers) == 0 || !an.Failovers[0].Recovered {
		t.Fatalf("no failover measured: %+v", an.Failovers)
	}
	f := an.Failovers[0]
	t.Logf("etcd failover after killing leader %d (defaults: election timeout 1000 ms): %v measured, %v until the probes saw it", old, f.Duration, took)
	if f.Duration < 500*1e6 {
		t.Errorf("failover in %v: faster than half etcd's election timeout, which raft cannot do", f.Duration)
	}
}

func TestSystemMemberBehindFullLossIsStillProbed(t *testing.T) {
	dockertest.Parallel(t)
	members := ids(1, 2, 3)
	b, mem, _ := startEtcd(t, 3, election.Options{"election_ms": "500"})
	var leader election.NodeID
	await(t, b, "every member follows one leader", oneLeader(members, &leader))
	follower := members[0]
	if follower == leader {
		follower = members[1]
	}
	before := viewsOf(mem.Records(), follower)
	apply(t, b, chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{follower}, Params: chaos.ParamsOf(chaos.LossPercent.Of(1))})
	// Cut off from its peers, the follower loses its leader and says so
	// itself — which the harness can only know because its probes, from
	// the host, pass the loss that stops every packet between members.
	await(t, b, "the lossy follower, still probed, reads its own belief (no leader)", func(st chaos.State) bool {
		v, ok := st.Views[follower]
		return ok && st.Live(follower) && v.Leader == election.None
	})
	if after := viewsOf(mem.Records(), follower); after <= before {
		t.Errorf("no view of member %d recorded behind the loss (%d before, %d after)", follower, before, after)
	}
	// A clock fault is refused, naming why, and changes nothing.
	err := b.Apply(context.Background(), chaos.Fault{Op: chaos.Clock, Nodes: []election.NodeID{leader}, Params: chaos.ParamsOf(chaos.ClockRate.Of(2))}, "leader")
	var unsupported *chaos.UnsupportedError
	if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "vDSO") {
		t.Errorf("clock fault on etcd: want refused naming the vDSO, got %v", err)
	}
	apply(t, b, chaos.Fault{Op: chaos.Heal})
	await(t, b, "after the heal every member follows one leader", oneLeader(members, &leader))
}

func viewsOf(recs []history.Record, id election.NodeID) int {
	n := 0
	for _, r := range recs {
		if r.Kind == history.KindView && r.Node == id {
			n++
		}
	}
	return n
}

// TestAttachToAnEtcdCluster: `ringleader fault` and `run --attach` adopt a
// running system cluster by its run label — its shape read from the
// members' labels, its views from their probes — and faults applied
// through the attached backend act on the servers.
func TestAttachToAnEtcdCluster(t *testing.T) {
	dockertest.Parallel(t)
	members := ids(1, 2, 3)
	owner, _, _ := startEtcd(t, 3, election.Options{"election_ms": "500"})
	var leader election.NodeID
	await(t, owner, "every member follows one leader", oneLeader(members, &leader))

	a := New(WithImage(testImage), WithBuild(false), WithProgress(testWriter{t}))
	mem := &history.Memory{}
	got, err := a.Attach(context.Background(), owner.Run(), mem)
	if err != nil {
		t.Fatal(err)
	}
	if got.System == nil || got.System.Name != "etcd" || got.SystemOptions["election_ms"] != "500" || len(got.Members) != 3 || got.Timing.Suspicion.Milliseconds() != 500 {
		t.Fatalf("attached to %+v", got)
	}
	var seen election.NodeID
	if !oneLeader(members, &seen)(a.State()) || seen != leader {
		t.Fatalf("attached world %s, the owner's leader is %d", a.State().Describe(members), leader)
	}
	for _, r := range mem.Records() {
		if r.Kind == history.KindBoot {
			t.Errorf("an attached history holds a boot from before the attach: %+v", r)
		}
	}
	if err := a.Apply(context.Background(), chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{leader}}, "leader"); err != nil {
		t.Fatal(err)
	}
	old := leader
	await(t, a, "the attached backend sees a new leader", oneLeader(members, &leader))
	if leader == old {
		t.Fatalf("member %d, killed, still leads", old)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	await(t, owner, "the cluster, left running, is seen by its owner with the new leader", func(st chaos.State) bool {
		var l election.NodeID
		return oneLeader(members, &l)(st) && l == leader && !st.Up[old]
	})
}
