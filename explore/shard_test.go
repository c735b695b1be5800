package explore

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// roundTrip is r as another process hands it over: through its --json.
func roundTrip(t *testing.T, r Result) Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShardsMergeToTheWholeExploration: three shards of plain Bully's
// 90 schedules, each through JSON, merge to what the whole run finds:
// the counts, the first split-brain schedules and their replays.
func TestShardsMergeToTheWholeExploration(t *testing.T) {
	o := Options{Algorithm: "bully", N: 5, Schedules: 90, Seed: 3, Keep: 4, Workers: 2}
	whole, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if whole.SplitBrainSchedules <= o.Keep {
		t.Fatalf("only %d split-brain schedules: too few to show that merge keeps the first %d", whole.SplitBrainSchedules, o.Keep)
	}
	var parts []Result
	for _, i := range []int{2, 0, 1} { // any order
		so := o
		so.Shard = Shard{Index: i, Count: 3}
		r, err := Run(so)
		if err != nil {
			t.Fatal(err)
		}
		if r.Schedules != 30 || r.Shard != so.Shard.String() || r.Of != 90 {
			t.Fatalf("shard %s: %d schedules, shard %q of %d", so.Shard, r.Schedules, r.Shard, r.Of)
		}
		parts = append(parts, roundTrip(t, r))
	}
	merged, err := Merge(parts, o.Keep)
	if err != nil {
		t.Fatal(err)
	}
	want := roundTrip(t, whole)
	if math.Abs(merged.SimulatedSeconds-want.SimulatedSeconds) > 1e-6 {
		t.Errorf("simulated %v s merged, %v s whole", merged.SimulatedSeconds, want.SimulatedSeconds)
	}
	merged.SimulatedSeconds = want.SimulatedSeconds
	mb, _ := json.Marshal(merged)
	wb, _ := json.Marshal(want)
	if string(mb) != string(wb) {
		t.Fatalf("merged shards\n%s\nwhole run\n%s", mb, wb)
	}
}

func TestMergeRefusesWhatIsNotOneExploration(t *testing.T) {
	part := func(shard string, seed int64) Result {
		return Result{Algorithm: "bully", N: 5, Quorum: "none", Seed: seed, Schedules: 5, Of: 10, Shard: shard}
	}
	for _, c := range []struct {
		parts []Result
		want  string
	}{
		{nil, "no results"},
		{[]Result{part("0/2", 1)}, "shard 1/2 missing"},
		{[]Result{part("0/2", 1), part("0/2", 1)}, "shard 0/2 given twice"},
		{[]Result{part("0/2", 1), part("1/2", 2)}, "from seed 2"},
		{[]Result{part("0/2", 1), part("1/3", 1)}, "split the schedules differently"},
		{[]Result{part("0/2", 1), {Algorithm: "bully", N: 5, Seed: 1}}, "not a shard"},
	} {
		_, err := Merge(c.parts, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Merge of %d parts: error %v, want one saying %q", len(c.parts), err, c.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{Index: 2, Count: 4}) || s.String() != "2/4" {
		t.Fatalf("ParseShard(2/4) = %v, %v", s, err)
	}
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted it", bad)
		}
	}
}
