package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
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
		{[]string{"--processes", "0"}, "--processes 0: need at least one"},
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

func TestWithoutFlags(t *testing.T) {
	got := withoutFlags([]string{"--algorithm", "raft", "--processes", "2", "-workers=3", "--json", "--n", "5", "--json=true"}, "processes", "workers", "json")
	if want := []string{"--algorithm", "raft", "--n", "5"}; !slices.Equal(got, want) {
		t.Fatalf("withoutFlags = %q, want %q", got, want)
	}
}
