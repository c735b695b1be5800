//go:build linux

package cpupin

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestPinHoldsTheThreadAndItsChildrenOnOneCPU: while pinned, the calling
// thread and a child it starts run on the one CPU; after Release the
// thread has every CPU it had.
func TestPinHoldsTheThreadAndItsChildrenOnOneCPU(t *testing.T) {
	cpus := Allowed()
	if len(cpus) == 0 {
		t.Fatal("Allowed: no CPUs on Linux")
	}
	before := Current()
	cpu := cpus[len(cpus)-1]
	pin, err := Pin(cpu)
	if err != nil {
		t.Fatalf("Pin(%d): %v", cpu, err)
	}
	if got := Current().cpus(); len(got) != 1 || got[0] != cpu {
		t.Errorf("pinned to %d, the thread may run on %v", cpu, got)
	}
	out, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := allowedList(string(out)); got != strconv.Itoa(cpu) {
		t.Errorf("a child started while pinned to %d may run on %q", cpu, got)
	}
	pin.Release()
	if Current() != before {
		t.Errorf("after Release the thread may run on %v, before Pin on %v", Current().cpus(), before.cpus())
	}
}

// TestPinRefusesACPUOutsideTheSet: a CPU the process may not use is an
// error, and the goroutine stays where it was.
func TestPinRefusesACPUOutsideTheSet(t *testing.T) {
	before := Current()
	if _, err := Pin(len(before.m) * 64); err == nil {
		t.Fatal("Pin of a CPU past the kernel's set: no error")
	}
	if Current() != before {
		t.Errorf("after a refused Pin the thread may run on %v, before on %v", Current().cpus(), before.cpus())
	}
}

func allowedList(status string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
