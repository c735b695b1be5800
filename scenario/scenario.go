// Package scenario is the testbed's user-facing language: a small YAML file
// that says which cluster to start, which faults to inject in which order,
// and what must hold. Parse checks a file completely — every field, every
// target, every node ID — before anything starts, and every error names the
// file, the line, the field and what would be valid.
//
// A scenario says nothing about the world it runs in: the harness (package
// harness) runs the same file on the simulator or in containers. Targets such
// as "leader" stay symbolic here; the harness resolves them against the
// cluster's state at the moment the fault is applied.
package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// Scenario is one parsed and validated scenario file.
type Scenario struct {
	// File is the path it was read from (for errors and reports).
	File        string
	Name        string
	Description string
	Cluster     Cluster
	Steps       []Step
	// Repeat is how many times to run it, each on a fresh cluster (≥ 1).
	Repeat int
	// Checkers to run; empty means every property the algorithm claims
	// in its quorum mode (plus message-complexity when it has a formula).
	Checkers []check.Name
	// ExpectCheckers maps a checker to the verdict the scenario expects
	// from it: true = pass, false = fail (a scenario built to show split
	// brain expects no-split-brain to fail). Checkers not named here are
	// expected to pass.
	ExpectCheckers map[check.Name]bool
	// LivenessBound is the liveness checker's bound after the last fault
	// (zero: the checker's default).
	LivenessBound time.Duration
	// Seed, when set (seed: in a file), is the seed of the first
	// repetition when the run is given none: a schedule the explorer
	// saved carries the simulator seed it failed on, so the file alone
	// replays that run.
	Seed *int64
}

// Cluster is the cluster a scenario starts.
type Cluster struct {
	Algorithm string
	// Program, instead of an algorithm, is the command line of a program
	// that speaks docs/protocol.md (cluster.program in a file). A
	// runtime registers it (program.Register) and sets Algorithm to the
	// name it was registered under; a parsed scenario with a program has
	// no Algorithm until then, and its quorum mode defaults to none.
	Program []string
	// Image is the image a program runs in on the docker backend, one
	// that holds its runtime (an interpreter); the node is added to it.
	// Empty: the program must be one static executable, added to the
	// FROM-scratch node image. Only with Program.
	Image string
	// ProgramTimeout, when not zero, is how long the program has to
	// answer one event before it is treated as crashed
	// (program.Options.Timeout; cluster.program_timeout). Only with
	// Program.
	ProgramTimeout time.Duration
	// IDs in ring order; len(IDs) is the node count.
	IDs []election.NodeID
	// Quorum and Options are resolved when parsed: what the file gave,
	// else the algorithm's defaults (election.Algorithm.Resolve). A
	// Cluster built in code may leave them unset; the runtimes resolve
	// them the same way.
	Quorum  election.QuorumMode
	Options election.Options
	// Timing with defaults filled in.
	Timing election.Timing
	// System, instead of an algorithm or a program, is a real server
	// run as a black box (cluster.system: etcd, nats-jetstream or a
	// system file; docs/systems.md); Algorithm is then its name and
	// Options its options resolved (the server's defaults filled in),
	// while SystemOptions holds only those the file gave: the others
	// are not passed, so the server's own defaults run. Its Timing is
	// the server's heartbeat and election timeout, and its probe's
	// interval is cluster.probe_interval when given.
	System        *system.System
	SystemOptions election.Options
	// Placement fixes which engine holds each node when a run spans
	// several (cluster.placement: one list of IDs per engine, in the
	// order --engines names them); nil: round-robin (docs/engines.md).
	Placement chaos.Placement
}

// Op is what a step does: wait, expect, or one of the fault operations of
// package chaos (which define the fault language; a scenario only spells
// it in YAML).
type Op string

const (
	OpWait   Op = "wait"
	OpExpect Op = "expect"
)

// Ops is every step operation in the order the docs list them.
func Ops() []Op {
	out := []Op{OpWait, OpExpect}
	for _, o := range chaos.Ops {
		out = append(out, Op(o))
	}
	return out
}

// IsFault reports whether the step injects (or heals) a fault.
func (o Op) IsFault() bool { return slices.Contains(chaos.Ops, chaos.Op(o)) }

// Default deadlines. A stable cluster is waited for longer than a single
// expectation because it may include a whole election after a restart.
const (
	DefaultStableWithin = 10 * time.Second
	DefaultExpectWithin = 5 * time.Second
)

// Step is one line of a scenario's steps list.
type Step struct {
	// Line is the step's line in the file.
	Line int
	Op   Op

	// wait: Stable, or a fixed Duration. Within bounds a stable wait.
	Stable   bool
	Duration time.Duration
	Within   time.Duration

	// expect.
	Expect *Expectation

	// Fault of a fault step (Op is then Fault.Op).
	Fault *chaos.Spec
}

// String is the step as a person would say it, for progress lines.
func (s Step) String() string {
	switch s.Op {
	case OpWait:
		if s.Stable {
			return fmt.Sprintf("wait stable (within %v)", s.Within)
		}
		return fmt.Sprintf("wait %v", s.Duration)
	case OpExpect:
		return "expect " + s.Expect.String()
	}
	if s.Fault != nil {
		return s.Fault.String()
	}
	return string(s.Op)
}

// FaultStep is the step that applies f.
func FaultStep(f chaos.Spec) Step { return Step{Op: Op(f.Op), Fault: &f} }

// WaitStep is a fixed wait of d.
func WaitStep(d time.Duration) Step { return Step{Op: OpWait, Duration: d} }

// ExpectKind is what an expectation asserts about leaders.
type ExpectKind string

const (
	// ExpectLeader: every node in On views Leader.
	ExpectLeader ExpectKind = "leader"
	// ExpectHighest: every node in On views the highest live ID.
	ExpectHighest ExpectKind = "highest"
	// ExpectAny: every node in On views one same leader, live and
	// holding role leader, whichever node it is: for algorithms where no
	// rule names the winner (raft).
	ExpectAny ExpectKind = "any"
	// ExpectNone: no node in On views any leader (so none holds role
	// leader either: a leader views itself).
	ExpectNone ExpectKind = "none"
	// ExpectLeaders: the nodes in On holding role leader are exactly
	// Leaders, all at once (split brain, shown on purpose).
	ExpectLeaders ExpectKind = "leaders"
)

// OnKind says which nodes an expectation looks at.
type OnKind string

const (
	OnAllLive OnKind = "all-live" // every live node (default)
	OnAll     OnKind = "all"      // every member; a node that is down fails it
	OnIDs     OnKind = "ids"
)

// Expectation is an expect step.
type Expectation struct {
	Kind    ExpectKind
	Leader  election.NodeID
	Leaders []election.NodeID
	On      OnKind
	OnIDs   []election.NodeID
	// Within is how long the expectation may take to hold; For, when
	// set, how long it must then keep holding without a break.
	Within time.Duration
	For    time.Duration
}

func (e *Expectation) String() string {
	var what string
	switch e.Kind {
	case ExpectLeader:
		what = fmt.Sprintf("leader %d", e.Leader)
	case ExpectHighest:
		what = "leader highest"
	case ExpectAny:
		what = "leader any"
	case ExpectNone:
		what = "leader none"
	case ExpectLeaders:
		what = "leaders " + idList(e.Leaders)
	}
	on := string(e.On)
	if e.On == OnIDs {
		on = idList(e.OnIDs)
	}
	if e.For > 0 {
		return fmt.Sprintf("%s on %s within %v for %v", what, on, e.Within, e.For)
	}
	return fmt.Sprintf("%s on %s within %v", what, on, e.Within)
}

// Expected reports the verdict the scenario expects from checker name.
func (s *Scenario) Expected(name check.Name) bool {
	if v, ok := s.ExpectCheckers[name]; ok {
		return v
	}
	return true
}

// Members is the cluster's IDs in ring order.
func (s *Scenario) Members() []election.NodeID { return slices.Clone(s.Cluster.IDs) }

func idList(ids []election.NodeID) string { return chaos.IDList(ids) }
