package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// TestExploreInProcessesAndMergedShardsFindWhatOneProcessFinds: the same
// exploration of plain Bully run in one process, in three child processes
// (--processes), and as two --shard runs merged from their files, reports
// the same counts, split-brain schedules and replays.
func TestExploreInProcessesAndMergedShardsFindWhatOneProcessFinds(t *testing.T) {
	common := []string{"--algorithm", "bully", "--n", "5", "--schedules", "40", "--seed", "7", "--json"}
	whole := simExplore(t, 0, common...)
	if whole.SplitBrainSchedules == 0 {
		t.Fatalf("no split brain in 40 schedules of plain bully: nothing to compare")
	}
	inProcesses := simExplore(t, 0, append(common, "--processes", "3", "--workers", "2")...)
	if !reflect.DeepEqual(inProcesses, whole) {
		t.Errorf("--processes 3 gave\n%+v\none process\n%+v", inProcesses, whole)
	}
	dir := t.TempDir()
	var files []string
	for _, shard := range []string{"0/2", "1/2"} {
		r := ringleader(t, append([]string{"sim", "explore", "--shard", shard}, common...)...)
		r.wantCode(t, 0, "--shard", shard)
		f := filepath.Join(dir, "shard-"+shard[:1]+".json")
		if err := os.WriteFile(f, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	merged := simExplore(t, 0, append([]string{"--merge", "--json"}, files...)...)
	if !reflect.DeepEqual(merged, whole) {
		t.Errorf("--merge of the shards gave\n%+v\none process\n%+v", merged, whole)
	}
}

func TestShardFlagMistakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/2"}, "--shard 0/2: add --json"},
		{[]string{"--shard", "2/2", "--json"}, "shard 2/2: want i/n with 0 ≤ i < n"},
		{[]string{"--shard", "0/2", "--processes", "2", "--json"}, "--processes and --shard both given"},
		{[]string{"--processes", "2", "--shrink"}, "not with --shard or --processes"},
		{[]string{"--processes", "-1"}, "--processes -1: need at least one (or 0 for the default)"},
		{[]string{"--processes", "100000"}, "--processes 100000: more than this machine's"},
		{[]string{"--shard", "x"}, `shard "x": want i/n`}, // what is wrong with it before what goes with it
		{[]string{"--workers", "-1"}, "--workers -1: want a count of schedules at once"},
		{[]string{"--max-memory", "lots"}, `--max-memory "lots": want a size`},
		{[]string{"--n", "100000000000"}, "--n 100000000000: 100000000000 nodes need at least"},
	} {
		args := append([]string{"sim", "explore", "--algorithm", "bully", "--schedules", "2"}, c.args...)
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, c.want)
	}
	r := ringleader(t, "sim", "explore", "--merge", "--n", "3", "x.json")
	r.wantCode(t, 2)
	wantContains(t, "stderr", r.stderr, "--merge takes result files and --json only, not --n")
}

// Raft's workers in one process take turns inside its library, so an
// exploration of raft runs in one process per worker unless told
// otherwise, and finds what one process finds.
func TestRaftExploresInAProcessPerWorkerByDefault(t *testing.T) {
	raft, err := election.Lookup("raft")
	if err != nil {
		t.Fatal(err)
	}
	bully, err := election.Lookup("bully")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		given, workers, schedules int
		alg                       election.Algorithm
		inThisProcess             bool
		want                      int
	}{
		{0, 2, 100, raft, false, 2},
		{0, 4, 3, raft, false, 3},    // no more processes than schedules
		{0, 2, 100, raft, true, 1},   // a shard or --shrink
		{0, 2, 100, bully, false, 1}, // its workers run side by side
		{3, 2, 100, bully, false, 3}, // as given
		{1, 2, 100, raft, false, 1},
	} {
		if got := exploreProcesses(c.given, c.workers, c.schedules, c.alg, c.inThisProcess); got != c.want {
			t.Errorf("exploreProcesses(%d, %d workers, %d schedules, %s, in this process %v) = %d, want %d",
				c.given, c.workers, c.schedules, c.alg.Name, c.inThisProcess, got, c.want)
		}
	}
	common := []string{"--algorithm", "raft", "--n", "5", "--schedules", "30", "--seed", "4", "--workers", "2", "--json"}
	byDefault := simExplore(t, 0, common...)
	inOne := simExplore(t, 0, append(common, "--processes", "1")...)
	if byDefault.Schedules != 30 || !reflect.DeepEqual(byDefault, inOne) {
		t.Errorf("by default (two processes) raft gave\n%+v\nin one process\n%+v", byDefault, inOne)
	}
}

// A child of --processes reports each count of finished schedules to the
// parent as well as to its own meter, and the parent reads them back,
// skipping what is not a count. Without the parent's variable, only the
// meter hears.
func TestShardProgressReachesTheParent(t *testing.T) {
	var pipe bytes.Buffer
	var local []int
	set := reportTo(&pipe, func(k int) { local = append(local, k) })
	for _, k := range []int{1, 2, 5} {
		set(k)
	}
	pipe.WriteString("not a count\n-3\n")
	var read []int
	readCounts(&pipe, func(k int) { read = append(read, k) })
	if want := []int{1, 2, 5}; !slices.Equal(local, want) || !slices.Equal(read, want) {
		t.Errorf("the child's meter saw %v and the parent read %v, want %v both", local, read, want)
	}
	t.Setenv(shardProgressEnv, "")
	var alone []int
	toParent(func(k int) { alone = append(alone, k) })(7)
	if !slices.Equal(alone, []int{7}) {
		t.Errorf("without the variable the meter saw %v, want [7]", alone)
	}
}

func TestWithoutFlags(t *testing.T) {
	got := withoutFlags([]string{"--algorithm", "raft", "--processes", "2", "-workers=3", "--json", "--n", "5", "--json=true"}, "processes", "workers", "json")
	if want := []string{"--algorithm", "raft", "--n", "5"}; !slices.Equal(got, want) {
		t.Fatalf("withoutFlags = %q, want %q", got, want)
	}
}

// The memory budget is the machine's: --processes N gives each child an
// N-th of it, and no budget stays none.
func TestChildrenShareTheMemoryBudget(t *testing.T) {
	for _, c := range []struct {
		maxMemory int64
		n         int
		want      string
	}{
		{8 << 30, 2, "4294967296"},
		{sim.NoMemoryLimit, 3, "none"},
		{0, 4, strconv.FormatInt(sim.DefaultMaxMemory()/4, 10)},
	} {
		if sim.DefaultMaxMemory() == 0 && c.maxMemory == 0 {
			c.want = "none"
		}
		if got := childBudget(c.maxMemory, c.n); got != c.want {
			t.Errorf("childBudget(%d, %d) = %s, want %s", c.maxMemory, c.n, got, c.want)
		}
	}
}
