//go:build linux

package cpupin

import "golang.org/x/sys/unix"

// Set is a set of CPUs, comparable.
type Set struct{ m unix.CPUSet }

func one(cpu int) Set {
	var s Set
	s.m.Set(cpu)
	return s
}

func (s Set) cpus() []int {
	var out []int
	for c := range len(s.m) * 64 {
		if s.m.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// current and set act on the calling thread (tid 0), not the process.
func current() (Set, error) {
	var s Set
	err := unix.SchedGetaffinity(0, &s.m)
	return s, err
}

func set(s Set) error { return unix.SchedSetaffinity(0, &s.m) }
