package sim

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"

	"github.com/docker/go-units"
)

// A simulation's memory is bounded. An election whose every node starts at
// once can hold O(n²) messages in flight (Bully on 20,000 nodes grew past
// 23 GiB in three minutes), and a process that outgrows the machine is not
// stopped by Go but killed by the kernel, along with whatever else the
// kernel picks (a Docker engine's containers, on a shared machine). So the
// simulator looks at its process's memory every memoryCheckEvery events
// and messages sent, and stops a run that has passed its budget, with a *CapError naming it,
// as it stops one at the message or time cap.
const (
	// MinNodeBytes is the least a simulated node costs, its machine
	// included: after New, 365 bytes a node for Chang–Roberts and
	// Peterson (the leanest, measured at 200,000 nodes) and 879 for
	// Bully. New refuses a cluster that would not fit in the budget at
	// this rate before it allocates anything.
	MinNodeBytes = 256
	// memoryCheckEvery is how many events and messages sent go between
	// two looks at the process's memory: a look costs about a
	// microsecond, 16,384 of them some milliseconds, in which a run
	// grows by a few megabytes.
	memoryCheckEvery = 1 << 14
	// defaultBudgetShare is the part of the machine's available memory
	// a run may take by default, leaving room for the rest of the
	// machine and for the garbage the collector has yet to free.
	defaultBudgetShare = 0.8
)

// NoMemoryLimit as Options.MaxMemory lifts the budget.
const NoMemoryLimit = -1

// DefaultMaxMemory is the budget a run gets when its options leave it at
// zero: 80 % of the memory available to this process when first asked
// (the machine's available memory, or what its cgroup still allows if
// that is less); 0, no budget, where neither can be read.
var DefaultMaxMemory = sync.OnceValue(func() int64 {
	avail := availableMemory()
	if avail <= 0 {
		return 0
	}
	return int64(float64(avail) * defaultBudgetShare)
})

// budgetOf is the budget a MaxMemory option asks for: 0 for none.
func budgetOf(maxMemory int64) int64 {
	switch {
	case maxMemory < 0:
		return 0
	case maxMemory == 0:
		return DefaultMaxMemory()
	}
	return maxMemory
}

// CheckNodes refuses n nodes (every cluster a process will hold at once,
// summed) that cannot fit in the budget maxMemory asks for (as
// Options.MaxMemory) even at MinNodeBytes each, before anything is
// allocated for them. The error names the budget; a caller adds its flag.
func CheckNodes(n int, maxMemory int64) error {
	budget := budgetOf(maxMemory)
	if budget <= 0 || n <= 0 {
		return nil
	}
	if int64(n) > budget/MinNodeBytes {
		need := float64(n) * MinNodeBytes // as a float: n may be anything a flag parses
		return fmt.Errorf("%d nodes need at least %s (%d bytes a node in the leanest algorithm), over the memory budget of %s",
			n, units.BytesSize(need), MinNodeBytes, units.BytesSize(float64(budget)))
	}
	return nil
}

// ParseMaxMemory reads a --max-memory flag: "" or "0" for the default,
// "none" for no budget, or a size such as 12GiB, 512m or 2000000000
// (bytes), as Docker's --memory takes it. The result is an
// Options.MaxMemory.
func ParseMaxMemory(s string) (int64, error) {
	switch strings.TrimSpace(s) {
	case "", "0":
		return 0, nil
	case "none":
		return NoMemoryLimit, nil
	}
	v, err := units.RAMInBytes(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--max-memory %q: want a size such as 8GiB or 512MiB, 0 for the default (%s) or none", s, describeBudget(0))
	}
	return v, nil
}

// describeBudget says what budget maxMemory asks for, for errors and help.
func describeBudget(maxMemory int64) string {
	b := budgetOf(maxMemory)
	if b <= 0 {
		return "no budget"
	}
	if maxMemory == 0 {
		return fmt.Sprintf("%s, 80%% of the memory available", units.BytesSize(float64(b)))
	}
	return units.BytesSize(float64(b))
}

// memoryMeter reads how much memory the Go runtime holds from the system,
// less what it has given back: the process's size as far as Go knows it.
// Each simulator has its own, so that workers read without sharing.
type memoryMeter struct {
	samples [2]metrics.Sample
}

func newMemoryMeter() *memoryMeter {
	m := &memoryMeter{}
	m.samples[0].Name = "/memory/classes/total:bytes"
	m.samples[1].Name = "/memory/classes/heap/released:bytes"
	return m
}

func (m *memoryMeter) held() int64 {
	metrics.Read(m.samples[:])
	if m.samples[0].Value.Kind() != metrics.KindUint64 || m.samples[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(m.samples[0].Value.Uint64() - m.samples[1].Value.Uint64())
}

// tick counts one event or message sent and, every memoryCheckEvery of
// them, looks at the process's memory; it reports whether the run must
// stop: the budget was passed, now or before (memErr). A message not sent
// and an event not processed once it has are of no consequence: the run
// ends with the error.
func (s *Sim) tick() bool {
	if s.memErr != nil {
		return true
	}
	s.events++
	if s.budget <= 0 || s.events%memoryCheckEvery != 0 {
		return false
	}
	if held := s.meter.held(); held > s.budget {
		s.memErr = &CapError{Cap: "memory", Limit: s.budget, Held: held, At: (*watch)(nil).progress(s)}
		return true
	}
	return false
}

// availableMemory is what this process may still take: the machine's
// available memory, or its cgroup's room if that is less; 0 if unknown.
func availableMemory() int64 {
	avail := meminfoAvailable()
	if room := cgroupRoom(); room > 0 && (avail <= 0 || room < avail) {
		avail = room
	}
	return avail
}

// meminfoAvailable is MemAvailable from /proc/meminfo, in bytes.
func meminfoAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupRoom is what the cgroup v2 this process runs in still allows
// (memory.max less memory.current), in bytes; 0 without a limit.
func cgroupRoom() int64 {
	limit, err1 := readInt("/sys/fs/cgroup/memory.max")
	used, err2 := readInt("/sys/fs/cgroup/memory.current")
	if err1 != nil || err2 != nil || limit <= used {
		return 0
	}
	return limit - used
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max" fails: no limit
}
