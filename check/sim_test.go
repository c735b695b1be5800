package check_test

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// A simulated 5-node Bully without quorum, partitioned {1,2,3}|{4,5} and
// healed: each side elects its own highest ID (agreement and bully-max hold
// per component), the two sides' leaders overlap (split brain, which Bully
// without quorum does not claim to prevent), and after the heal 5 leads all.
func TestSimulatedBullyPartitionSplitsBrainPerComponent(t *testing.T) {
	mem := &history.Memory{}
	members := []election.NodeID{1, 2, 3, 4, 5}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: members, Seed: 1}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.RunUntilQuiet(10 * time.Second) {
		t.Fatal("no quiet period after start")
	}
	cps := []time.Time{s.Time()}
	if err := s.Partition([]election.NodeID{1, 2, 3}, []election.NodeID{4, 5}); err != nil {
		t.Fatal(err)
	}
	s.RunFor(5 * time.Second)
	cps = append(cps, s.Time())
	if err := s.Heal(); err != nil {
		t.Fatal(err)
	}
	s.RunFor(5 * time.Second)
	cps = append(cps, s.Time())

	opts := check.Options{Algorithm: s.Algorithm(), Members: members, Checkpoints: cps, LivenessBound: 5 * time.Second}
	vs := check.Run(mem.Records(), opts, check.Agreement, check.BullyMax, check.NoSplitBrain, check.Liveness)
	for _, v := range vs {
		want := v.Checker != check.NoSplitBrain
		if v.Pass != want {
			t.Errorf("%s: pass=%v, want %v: %s", v.Checker, v.Pass, want, v.Summary)
		}
	}
	ev := *vs[2].Evidence.SplitBrain
	if len(ev.Overlaps) == 0 || ev.Overlaps[0].Nodes != [2]election.NodeID{3, 5} {
		t.Fatalf("overlaps = %+v, want 3 and 5 leading their sides", ev.Overlaps)
	}
	mid := (*vs[0].Evidence.Stable).Checkpoints[1]
	if len(mid.Components) != 2 {
		t.Fatalf("during the partition: %d components, want 2", len(mid.Components))
	}
}

// The Bully's first election among five nodes starting at once stays within
// the algorithm's published bound.
func TestSimulatedBullyFirstElectionWithinFormula(t *testing.T) {
	mem := &history.Memory{}
	members := []election.NodeID{1, 2, 3, 4, 5}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: members, Seed: 3}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunUntilQuiet(10 * time.Second)
	if s.Algorithm().Formula == nil {
		t.Skip("bully publishes no formula")
	}
	v := check.Check(mem.Records(), check.Options{Algorithm: s.Algorithm(), Members: members}, check.MessageComplexity)
	ev := v.Evidence.Complexity
	if !v.Pass || !ev.Compared {
		t.Fatalf("%s", v.Summary)
	}
	if got := s.Counts().Election; got != ev.Counts.Election {
		t.Fatalf("checker counted %d election messages, the simulator %d", ev.Counts.Election, got)
	}
}

func BenchmarkRunAllCheckers(b *testing.B) {
	mem := &history.Memory{}
	members := []election.NodeID{1, 2, 3, 4, 5}
	s, err := sim.New(sim.Options{Algorithm: "bully", Members: members, Seed: 1}, mem)
	if err != nil {
		b.Fatal(err)
	}
	s.Start()
	s.RunUntilQuiet(10 * time.Second)
	for i := 0; i < 5; i++ {
		_ = s.Kill(5)
		s.RunFor(2 * time.Second)
		_ = s.Restart(5)
		s.RunFor(2 * time.Second)
	}
	recs := mem.Records()
	opts := check.Options{Algorithm: s.Algorithm(), Members: members}
	for b.Loop() {
		check.Run(recs, opts, check.Names...)
	}
	b.ReportMetric(float64(len(recs)), "records")
}
