//go:build !linux

package cpupin

import "errors"

// Set is a set of CPUs, comparable; empty where affinity cannot be asked.
type Set struct{}

var errNoAffinity = errors.New("cpupin: no CPU affinity on this system")

func one(int) Set           { return Set{} }
func (Set) cpus() []int     { return nil }
func current() (Set, error) { return Set{}, errNoAffinity }
func set(Set) error         { return errNoAffinity }
