package sim

import (
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// This file is how the simulator drives machines that live outside the Go
// heap (package program: a child process per node slot): it releases a
// machine it drops, and treats a machine that failed by itself as a
// crashed node.

// release hands back what n's machine holds (election.Releaser), when it
// is dropped: a crash, a stop, a restart's new machine, a Reset.
func (s *Sim) release(n *node) {
	if r, ok := n.m.(election.Releaser); ok {
		r.Release()
	}
	n.m, n.crasher = nil, false
}

// Close releases every node's machine (election.Releaser): a program's
// processes go back to its pool. The simulator runs nothing after it,
// until a Reset builds new machines. It is idempotent.
func (s *Sim) Close() {
	for i := range s.nodes {
		n := &s.nodes[i]
		n.up, n.paused = false, false // nothing steps a released machine
		s.release(n)
	}
}

// checkCrashed is called after every step of a machine that can fail by
// itself (election.Crasher): one that failed, or asked for what the
// simulator refused (refuseType), crashes its node, as a kill would, and
// the world model takes it as one; nobody injected it, so no nemesis
// record is written: the history gets the node's stop record, whose
// reason is the failure, and Crashes lists it.
func (s *Sim) checkCrashed(n *node) {
	c, ok := n.m.(election.Crasher)
	if !ok {
		return
	}
	err := c.Crashed()
	if n.x != nil && n.x.refused != nil {
		err = n.x.refused
	}
	if err == nil {
		return
	}
	s.crashes = append(s.crashes, Crash{Node: n.id, At: s.now, Err: err})
	if s.sink != nil {
		r := s.nodeRecord(n, history.KindStop)
		r.Reason = history.ReasonProgramFailed + ": " + err.Error()
		s.emit(r)
	}
	// In the world model a program's crash is a kill: the one
	// description of what a kill leaves (chaos.State.Apply).
	s.model().Apply(chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{n.id}}, s.opts.Members)
	s.stateChanged = true
	s.down(n)
	s.hintCrashed(n)
}

// Crash is a node whose machine failed by itself (a program that exited,
// hung or broke the protocol).
type Crash struct {
	Node election.NodeID
	At   time.Duration
	Err  error
}

// Crashes lists the machines that failed by themselves in this run, in
// order.
func (s *Sim) Crashes() []Crash { return s.crashes }
