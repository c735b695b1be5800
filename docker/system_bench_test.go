package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/system"
)

// The real servers' figures (docs/systems.md, docs/performance.md), each
// on a cluster of its own, three members at the server's defaults. Run
// with `make bench-systems`, under the docker lock where others share the
// engine.

// BenchmarkEtcdFailoverAfterLeaderKill: from the SIGKILL of etcd's leader
// to every live member following a new one that views itself leader, at
// etcd's defaults (heartbeat 100 ms, election timeout T = 1000 ms, drawn
// in [T, 2T) per follower), then the old leader restarted from its data
// directory. Reported against T.
func BenchmarkEtcdFailoverAfterLeaderKill(b *testing.B) {
	benchSystemFailover(b, "etcd", 3)
}

// BenchmarkJetStreamMetaFailover: the same for NATS JetStream's meta
// group, whose election timeout is drawn in 4-9 s (server/raft.go).
func BenchmarkJetStreamMetaFailover(b *testing.B) {
	benchSystemFailover(b, "nats-jetstream", 3)
}

func benchSystemFailover(b *testing.B, name string, n int) {
	be, sys, _ := startSystemBench(b, name, n)
	members := election.FirstIDs(n)
	_, el, err := sys.Timings(nil)
	if err != nil {
		b.Fatal(err)
	}
	var ms []float64
	for b.Loop() {
		var leader, next election.NodeID
		mustAwait(b, be, "one leader", oneLeader(members, &leader))
		t0 := time.Now()
		mustApply(b, be, chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{leader}})
		mustAwait(b, be, "a new leader", oneLeader(members, &next))
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		mustApply(b, be, chaos.Fault{Op: chaos.Restart, Nodes: []election.NodeID{leader}})
		mustAwait(b, be, "the old leader following", func(st chaos.State) bool {
			var l election.NodeID
			return oneLeader(members, &l)(st) && st.Live(leader) && st.Views[leader].Leader == l
		})
	}
	slices.Sort(ms)
	b.ReportMetric(ms[len(ms)/2], "ms-p50/failover")
	b.ReportMetric(ms[len(ms)-1], "ms-max/failover")
	b.ReportMetric(ms[len(ms)/2]/float64(el.Milliseconds()), "p50/T")
	b.Logf("%s failovers (ms, sorted) %v; election timeout T = %v", name, ms, el)
}

// BenchmarkEtcdProbeCPU: what the probes cost the servers. Three etcd
// members at rest, their containers' CPU (cgroup cpuacct) over a fixed
// window while every member is probed every 20 ms; then over the same
// window once the probes have stopped (the backend closed with Keep: the
// members stay, the followers and probes go); then probed again, by a
// backend attached to the kept cluster as `run --attach` attaches, so
// that what a member does less as it ages since its start is not read as
// the probes' cost. Run it with -benchtime=1x: each iteration is three
// windows.
func BenchmarkEtcdProbeCPU(b *testing.B) {
	const window = 15 * time.Second
	ctx := context.Background()
	for b.Loop() {
		be, _, run := startSystemBench(b, "etcd", 3)
		var leader election.NodeID
		mustAwait(b, be, "one leader", oneLeader(election.FirstIDs(3), &leader))
		cids := memberIDs(b, be)
		time.Sleep(2 * time.Second) // the start's own work done
		before := be.SystemStats().Answers
		probed := cpuOver(b, cids, window)
		probes := be.SystemStats().Answers - before
		be.Keep()
		if err := be.Close(ctx); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second)
		unprobed := cpuOver(b, cids, window)
		again := New(WithImage(testImage), WithBuild(false))
		if _, err := again.Attach(ctx, run, &history.Memory{}); err != nil {
			b.Fatalf("attaching to %s: %v", run, err)
		}
		time.Sleep(time.Second)
		probedAgain := cpuOver(b, cids, window)
		if err := again.Close(ctx); err != nil {
			b.Error(err)
		}
		if _, err := CleanRun(ctx, run, true); err != nil {
			b.Errorf("removing %s: %v", run, err)
		}
		perSec := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / window.Seconds() }
		b.ReportMetric(perSec(probed), "cpu-ms/s-probed")
		b.ReportMetric(perSec(unprobed), "cpu-ms/s-unprobed")
		b.ReportMetric(perSec(probedAgain), "cpu-ms/s-probed-again")
		b.ReportMetric(float64(probes)/window.Seconds(), "answers/s")
	}
}

// startSystemBench starts an n-member cluster of the named built-in
// system at its defaults; the benchmark's end removes it.
func startSystemBench(b *testing.B, name string, n int) (*Backend, *system.System, string) {
	b.Helper()
	dockertest.Require(b)
	if buildErr != nil {
		b.Fatalf("building %s: %v", testImage, buildErr)
	}
	sys, err := system.Lookup(name, "")
	if err != nil {
		b.Fatal(err)
	}
	run := fmt.Sprintf("dt-bench-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano()%1e6)
	s := spec(run, n)
	s.Algorithm, s.System = sys.Name, sys
	be := New(WithImage(testImage), WithBuild(false))
	b.Cleanup(func() {
		be.Close(context.Background())
		CleanRun(context.Background(), run, true)
	})
	if err := be.Start(context.Background(), s, &history.Memory{}); err != nil {
		b.Fatalf("starting %s: %v", name, err)
	}
	return be, sys, run
}

// memberIDs are the member containers' full IDs.
func memberIDs(b *testing.B, be *Backend) []string {
	be.mu.Lock()
	defer be.mu.Unlock()
	var out []string
	for _, n := range be.nodes {
		out = append(out, n.cid)
	}
	return out
}

// cpuOver is the CPU time the containers used over d: their cgroups'
// cpuacct.usage (cgroup v1, nanoseconds) or cpu.stat usage_usec (v2),
// read before and after.
func cpuOver(b *testing.B, cids []string, d time.Duration) time.Duration {
	b.Helper()
	sum := func() time.Duration {
		var t time.Duration
		for _, id := range cids {
			t += cgroupCPU(b, id)
		}
		return t
	}
	t0 := sum()
	time.Sleep(d)
	return sum() - t0
}

func cgroupCPU(b *testing.B, cid string) time.Duration {
	v1 := filepath.Join("/sys/fs/cgroup/cpuacct/docker", cid, "cpuacct.usage")
	if raw, err := os.ReadFile(v1); err == nil {
		ns, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", v1, err)
		}
		return time.Duration(ns)
	}
	for _, v2 := range []string{filepath.Join("/sys/fs/cgroup/docker", cid, "cpu.stat"), filepath.Join("/sys/fs/cgroup/system.slice", "docker-"+cid+".scope", "cpu.stat")} {
		raw, err := os.ReadFile(v2)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					b.Fatalf("%s: %v", v2, err)
				}
				return time.Duration(us) * time.Microsecond
			}
		}
	}
	b.Fatalf("container %.12s: no cgroup CPU account found (cgroup v1 %s, or v2 under /sys/fs/cgroup/docker or system.slice): run on the engine's host", cid, v1)
	return 0
}
