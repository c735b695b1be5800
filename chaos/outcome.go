package chaos

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
)

// Outcome is what a backend does with a fault, decided once for every
// backend by Decide: the fault to carry out, and a note for what it leaves
// alone because it is already so (killing a node that is already down,
// healing a network with nothing cut). A fault whose every part is already
// so is a recorded no-op: its invoke and ok records are written as usual,
// the ok record carrying the note.
type Outcome struct {
	// Fault is what to carry out: the requested fault with the nodes
	// already in the requested state left out, and loss rounded to the
	// whole percent both worlds can express.
	Fault Fault
	// Note says what was already so ("no-op: node 3 is already down");
	// empty when everything was carried out.
	Note string
}

// NoOpNote begins the note of a fault that changed nothing: every part of
// it was already so. Such a fault is recorded but measured as nothing (no
// failover, no return).
const NoOpNote = "no-op: "

// IsNoOp reports whether note is a no-op fault's (NoOpNote).
func IsNoOp(note string) bool { return strings.HasPrefix(note, NoOpNote) }

// InForceNote is the note of a fault recorded at the start of an attached
// history (State.InForce): it was in force before the history began, so
// it stands for the world as found, not for something that happened in
// it. Like a no-op it is measured as nothing.
const InForceNote = "in force when the history began"

// Unmeasured reports whether a fault with this note is measured as
// nothing — no failover, no return: a no-op, or one in force before the
// history began.
func Unmeasured(note string) bool { return IsNoOp(note) || note == InForceNote }

// Decide checks f against the cluster's state s and its membership and
// returns what to carry out, or an error naming what is wrong and what
// would be valid. It is the one place the edges of every fault are decided
// (docs/chaos.md lists them); every backend calls it before it acts, so a
// fault has one meaning in every world:
//
//   - kill or stop a node that is down, restart a running one, pause a
//     paused one, resume one that is not paused: a recorded no-op for
//     that node;
//   - pause or resume a node that is down: an error (restart it first);
//   - kill or stop a paused node: it goes down (and is no longer paused);
//   - loss p: 0 ≤ p ≤ 1, rounded to whole percents, 0 < p < 0.01 an
//     error (0 removes loss, 1 drops everything); delay and jitter ≥ 0
//     (0 and 0 remove delay); removing loss or delay from a node that has
//     none in force is a recorded no-op for it; loss or delay with no
//     target nodes: an error;
//   - a partition that cuts no link, or cuts a node from itself: an error;
//   - heal with nothing cut, lost or delayed: a recorded no-op; heal never
//     restarts or resumes nodes;
//   - any node that is not a member: an error.
func Decide(f Fault, s State, members []election.NodeID) (Outcome, error) {
	k := kindOf(f.Op)
	if k == nil {
		return Outcome{}, fmt.Errorf("unknown fault %q (valid: %v)", f.Op, Ops)
	}
	if err := checkMembers(f, members); err != nil {
		return Outcome{}, err
	}
	return k.decide(f, s, members)
}

// decidePartition refuses a partition that cuts nothing or cuts a node
// from itself.
func decidePartition(f Fault, _ State, members []election.NodeID) (Outcome, error) {
	links := f.CutLinks(members)
	if len(links) == 0 {
		return Outcome{}, fmt.Errorf("partition: it cuts no link (give groups with nodes on different sides, or links)")
	}
	for _, l := range links {
		if l[0] == l[1] {
			return Outcome{}, fmt.Errorf("partition: link %d->%d cuts a node from itself", l[0], l[1])
		}
	}
	return Outcome{Fault: Fault{Op: Partition, Nodes: f.Nodes, Links: links}}, nil
}

// decideHeal: healing nothing is a recorded no-op.
func decideHeal(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if !s.NetworkFaulted() {
		return Outcome{Fault: f, Note: NoOpNote + "nothing is cut, lost or delayed"}, nil
	}
	return Outcome{Fault: f}, nil
}

// UnsupportedError is the outcome of a fault kind a backend cannot carry
// out: explicit, so that the backend conformance suite can check it and a
// person is told which world lacks what.
type UnsupportedError struct {
	Op      Op
	Backend string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: unsupported on %s", e.Op, e.Backend)
}

// Unsupported is the error of fault op on a backend that cannot do it.
func Unsupported(op Op, backend string) error { return &UnsupportedError{Op: op, Backend: backend} }

// checkMembers refuses any node outside the membership, wherever it is named.
func checkMembers(f Fault, members []election.NodeID) error {
	// where names the part of f that holds a stranger; it is only written
	// then (the explorer checks thousands of faults a second).
	stranger := func(id election.NodeID, where func() string) error {
		return fmt.Errorf("%s: node %d is not a member (members: %s)", where(), id, IDList(members))
	}
	for _, id := range f.Nodes {
		if !slices.Contains(members, id) {
			return stranger(id, func() string { return string(f.Op) })
		}
	}
	for _, g := range f.Groups {
		for _, id := range g {
			if !slices.Contains(members, id) {
				return stranger(id, func() string { return "partition group " + IDList(g) })
			}
		}
	}
	for _, l := range f.Links {
		for _, id := range l {
			if !slices.Contains(members, id) {
				return stranger(id, func() string { return fmt.Sprintf("partition link %d->%d", l[0], l[1]) })
			}
		}
	}
	return nil
}

// decideNodes keeps the nodes a lifecycle fault changes and notes the rest.
func decideNodes(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if len(f.Nodes) == 0 {
		return Outcome{}, fmt.Errorf("%s: no target nodes", f.Op)
	}
	out := Outcome{Fault: f}
	out.Fault.Nodes = nil
	var already []string
	for _, id := range f.Nodes {
		up, paused := s.Up[id], s.Paused[id]
		var so string // what is already so, when it is
		switch f.Op {
		case Kill, Stop:
			if !up {
				so = "already down"
			}
		case Restart:
			if up {
				so = "already running"
			}
		case Pause:
			if !up {
				return Outcome{}, fmt.Errorf("pause: node %d is down; restart it first", id)
			}
			if paused {
				so = "already paused"
			}
		case Resume:
			if !up {
				return Outcome{}, fmt.Errorf("resume: node %d is down, not paused; restart it instead", id)
			}
			if !paused {
				so = "not paused"
			}
		}
		if so != "" {
			already = append(already, fmt.Sprintf("node %d is %s", id, so))
			continue
		}
		out.Fault.Nodes = append(out.Fault.Nodes, id)
	}
	out.Note = noteAlready(already, len(out.Fault.Nodes))
	return out, nil
}

// decideLoss checks the probability and rounds it to a whole percent, the
// finest loss the container rules express, so both worlds drop the same
// fraction.
func decideLoss(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if len(f.Nodes) == 0 {
		return Outcome{}, fmt.Errorf("loss: no target nodes (to hit every node, target all)")
	}
	p := LossPercent.Num(f.Params)
	if p < 0 || p > 1 || math.IsNaN(p) {
		return Outcome{}, fmt.Errorf("loss %v: want a probability from 0 (no loss) to 1 (every packet)", p)
	}
	// Refused rather than rounded up or down: 0.004 is neither the 1 %
	// the rules would drop nor the none that 0 means.
	if p > 0 && p < 0.01 {
		return Outcome{}, fmt.Errorf("loss %v: below 1%%, the finest loss the container rules express (use 0 for none, or 0.01 to 1)", p)
	}
	if r := math.Round(p*100) / 100; r != p {
		f.Params = f.Params.With(LossPercent.Of(r))
	}
	if p > 0 {
		return Outcome{Fault: f}, nil
	}
	return Outcome{Fault: f, Note: noteUntouched(f.Nodes, s, "loss")}, nil
}

// decideDelay checks the delay; 0 with no jitter removes it.
func decideDelay(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if len(f.Nodes) == 0 {
		return Outcome{}, fmt.Errorf("delay: no target nodes (to delay every node, target all)")
	}
	d, j := DelayMS.Dur(f.Params), DelayJitter.Dur(f.Params)
	if d < 0 || j < 0 {
		return Outcome{}, fmt.Errorf("delay %v jitter %v: neither may be negative (0 and 0 remove the delay)", d, j)
	}
	if d > 0 || j > 0 {
		return Outcome{Fault: f}, nil
	}
	return Outcome{Fault: f, Note: noteUntouched(f.Nodes, s, "delay")}, nil
}

// noteUntouched is the note of a removal of loss or delay: which targets
// had neither in force, so that the removal changes nothing for them.
// A node with delay only still counts as touched by a loss removal;
// carrying that one out changes nothing either, it just goes unnoted.
func noteUntouched(nodes []election.NodeID, s State, what string) string {
	var none []string
	for _, id := range nodes {
		if !s.Degraded(id) {
			none = append(none, fmt.Sprintf("node %d has no %s", id, what))
		}
	}
	switch {
	case len(none) == 0:
		return ""
	case len(none) == len(nodes):
		return NoOpNote + strings.Join(none, ", ")
	}
	return "left alone: " + strings.Join(none, ", ")
}
