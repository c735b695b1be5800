package docker

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// One 3-node cluster serves every benchmark; TestMain closes it.
var (
	benchOnce    sync.Once
	benchBackend *Backend
	benchErr     error
)

func benchCluster(b *testing.B) *Backend {
	b.Helper()
	dockertest.Require(b)
	if buildErr != nil {
		b.Fatalf("building %s: %v", testImage, buildErr)
	}
	benchOnce.Do(func() {
		benchBackend = New(WithImage(testImage), WithBuild(false))
		benchErr = benchBackend.Start(context.Background(), spec(fmt.Sprintf("dt-bench-%d", os.Getpid()), 3), &history.Memory{})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBackend
}

func closeBenchCluster() {
	if benchBackend != nil {
		benchBackend.Close(context.Background())
	}
}

func mustAwait(b *testing.B, be *Backend, what string, cond func(chaos.State) bool) {
	b.Helper()
	ok, err := be.Await(context.Background(), settle, cond)
	if err != nil || !ok {
		b.Fatalf("%s did not happen within %v (err %v)", what, settle, err)
	}
}

func mustApply(b *testing.B, be *Backend, f chaos.Fault) time.Duration {
	b.Helper()
	t0 := time.Now()
	if err := be.Apply(context.Background(), f, "bench"); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkKillLeaderFailover: from the SIGKILL of leader 3 to the moment
// nodes 1 and 2 both view 2 (a killed process's kernel closes its routes,
// so this is faster than the suspicion timeout), then 3 comes back.
func BenchmarkKillLeaderFailover(b *testing.B) {
	be := benchCluster(b)
	all := ids(1, 2, 3)
	var total time.Duration
	for b.Loop() {
		mustAwait(b, be, "leader 3", allSee(all, 3))
		t0 := time.Now()
		mustApply(b, be, chaos.Fault{Op: chaos.Kill, Nodes: ids(3)})
		mustAwait(b, be, "leader 2", allSee(ids(1, 2), 2))
		total += time.Since(t0)
		mustApply(b, be, chaos.Fault{Op: chaos.Restart, Nodes: ids(3)})
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/failover")
}

// BenchmarkFaultLatency: how long Apply takes until each fault is in
// effect (the docs quote these). The -helper cases write the same rules
// through helper containers, as a harness out of the engine's sight does
// (WithDirect).
func BenchmarkFaultLatency(b *testing.B) {
	be := benchCluster(b)
	for _, tc := range []struct {
		name     string
		do, undo chaos.Fault
		helper   bool
	}{
		{"pause", chaos.Fault{Op: chaos.Pause, Nodes: ids(1)}, chaos.Fault{Op: chaos.Resume, Nodes: ids(1)}, false},
		{"kill", chaos.Fault{Op: chaos.Kill, Nodes: ids(1)}, chaos.Fault{Op: chaos.Restart, Nodes: ids(1)}, false},
		{"partition-one-way", chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 2}}}, chaos.Fault{Op: chaos.Heal}, false},
		{"partition-halves", chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{ids(1), ids(2, 3)}}, chaos.Fault{Op: chaos.Heal}, false},
		{"partition-halves-helper", chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{ids(1), ids(2, 3)}}, chaos.Fault{Op: chaos.Heal}, true},
		{"loss", chaos.Fault{Op: chaos.Loss, Nodes: ids(1), Params: chaos.ParamsOf(chaos.LossPercent.Of(0.1))}, chaos.Fault{Op: chaos.Heal}, false},
		{"loss-helper", chaos.Fault{Op: chaos.Loss, Nodes: ids(1), Params: chaos.ParamsOf(chaos.LossPercent.Of(0.1))}, chaos.Fault{Op: chaos.Heal}, true},
		{"delay", chaos.Fault{Op: chaos.Delay, Nodes: ids(1), Params: chaos.ParamsOf(chaos.DelayMS.OfDur(10 * time.Millisecond))}, chaos.Fault{Op: chaos.Heal}, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			be.cfg.direct = !tc.helper
			defer func() { be.cfg.direct = true }()
			var do, undo time.Duration
			for b.Loop() {
				do += mustApply(b, be, tc.do)
				undo += mustApply(b, be, tc.undo)
			}
			b.ReportMetric(float64(do.Microseconds())/1e3/float64(b.N), "ms/apply")
			b.ReportMetric(float64(undo.Microseconds())/1e3/float64(b.N), "ms/undo")
			b.ReportMetric(0, "ns/op")
		})
	}
}
