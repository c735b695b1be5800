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
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
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
	Checkers []string
	// ExpectCheckers maps a checker to the verdict the scenario expects
	// from it: true = pass, false = fail (a scenario built to show split
	// brain expects no-split-brain to fail). Checkers not named here are
	// expected to pass.
	ExpectCheckers map[string]bool
	// LivenessBound is the liveness checker's bound after the last fault
	// (zero: the checker's default).
	LivenessBound time.Duration
}

// Cluster is the cluster a scenario starts.
type Cluster struct {
	Algorithm string
	// IDs in ring order; len(IDs) is the node count.
	IDs    []election.NodeID
	Quorum election.QuorumMode
	// Timing with defaults filled in.
	Timing election.Timing
}

// Op is what a step does: one of the chaos operations or wait/expect.
type Op string

const (
	OpWait   Op = "wait"
	OpExpect Op = "expect"
	// The fault operations carry the names of package chaos.
	OpKill      Op = "kill"
	OpStop      Op = "stop"
	OpRestart   Op = "restart"
	OpPause     Op = "pause"
	OpResume    Op = "resume"
	OpPartition Op = "partition"
	OpHeal      Op = "heal"
	OpLoss      Op = "loss"
	OpDelay     Op = "delay"
)

// ops is every step operation in the order the docs list them.
var ops = []Op{OpWait, OpExpect, OpKill, OpStop, OpRestart, OpPause, OpResume, OpPartition, OpHeal, OpLoss, OpDelay}

// IsFault reports whether the step injects (or heals) a fault.
func (o Op) IsFault() bool { return o != OpWait && o != OpExpect }

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

	// Target of kill, stop, restart, pause, resume, loss, delay and of
	// the isolate and bridge partition shapes.
	Target Target
	// Partition of a partition step.
	Partition *Partition
	// Loss is the fraction (0..1] of packets dropped; Delay and Jitter
	// the added latency.
	Loss          float64
	Delay, Jitter time.Duration
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
	case OpPartition:
		return "partition " + s.Partition.String()
	case OpHeal:
		return "heal"
	case OpLoss:
		return fmt.Sprintf("loss %g%% %s", s.Loss*100, s.Target)
	case OpDelay:
		if s.Jitter > 0 {
			return fmt.Sprintf("delay %v±%v %s", s.Delay, s.Jitter, s.Target)
		}
		return fmt.Sprintf("delay %v %s", s.Delay, s.Target)
	}
	return fmt.Sprintf("%s %s", s.Op, s.Target)
}

// TargetKind is how a target is chosen.
type TargetKind string

const (
	// TargetLeader: the leader the most live nodes view.
	TargetLeader TargetKind = "leader"
	// TargetFollower: a random live node that is not that leader.
	TargetFollower TargetKind = "follower"
	// TargetOne: one random node among those the operation applies to.
	TargetOne TargetKind = "one"
	// TargetMinority, TargetMajority: a random ⌊(n−1)/2⌋ or ⌊n/2⌋+1 of
	// the n configured members, among those the operation applies to.
	TargetMinority TargetKind = "minority"
	TargetMajority TargetKind = "majority"
	// TargetAll: every node the operation applies to.
	TargetAll TargetKind = "all"
	// TargetDown: every killed or stopped node (restart).
	TargetDown TargetKind = "down"
	// TargetPaused: every paused node (resume).
	TargetPaused TargetKind = "paused"
	// TargetIDs: the listed IDs.
	TargetIDs TargetKind = "ids"
)

// Target is a symbolic fault target.
type Target struct {
	Kind TargetKind
	IDs  []election.NodeID
}

func (t Target) String() string {
	if t.Kind == TargetIDs {
		return idList(t.IDs)
	}
	return string(t.Kind)
}

// targetsFor lists the symbolic targets that make sense for each operation.
// A restart of "the leader" or a pause of "the paused nodes" means nothing.
var targetsFor = map[Op][]TargetKind{
	OpKill:    {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll},
	OpStop:    {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll},
	OpPause:   {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll},
	OpRestart: {TargetDown, TargetOne, TargetAll},
	OpResume:  {TargetPaused, TargetOne, TargetAll},
	OpLoss:    {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll},
	OpDelay:   {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll},
	// Partition shapes with a target.
	"isolate": {TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority},
	"bridge":  {TargetLeader, TargetFollower, TargetOne},
}

// Partition shapes.
const (
	ShapeHalves         = "halves"
	ShapeMajoritiesRing = "majorities-ring"
	ShapeBridge         = "bridge"
	ShapeIsolate        = "isolate"
)

var shapes = []string{ShapeHalves, ShapeMajoritiesRing, ShapeBridge, ShapeIsolate}

// Partition is one of: explicit Groups, a named Shape (with a Target for
// isolate and, optionally, bridge), a two-way Cut of one link, or a OneWay
// cut [from, to].
type Partition struct {
	Groups [][]election.NodeID
	Shape  string
	Target Target
	Cut    []election.NodeID // [a, b]
	OneWay []election.NodeID // [from, to]
}

func (p *Partition) String() string {
	switch {
	case len(p.Groups) > 0:
		parts := make([]string, len(p.Groups))
		for i, g := range p.Groups {
			parts[i] = idList(g)
		}
		return strings.Join(parts, "|")
	case p.Shape == ShapeIsolate || (p.Shape == ShapeBridge && p.Target.Kind != ""):
		return fmt.Sprintf("%s %s", p.Shape, p.Target)
	case p.Shape != "":
		return p.Shape
	case len(p.Cut) == 2:
		return fmt.Sprintf("cut %d-%d", p.Cut[0], p.Cut[1])
	case len(p.OneWay) == 2:
		return fmt.Sprintf("one-way %d->%d", p.OneWay[0], p.OneWay[1])
	}
	return "?"
}

// ExpectKind is what an expectation asserts about leaders.
type ExpectKind string

const (
	// ExpectLeader: every node in On views Leader.
	ExpectLeader ExpectKind = "leader"
	// ExpectHighest: every node in On views the highest live ID.
	ExpectHighest ExpectKind = "highest"
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

// Checkers is every checker a scenario may name.
var Checkers = []string{"agreement", "bully-max", "no-split-brain", "epoch-safety", "liveness", "message-complexity"}

// Expected reports the verdict the scenario expects from checker name.
func (s *Scenario) Expected(name string) bool {
	if v, ok := s.ExpectCheckers[name]; ok {
		return v
	}
	return true
}

// Members is the cluster's IDs in ring order.
func (s *Scenario) Members() []election.NodeID { return slices.Clone(s.Cluster.IDs) }

func idList(ids []election.NodeID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(int(id))
	}
	return "[" + strings.Join(parts, ",") + "]"
}
