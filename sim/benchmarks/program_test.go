package benchmarks

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/program"
)

// BenchmarkExploreGoProgram5 is the explorer on examples/bully-go over the
// pipe, five nodes, as `sim explore --program` runs it (workers pinned):
// what a program's exchanges cost a whole exploration
// (docs/performance.md, programs over the pipe). Goal (issue 29): 150
// schedules a second.
func BenchmarkExploreGoProgram5(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "bully-go")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/bully-go").CombinedOutput(); err != nil {
		b.Fatalf("build examples/bully-go: %v\n%s", err, out)
	}
	benchProgram(b, []string{bin})
}

// BenchmarkExplorePythonProgram5 is the same on examples/bully-python.
// Goal (issue 29): 50 schedules a second.
func BenchmarkExplorePythonProgram5(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3")
	}
	benchProgram(b, []string{py, "../../examples/bully-python/bully.py"})
}

func benchProgram(b *testing.B, argv []string) {
	b.Cleanup(program.CloseAll)
	members := []election.NodeID{1, 2, 3, 4, 5}
	name, err := program.Register(argv, election.NoQuorum, members, election.Timing{}, program.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const per = 50
	// One exploration first, so that the processes are started (and an
	// interpreter loaded) before the clock runs, as in a long run.
	if _, err := explore.Run(explore.Options{Algorithm: name, N: 5, Schedules: 4, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := explore.Run(explore.Options{Algorithm: name, N: 5, Schedules: per, Seed: int64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed() {
			b.Fatalf("%d schedules failed: the example should pass", res.FailedSchedules)
		}
	}
	b.ReportMetric(float64(per*b.N)/time.Since(start).Seconds(), "schedules/s")
}
