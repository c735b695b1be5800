package docker

import (
	"strings"
	"testing"
)

func TestAdmitRefusesWhatTheMachineCannotHoldAndSaysWhy(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		n       int
		cpus    int
		mem     int64
		perCore string
		want    string // "" admits; otherwise words the refusal must hold
	}{
		{5, 2, 24 * gib, "", ""},
		{2 * NodesPerCore, 2, 24 * gib, "", ""},
		{2*NodesPerCore + 1, 2, 24 * gib, "", "2 CPU(s) × 16 nodes per CPU = 32"},
		{2*NodesPerCore + 1, 2, 24 * gib, "40", ""},
		{20, 1, 24 * gib, "16", "Run 16 or fewer"},
		{128, 2, 24 * gib, "", "Run 32 or fewer"},
		{20, 1, 24 * gib, "lots", "want a whole number"},
		{64, 4, 2 * gib, "", "need about 6144 MiB"},
	} {
		err := admit(c.n, c.cpus, c.mem, c.perCore)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("admit(%d nodes, %d cpus, %d MiB, %q): %v, want admitted", c.n, c.cpus, c.mem>>20, c.perCore, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("admit(%d nodes, %d cpus, %d MiB, %q) = %v, want a refusal saying %q", c.n, c.cpus, c.mem>>20, c.perCore, err, c.want)
		}
	}
}

// TestParallelCountsEachRunsNodesAgainstMemoryAndCores: RunsPerCore runs
// per core, fewer when the largest runs' nodes would not fit together in
// memory (NodeMemory each) or on the cores (nodes per core), never none.
func TestParallelCountsEachRunsNodesAgainstMemoryAndCores(t *testing.T) {
	for _, tc := range []struct {
		sizes []int
		cpus  int
		mem   int64
		want  int
	}{
		{[]int{5, 5, 5, 5, 5, 5}, 2, 16 << 30, 2 * RunsPerCore}, // cores bind
		{[]int{5, 5, 5, 5, 5, 5}, 0, 16 << 30, RunsPerCore},     // no core count: one core's worth
		{[]int{5, 64, 5, 3}, 8, 70 * NodeMemory, 2},             // memory: 64+5 fit, 64+5+5 do not
		{[]int{16, 16, 16, 16}, 2, 16 << 30, 2},                 // nodes: 32 fit on 2 cores, 48 do not
		{[]int{64}, 2, 10 * NodeMemory, 1},                      // too large alone: still runs (CheckCapacity refuses it)
		{[]int{100}, 2, 16 << 30, 1},                            // too many nodes alone: likewise
		{[]int{5, 5}, 2, 0, 2 * RunsPerCore},                    // memory unknown: cores alone
	} {
		if got := parallel(tc.sizes, tc.cpus, tc.mem, NodesPerCore); got != tc.want {
			t.Errorf("parallel(%v, %d cpus, %d MiB) = %d, want %d", tc.sizes, tc.cpus, tc.mem>>20, got, tc.want)
		}
	}
}
