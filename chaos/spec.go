package chaos

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
)

// This file is the fault language, defined once: the operations (Op, in
// chaos.go), partition shapes, symbolic targets and the symbolic fault a
// scenario step or the explorer writes (Spec). Spec.Resolve turns one into a
// Fault against the cluster's state at the moment it is applied; every
// backend then applies that Fault with the outcomes of outcome.go.

// Shape is a named partition.
type Shape string

const (
	// Halves: IDs sorted, the larger half holds the lower IDs (5 nodes:
	// {1,2,3} | {4,5}), so the majority lacks the highest ID — where
	// Bully and quorum Bully disagree.
	Halves Shape = "halves"
	// MajoritiesRing: Jepsen's; every node keeps just enough of its
	// nearest ring neighbours to see a majority counting itself.
	MajoritiesRing Shape = "majorities-ring"
	// Bridge: two sides sharing one node (not transitive).
	Bridge Shape = "bridge"
	// Isolate: the target alone against the rest.
	Isolate Shape = "isolate"
	// Engines: every node on one engine cut from every node on every
	// other, as the cluster's placement (State.Placement) groups them:
	// the shape an availability-zone outage takes. A cluster on one
	// engine has nothing to cut along.
	Engines Shape = "engines"
)

// Shapes lists every shape, in the order the docs list them.
var Shapes = []Shape{Halves, MajoritiesRing, Bridge, Isolate, Engines}

// TargetKind is how a target is chosen when the fault is applied.
type TargetKind string

const (
	// TargetLeader: the leader the most live nodes view (State.CommonLeader).
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

// IDs is the target of exactly these nodes.
func IDs(ids ...election.NodeID) Target { return Target{Kind: TargetIDs, IDs: ids} }

func (t Target) String() string {
	if t.Kind == TargetIDs {
		return IDList(t.IDs)
	}
	return string(t.Kind)
}

// IsRandom reports whether resolving t draws from the run's random source
// (follower, one, minority, majority); the others depend on the state only.
func (t Target) IsRandom() bool {
	switch t.Kind {
	case TargetFollower, TargetOne, TargetMinority, TargetMajority:
		return true
	}
	return false
}

// crashTargets are the targets of faults that hurt running nodes.
var crashTargets = []TargetKind{TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority, TargetAll}

// TargetsFor lists the symbolic targets that make sense for op (its
// kind's). A restart of "the leader" or a pause of "the paused nodes"
// means nothing.
func TargetsFor(op Op) []TargetKind {
	if k := kindOf(op); k != nil {
		return k.Targets
	}
	return nil
}

// TargetsForShape lists the targets a shape takes (none: it takes none).
func TargetsForShape(s Shape) []TargetKind {
	switch s {
	case Isolate:
		return []TargetKind{TargetLeader, TargetFollower, TargetOne, TargetMinority, TargetMajority}
	case Bridge:
		return []TargetKind{TargetLeader, TargetFollower, TargetOne}
	}
	return nil
}

// Partition is exactly one of: explicit Groups, a named Shape (with a
// Target for isolate and, optionally, bridge), a two-way Cut of one link,
// or a OneWay cut [from, to].
type PartitionSpec struct {
	Groups [][]election.NodeID
	Shape  Shape
	Target Target
	Cut    []election.NodeID // [a, b]
	OneWay []election.NodeID // [from, to]
}

func (p *PartitionSpec) String() string {
	switch {
	case len(p.Groups) > 0:
		parts := make([]string, len(p.Groups))
		for i, g := range p.Groups {
			parts[i] = IDList(g)
		}
		return strings.Join(parts, "|")
	case p.Shape == Isolate || (p.Shape == Bridge && p.Target.Kind != ""):
		return fmt.Sprintf("%s %s", p.Shape, p.Target)
	case p.Shape != "":
		return string(p.Shape)
	case len(p.Cut) == 2:
		return fmt.Sprintf("cut %d-%d", p.Cut[0], p.Cut[1])
	case len(p.OneWay) == 2:
		return fmt.Sprintf("one-way %d->%d", p.OneWay[0], p.OneWay[1])
	}
	return "?"
}

// Spec is one fault as a person (or the explorer) writes it: the operation
// with symbolic targets, resolved only when it is applied.
type Spec struct {
	Op Op
	// Target of kill, stop, restart, pause, resume, loss and delay.
	Target Target
	// Partition of a partition.
	Partition *PartitionSpec
	// Params are the values of its kind (Kind.Params): a loss's
	// fraction, a delay and its jitter, a clock's rate and jump.
	Params Params
}

// String is the fault as a person would say it, for progress lines:
// "kill leader", "delay 20ms±5ms [3]".
func (s Spec) String() string {
	k := kindOf(s.Op)
	switch {
	case s.Op == Partition:
		return "partition " + s.Partition.String()
	case k == nil || len(k.Targets) == 0:
		return string(s.Op)
	case k.say != nil:
		return fmt.Sprintf("%s %s %s", s.Op, k.say(s.Params), s.Target)
	case !s.Params.IsZero():
		return fmt.Sprintf("%s %s %s", s.Op, s.Params, s.Target)
	}
	return fmt.Sprintf("%s %s", s.Op, s.Target)
}

// TargetText is what the history records as the fault's target: the target
// as written ("leader", "[3]"), the partition's form, or nothing for heal.
func (s Spec) TargetText() string {
	switch s.Op {
	case Heal:
		return ""
	case Partition:
		return s.Partition.String()
	}
	return s.Target.String()
}

// Clone is a deep copy (the explorer's shrinker edits copies).
func (s Spec) Clone() Spec {
	s.Target.IDs = slices.Clone(s.Target.IDs)
	if s.Partition != nil {
		p := *s.Partition
		p.Groups = make([][]election.NodeID, len(s.Partition.Groups))
		for i, g := range s.Partition.Groups {
			p.Groups[i] = slices.Clone(g)
		}
		if len(p.Groups) == 0 {
			p.Groups = nil
		}
		p.Target.IDs = slices.Clone(p.Target.IDs)
		p.Cut, p.OneWay = slices.Clone(p.Cut), slices.Clone(p.OneWay)
		s.Partition = &p
	}
	return s
}

// IDList formats IDs as the scenario files write them: [1,2,3].
func IDList(ids []election.NodeID) string {
	return string(append(election.AppendIDs([]byte{'['}, ids), ']'))
}
