package election

import "math/rand/v2"

// Seed is the two words of the PCG source a runtime made Config.Rand
// from. A machine in process never needs it (it draws from Rand); a
// runtime that hands the machine's work to another process (package
// program) passes it on, so that a Go program rebuilds exactly the stream
// the in-process machine would have drawn, and a program in any other
// language seeds its own generator from it.
type Seed [2]uint64

// Rand is the random stream the seed stands for.
func (s Seed) Rand() *rand.Rand { return rand.New(rand.NewPCG(s[0], s[1])) }

// Releaser is a Machine that holds something outside the Go heap (a child
// process, package program). A runtime calls Release when it drops the
// machine: its node crashed or stopped, a restart replaced it, or a new
// run began. A released machine is never stepped again.
type Releaser interface {
	Release()
}

// Crasher is a Machine that can fail by itself, outside the algorithm: a
// program over a pipe that exited, hung or wrote what the protocol does
// not allow. After a Step, a runtime asks Crashed; a non-nil error means
// the machine answers no more, and the runtime treats its node as
// crashed (down, as a kill leaves it), recording the error.
type Crasher interface {
	Crashed() error
}
