package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all" // the shipped scenarios name real algorithms
)

// withoutLines clears what Parse takes from the file rather than the
// scenario: where each step stood, and the file's name.
func withoutLines(sc *Scenario) *Scenario {
	c := *sc
	c.File = ""
	c.Steps = append([]Step(nil), sc.Steps...)
	for i := range c.Steps {
		c.Steps[i].Line = 0
	}
	return &c
}

func TestFormatReadsBackAsTheSameScenario(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped scenarios: %v", err)
	}
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Format(sc, "")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := Parse(f, out)
		if err != nil {
			t.Fatalf("%s: the formatted file does not parse: %v\n%s", f, err, out)
		}
		if !reflect.DeepEqual(withoutLines(sc), withoutLines(back)) {
			t.Errorf("%s: read back differently:\n%s", f, out)
		}
	}
}

func TestFormatWritesEveryFaultFormAndTheHeader(t *testing.T) {
	sc := &Scenario{
		Name: "every-form", Repeat: 1,
		Cluster: Cluster{Algorithm: "stub-bully", IDs: []election.NodeID{3, 1, 2, 5, 4}, Quorum: election.Majority, Timing: election.Timing{}.WithDefaults()},
		Steps: []Step{
			WaitStep(1500 * time.Millisecond),
			FaultStep(chaos.Spec{Op: chaos.Kill, Target: chaos.Target{Kind: chaos.TargetLeader}}),
			FaultStep(chaos.Spec{Op: chaos.Restart, Target: chaos.IDs(5)}),
			FaultStep(chaos.Spec{Op: chaos.Pause, Target: chaos.IDs(1, 2)}),
			FaultStep(chaos.Spec{Op: chaos.Resume, Target: chaos.Target{Kind: chaos.TargetPaused}}),
			FaultStep(chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{Groups: [][]election.NodeID{{1, 2}, {3, 4, 5}}}}),
			FaultStep(chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{Shape: chaos.Isolate, Target: chaos.Target{Kind: chaos.TargetLeader}}}),
			FaultStep(chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{Shape: chaos.Bridge, Target: chaos.IDs(3)}}),
			FaultStep(chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{OneWay: []election.NodeID{5, 1}}}),
			FaultStep(chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{Cut: []election.NodeID{2, 4}}}),
			FaultStep(chaos.Spec{Op: chaos.Loss, Target: chaos.IDs(2), Params: chaos.ParamsOf(chaos.LossPercent.Of(0.3))}),
			FaultStep(chaos.Spec{Op: chaos.Delay, Target: chaos.Target{Kind: chaos.TargetAll}, Params: chaos.ParamsOf(chaos.DelayMS.OfDur(25*time.Millisecond), chaos.DelayJitter.OfDur(5*time.Millisecond))}),
			FaultStep(chaos.Spec{Op: chaos.Heal}),
			{Op: OpWait, Stable: true, Within: 20 * time.Second},
			{Op: OpExpect, Expect: &Expectation{Kind: ExpectLeaders, Leaders: []election.NodeID{3, 5}, On: OnAllLive, Within: 2 * time.Second, For: time.Second}},
			WaitStep(2 * time.Minute),
		},
		Checkers:       []check.Name{check.NoSplitBrain},
		ExpectCheckers: map[check.Name]bool{check.NoSplitBrain: false},
		LivenessBound:  5 * time.Second,
		Seed:           new(int64(4097618618563484380)),
	}
	out, err := Format(sc, "found by the explorer\nseed 7")
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"# found by the explorer\n# seed 7\n", "- heal\n", "- wait: 2m\n", "- partition: {one-way: [5, 1]}\n", "expect_checkers: {no-split-brain: fail}", "seed: 4097618618563484380\n", "quorum: majority\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	back, err := Parse("every-form.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !reflect.DeepEqual(withoutLines(sc), withoutLines(back)) {
		t.Errorf("read back differently:\n%s\n%#v", text, back.Steps)
	}
}
