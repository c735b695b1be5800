// Package cpupin places a goroutine on one CPU for a stretch of work that
// ping-pongs with child processes: the explorer's worker and the program
// processes whose answers it waits for (docs/performance.md, "Programs
// over the pipe").
//
// Why: an exchange over a pipe is a write that wakes the other side and a
// read that sleeps until it answers. With the two sides on different CPUs
// every exchange wakes an idle CPU, which on a virtual machine is an
// interrupt to a halted virtual CPU; with both on one CPU the wake-up is a
// switch of tasks on that CPU. Where the kernel has no affinity calls
// (off Linux) Pin does nothing and placement stays the kernel's.
//
// Placement changes how fast, never what: nothing computed may depend on
// which CPU ran it.
package cpupin

import "runtime"

// Pinned is the placement of a goroutine by Pin; Release undoes it.
type Pinned struct {
	before Set
	ok     bool
}

// Pin locks the calling goroutine to its thread and that thread to cpu.
// Children the goroutine starts while pinned (os/exec forks from the
// calling thread) inherit the CPU, and so do their threads. If the kernel
// refuses (a CPU outside the process's set, no affinity calls), the
// goroutine runs on unpinned and the error says why.
func Pin(cpu int) (Pinned, error) {
	runtime.LockOSThread()
	before, err := current()
	if err == nil {
		err = set(one(cpu))
	}
	if err != nil {
		runtime.UnlockOSThread()
		return Pinned{}, err
	}
	return Pinned{before: before, ok: true}, nil
}

// Release gives the thread its CPUs back and unlocks the goroutine from
// it. The thread goes back to the runtime's pool rather than ending: a
// locked goroutine that exits takes its thread with it, and a child
// started with Pdeathsig (every program process) dies with the thread
// that started it. So it is unlocked even if the kernel refuses the old
// set back: a thread left on one CPU only costs speed.
func (p Pinned) Release() {
	if !p.ok {
		return
	}
	_ = set(p.before)
	runtime.UnlockOSThread()
}

// Current is the set of CPUs the calling goroutine's thread may run on,
// the key under which work pinned there finds what was started there.
// Only meaningful on a locked goroutine (Pin); on any other it is the
// process's whole set.
func Current() Set {
	s, err := current()
	if err != nil {
		return Set{}
	}
	return s
}

// Allowed lists the CPUs the calling thread may run on, in order; nil
// where that cannot be asked.
func Allowed() []int {
	s, err := current()
	if err != nil {
		return nil
	}
	return s.cpus()
}
