package program_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/internal/cpupin"
	"github.com/ringleader-dev/ringleader/program"
)

// TestPinnedWorkersPlayOnTheirOwnCPUAndFindTheSame: by default each
// worker of a program's exploration, and the processes it starts, may
// run on exactly one CPU, the workers' CPUs spread over those allowed,
// and the exploration finds what it finds Unpinned.
func TestPinnedWorkersPlayOnTheirOwnCPUAndFindTheSame(t *testing.T) {
	cpus := cpupin.Allowed()
	if len(cpus) == 0 {
		t.Skip("no CPU affinity on this system: placement stays the kernel's")
	}
	argv := append(bullyGo(), "pinned") // a command of its own: its own processes
	name := register(t, argv, election.NoQuorum)
	p, _ := program.Lookup(name)
	probe := p.LivePIDs() // the probe start's process, started unpinned
	opts := explore.Options{Algorithm: name, N: 5, Schedules: 24, Seed: 11, Workers: 2}
	pinned, err := explore.Run(opts)
	must(t, err)

	used := map[string]int{}
	for _, pid := range p.LivePIDs() {
		if slices.Contains(probe, pid) {
			continue
		}
		list := allowedCPUs(t, pid)
		if strings.ContainsAny(list, ",-") {
			t.Errorf("process %d of a pinned worker may run on CPUs %s, want one", pid, list)
		}
		used[list]++
	}
	if want := min(2, len(cpus)); len(used) != want {
		t.Errorf("the two workers' processes run on %v, want %d CPU(s) of %v", used, want, cpus)
	}
	for cpu, n := range used {
		if n != 5*2/len(used) {
			t.Errorf("CPU %s holds %d processes, want one per node slot of its workers (%v)", cpu, n, used)
		}
	}

	// Processes outlive their worker's pinning: the next exploration's
	// workers, pinned the same way, find them idle and alive.
	launched := p.Launched()
	again, err := explore.Run(opts)
	must(t, err)
	if got := p.Launched(); got != launched || again.FailedSchedules != pinned.FailedSchedules {
		t.Errorf("a second pinned exploration started %d processes and failed %d schedules, want 0 and %d",
			got-launched, again.FailedSchedules, pinned.FailedSchedules)
	}

	opts.Unpinned = true
	free, err := explore.Run(opts)
	must(t, err)
	a, err := json.Marshal(pinned)
	must(t, err)
	b, err := json.Marshal(free)
	must(t, err)
	if !bytes.Equal(a, b) {
		t.Errorf("pinned and unpinned explorations differ:\npinned %s\nfree   %s", a, b)
	}
	if pinned.SplitBrainSchedules == 0 {
		t.Errorf("24 schedules of plain Bully found no split brain: the comparison compared nothing")
	}
}

// allowedCPUs is the Cpus_allowed_list of a process ("3", "0-1").
func allowedCPUs(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}
