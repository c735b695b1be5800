// Package prefetch asks the processor to start loading a cache line that
// will be read soon, without waiting for it.
//
// The simulator's million-node rings are bound by memory, not by
// computation: each message lands on a node, and a node's machine, that
// no cache holds (docs/performance.md, "Peterson on a million nodes").
// The queue knows which nodes the next messages go to, so the simulator
// names them here a few events ahead, and their lines arrive while it
// works on the current one. A prefetch changes no value the program
// reads; it only moves a load earlier.
package prefetch

import "unsafe"

// Line asks for the cache line holding p. It never faults, whatever p is,
// and on an architecture without a prefetch instruction here it does
// nothing.
func Line(p unsafe.Pointer) { line(p) }
