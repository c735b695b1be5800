package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
)

// A Kind is everything the testbed knows about one fault operation, in one
// place: its words, the values it carries, what it may target, its edges
// (decide), its effect on the world model (apply), what ends it, how a
// report draws it and how the explorer draws it. Whatever must know a
// fault asks its Kind — the scenario parser and writer, `ringleader
// fault`, the resolver, Decide, State.Apply, heal, the timeline's spans,
// the report, the explorer, help and docs tables — so adding a fault kind
// is adding one entry to kindList (with its Params and Draws), plus a
// hook in each backend that can carry it out and a sample in the backend
// conformance suite (docs/chaos.md, "Adding a fault kind").
type Kind struct {
	Op Op
	// Family groups kinds for people and for the explorer's defaults.
	Family Family
	// Summary is the one line help and docs tables give.
	Summary string
	// Params are the values a step of this kind carries beyond its target:
	// the YAML keys of a scenario step, the flags of `ringleader fault`,
	// the keys of a fault's Params and of the history record's params.
	Params []Param
	// Targets are the symbolic targets it takes; nil when it takes none
	// (heal) or has its own form (partition).
	Targets []TargetKind
	// WordsTarget is the target `ringleader fault` assumes when none is
	// given (loss 10 hits all); empty: the target must be given.
	WordsTarget TargetKind
	// EndedBy lists the operations that end it for the nodes they name (one
	// that names none ends it for all), when Restores accepts them; empty:
	// it is a moment, not a span (restart, resume, heal).
	EndedBy []Op
	// Mark is how the report draws it.
	Mark Mark
	// Draws are how the explorer draws it (draw.go).
	Draws []Draw

	// pool: the nodes symbolic targets choose from (only a running node can
	// be killed, only a down one restarted).
	pool func(s State, id election.NodeID) bool
	// decide checks f against the state and returns what to carry out
	// (outcome.go says what every edge means).
	decide func(f Fault, s State, members []election.NodeID) (Outcome, error)
	// apply is the fault's effect on the world model.
	apply func(s *State, f Fault, members []election.NodeID)
	// weaken lists the faults one notch weaker, for the shrinker.
	weaken func(sp Spec, resolved Fault, members []election.NodeID) []Spec
	// checkParams, when set, checks a step's values together (a clock
	// step gives a rate or a jump).
	checkParams func(Spec) error
	// restores, when set, says whether a fault of an EndedBy operation
	// ends this kind (a clock fault ends a clock span only when it
	// restores the rate).
	restores func(Fault) bool
	// net marks a per-node network fault, one State.Net holds per node
	// (loss, delay); its apply is applyNet. Heal ends every one (a test
	// holds each such kind's EndedBy to name heal).
	net bool
	// say, when set, is how a person says its values ("20ms±5ms"), for
	// Spec.String; else they are listed as key=value.
	say func(Params) string
}

// Family groups fault kinds.
type Family string

const (
	// FamilyProcess faults act on a node's process.
	FamilyProcess Family = "process"
	// FamilyNetwork faults act on the links between nodes.
	FamilyNetwork Family = "network"
	// FamilyClock faults act on the clock a node's election machine reads.
	FamilyClock Family = "clock"
)

// MarkShape is how a report draws a fault.
type MarkShape string

const (
	// MarkLine: a solid line at the moment it took effect.
	MarkLine MarkShape = "line"
	// MarkBand: a translucent band from when it took effect to its end.
	MarkBand MarkShape = "band"
	// MarkDash: a dashed line (what ends other faults).
	MarkDash MarkShape = "dash"
)

// Mark is a kind's look in reports: its shape, colour and legend label.
// Kinds that share a legend label share one legend entry.
type Mark struct {
	Shape  MarkShape
	Colour string
	Legend string
}

// Clock is the clock fault: the clock a node's election machine reads runs
// at a rate, or jumps.
const Clock Op = "clock"

// Jam is the jammed link: every message to and from its targets is held,
// neither lost nor slowed, until a heal ends it; then the held messages
// are delivered at once, in the order they arrived. Both worlds hold a
// message where it arrives — its receiver holds it, so the links (and a
// container's NATS routes) stay up — and deliver it through the normal
// receive path at the heal, recorded then. A receiver holds at most
// JamHeld messages; past that it counts and drops the overflow. What a
// node holds goes with its process: a receiver killed or stopped loses
// what it held (as any message to a down node is lost), while what a
// killed sender sent and a live receiver holds still arrives at the heal.
const Jam Op = "jam"

// JamHeld bounds the messages one receiver holds for jammed links, in
// either world (the node runtime's hold queue, the simulator's): past it a
// message is counted as dropped, not held.
const JamHeld = 4096

// The report's colours, one per mark.
const (
	killColour      = "#c62828"
	pauseColour     = "#283593"
	undoColour      = "#2e7d32"
	partitionColour = "#7e57c2"
	lossColour      = "#ef6c00"
	delayColour     = "#00838f"
	clockColour     = "#6d4c41"
	jamColour       = "#ad1457"
)

var (
	crashMark = Mark{Shape: MarkLine, Colour: killColour, Legend: "kill / stop"}
	undoMark  = Mark{Shape: MarkDash, Colour: undoColour, Legend: "restart / resume / heal"}
)

// kindList is every fault kind, in the order help and docs list them.
var kindList = []Kind{
	{
		Op: Kill, Family: FamilyProcess, Summary: "SIGKILL: the node and its NATS server vanish",
		Targets: crashTargets, EndedBy: []Op{Restart}, Mark: crashMark,
		pool: isUp, decide: decideNodes,
		apply: func(s *State, f Fault, _ []election.NodeID) { goDown(s, f.Nodes) },
		Draws: killDraws, weaken: weakenKill,
	},
	{
		Op: Stop, Family: FamilyProcess, Summary: "SIGTERM: the node shuts down gracefully",
		Targets: crashTargets, EndedBy: []Op{Restart}, Mark: crashMark,
		pool: isUp, decide: decideNodes,
		apply: func(s *State, f Fault, _ []election.NodeID) { goDown(s, f.Nodes) },
		Draws: stopDraws,
	},
	{
		Op: Restart, Family: FamilyProcess, Summary: "start a killed or stopped node again from what it persisted",
		Targets: []TargetKind{TargetDown, TargetOne, TargetAll}, Mark: undoMark,
		pool: func(s State, id election.NodeID) bool { return !s.Up[id] }, decide: decideNodes,
		apply: func(s *State, f Fault, _ []election.NodeID) {
			for _, id := range f.Nodes {
				s.Up[id] = true
				delete(s.Paused, id)
				delete(s.Views, id) // a new process has no view yet
				if c, ok := s.Clocks[id]; ok {
					// The machine keeps its rate; the process that
					// read the jumps is gone.
					c.Jumped = 0
					s.Clocks[id] = c
					if c.Rate == 1 {
						delete(s.Clocks, id)
					}
				}
			}
		},
		Draws: restartDraws,
	},
	{
		Op: Pause, Family: FamilyProcess, Summary: "freeze the node (docker pause; a frozen process in the simulator)",
		Targets: crashTargets, EndedBy: []Op{Resume, Restart, Kill, Stop},
		Mark: Mark{Shape: MarkLine, Colour: pauseColour, Legend: "pause"},
		pool: State.Live, decide: decideNodes,
		apply: func(s *State, f Fault, _ []election.NodeID) {
			for _, id := range f.Nodes {
				s.Paused[id] = true
			}
		},
		Draws: pauseDraws,
	},
	{
		Op: Resume, Family: FamilyProcess, Summary: "thaw a paused node",
		Targets: []TargetKind{TargetPaused, TargetOne, TargetAll}, Mark: undoMark,
		pool: func(s State, id election.NodeID) bool { return s.Up[id] && s.Paused[id] }, decide: decideNodes,
		apply: func(s *State, f Fault, _ []election.NodeID) {
			for _, id := range f.Nodes {
				delete(s.Paused, id)
			}
		},
		Draws: resumeDraws,
	},
	{
		Op: Partition, Family: FamilyNetwork, Summary: "cut links: groups, a named shape, a two-way cut or a one-way cut",
		EndedBy: []Op{Heal}, Mark: Mark{Shape: MarkBand, Colour: partitionColour, Legend: "partition in force"},
		pool: isUp, decide: decidePartition,
		apply: func(s *State, f Fault, members []election.NodeID) {
			links := f.Links // as Decide gives a partition: its links
			if len(f.Groups) > 0 {
				links = f.CutLinks(members)
			}
			for _, l := range links {
				s.Cut[l] = true
			}
		},
		Draws: partitionDraws, weaken: weakenPartition,
	},
	{
		Op: Heal, Family: FamilyNetwork, Summary: "end every network fault: cuts, loss, delay, jams (never restarts, resumes or resets clocks)",
		Mark: undoMark, decide: decideHeal, apply: applyHeal,
		Draws: healDraws,
	},
	{
		Op: Loss, Family: FamilyNetwork, Summary: "drop a fraction of the packets to and from the nodes",
		Params:  []Param{LossPercent},
		Targets: crashTargets, WordsTarget: TargetAll, EndedBy: []Op{Heal}, Mark: Mark{Shape: MarkBand, Colour: lossColour, Legend: "loss in force"},
		pool: isUp, decide: decideLoss, apply: applyNet(Params.IsZero), net: true,
		say:   func(p Params) string { return fmt.Sprintf("%g%%", LossPercent.Num(p)*100) },
		Draws: lossDraws,
	},
	{
		Op: Delay, Family: FamilyNetwork, Summary: "delay the packets to and from the nodes",
		Params:  []Param{DelayMS, DelayJitter},
		Targets: crashTargets, WordsTarget: TargetAll, EndedBy: []Op{Heal}, Mark: Mark{Shape: MarkBand, Colour: delayColour, Legend: "delay in force"},
		pool: isUp, decide: decideDelay, apply: applyNet(Params.IsZero), net: true,
		say: func(p Params) string {
			if j := DelayJitter.Dur(p); j > 0 {
				return fmt.Sprintf("%v±%v", DelayMS.Dur(p), j)
			}
			return DelayMS.Dur(p).String()
		},
		Draws: delayDraws,
	},
	{
		Op: Jam, Family: FamilyNetwork, Summary: "hold every message to and from the nodes until heal, then deliver them in order, in a burst",
		Targets: crashTargets, EndedBy: []Op{Heal}, Mark: Mark{Shape: MarkBand, Colour: jamColour, Legend: "jam in force"},
		pool: isUp, decide: decideJam, apply: applyNet(nil), net: true,
		Draws: jamDraws,
	},
	{
		Op: Clock, Family: FamilyClock, Summary: "the clock the node's election machine reads runs at a rate, or jumps (histories keep true time)",
		Params: []Param{ClockRate, ClockJump},
		checkParams: func(sp Spec) error {
			if sp.Params.IsZero() {
				return fmt.Errorf("give rate (1 is real speed, 0.5 half speed) or jump (a duration such as 2s or -500ms), or both")
			}
			return nil
		},
		Targets: crashTargets, EndedBy: []Op{Clock},
		Mark: Mark{Shape: MarkBand, Colour: clockColour, Legend: "clock skewed"},
		pool: isUp, decide: decideClock, apply: applyClock,
		restores: func(f Fault) bool { return ClockRate.Num(f.Params) == 1 && ClockJump.Dur(f.Params) == 0 },
		say:      func(p Params) string { return ClockText(ClockRate.Num(p), ClockJump.Dur(p)) },
		Draws:    clockDraws, weaken: weakenClock,
	},
}

// kindOf is op's descriptor, nil for an unknown operation: a scan of Ops
// (kindList's operations, in its order), which for a dozen kinds costs
// less than hashing the name and reads three cache lines, not one per
// descriptor; and a pointer, as a Kind is a couple of hundred bytes. The
// worlds look a kind up on every fault they apply and the checkers on
// every fault they replay.
func kindOf(op Op) *Kind {
	for i, o := range Ops {
		if o == op {
			return &kindList[i]
		}
	}
	return nil
}

// Kinds lists every fault kind, in the order help and docs list them.
func Kinds() []Kind { return slices.Clone(kindList) }

// KindOf is op's kind; ok is false for an unknown operation.
func KindOf(op Op) (Kind, bool) {
	if k := kindOf(op); k != nil {
		return *k, true
	}
	return Kind{}, false
}

// Ends reports whether later ends a span of a fault of this kind on node
// id (later names no nodes: it ends the span for all).
func (k Kind) Ends(later Fault, id election.NodeID) bool {
	if !slices.Contains(k.EndedBy, later.Op) {
		return false
	}
	if k.restores != nil && !k.restores(later) {
		return false
	}
	return len(later.Nodes) == 0 || slices.Contains(later.Nodes, id)
}

// IsSpan reports whether a fault of this kind lasts until something ends
// it (a kill, a partition) rather than being a moment (a restart, a heal).
func (k Kind) IsSpan() bool { return len(k.EndedBy) > 0 }

// LetsBackIn reports whether op is a moment that ends other faults —
// restart, resume, heal — after which the returns checker measures how the
// cluster takes nodes back.
func LetsBackIn(op Op) bool {
	if k := kindOf(op); k == nil || k.IsSpan() {
		return false
	}
	for _, k := range kindList {
		if slices.Contains(k.EndedBy, op) {
			return true
		}
	}
	return false
}

func isUp(s State, id election.NodeID) bool { return s.Up[id] }

// goDown takes nodes down: not running, not paused, no view.
func goDown(s *State, ids []election.NodeID) {
	for _, id := range ids {
		s.Up[id] = false
		delete(s.Paused, id)
		delete(s.Views, id)
	}
}

// applyNet is the apply of a per-node network fault (Kind.net): State.Net
// holds its values on each node until a fault of the kind whose values
// lift it (loss 0), or a heal.
func applyNet(lifts func(Params) bool) func(s *State, f Fault, _ []election.NodeID) {
	return func(s *State, f Fault, _ []election.NodeID) {
		off := lifts != nil && lifts(f.Params)
		for _, id := range f.Nodes {
			if off {
				delete(s.Net, NetKey{f.Op, id})
			} else {
				s.Net[NetKey{f.Op, id}] = f.Params
			}
		}
	}
}

// applyHeal ends every network fault: the cut links and every per-node
// one (every kind State.Net holds is ended by heal).
func applyHeal(s *State, _ Fault, _ []election.NodeID) {
	clear(s.Cut)
	clear(s.Net)
}

func applyClock(s *State, f Fault, _ []election.NodeID) {
	rate, jump := ClockRate.Num(f.Params), ClockJump.Dur(f.Params)
	for _, id := range f.Nodes {
		c := s.ClockOf(id)
		if rate > 0 {
			c.Rate = rate
		}
		c.Jumped += jump
		if c.Rate == 1 && c.Jumped == 0 {
			delete(s.Clocks, id)
			continue
		}
		s.Clocks[id] = c
	}
}

// decideClock checks a clock fault: a rate within clock's bounds, a jump
// within its bound, at least one of them; a rate a node already runs at,
// with no jump, is a recorded no-op for it.
func decideClock(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if len(f.Nodes) == 0 {
		return Outcome{}, fmt.Errorf("clock: no target nodes (to skew every node, target all)")
	}
	rate, jump := ClockRate.Num(f.Params), ClockJump.Dur(f.Params)
	if rate == 0 && jump == 0 {
		return Outcome{}, fmt.Errorf("clock: give a rate (1 is real speed) or a jump (a duration, negative to go back)")
	}
	if rate != 0 {
		if err := clock.CheckRate(rate); err != nil {
			return Outcome{}, err
		}
	}
	if err := clock.CheckJump(jump); err != nil {
		return Outcome{}, err
	}
	out := Outcome{Fault: f}
	out.Fault.Nodes = nil
	var already []string
	for _, id := range f.Nodes {
		if !s.Up[id] {
			return Outcome{}, fmt.Errorf("clock: node %d is down; restart it first", id)
		}
		if jump == 0 && s.ClockOf(id).Rate == rate {
			already = append(already, fmt.Sprintf("node %d's clock already runs at %g×", id, rate))
			continue
		}
		out.Fault.Nodes = append(out.Fault.Nodes, id)
	}
	out.Note = noteAlready(already, len(out.Fault.Nodes))
	return out, nil
}

// decideJam checks a jam: it needs targets, and a node already jammed is
// left alone (a recorded no-op when every target is).
func decideJam(f Fault, s State, _ []election.NodeID) (Outcome, error) {
	if len(f.Nodes) == 0 {
		return Outcome{}, fmt.Errorf("jam: no target nodes (to jam every node, target all)")
	}
	out := Outcome{Fault: f}
	out.Fault.Nodes = nil
	var already []string
	for _, id := range f.Nodes {
		if _, ok := s.NetOf(Jam, id); ok {
			already = append(already, fmt.Sprintf("node %d is already jammed", id))
			continue
		}
		out.Fault.Nodes = append(out.Fault.Nodes, id)
	}
	out.Note = noteAlready(already, len(out.Fault.Nodes))
	return out, nil
}

// jamDraws: one node jammed, the leader most often (the explorer's victim).
// Not drawn by default.
var jamDraws = []Draw{{Name: "jam", Weight: 1, fn: func(d *Drawer, s State) (Spec, bool) {
	up := d.Where(func(id election.NodeID) bool { return s.Up[id] })
	if len(up) == 0 {
		return Spec{}, false
	}
	return Spec{Op: Jam, Target: d.victim(s, up)}, true
}}}

// noteAlready is an outcome's note for the parts of a fault already so:
// a no-op when nothing is left to carry out.
func noteAlready(already []string, left int) string {
	switch {
	case len(already) == 0:
		return ""
	case left == 0:
		return NoOpNote + strings.Join(already, ", ")
	}
	return "left alone: " + strings.Join(already, ", ")
}

// ClockText is how a person says a clock change: "rate 0.5", "jump +2s".
func ClockText(rate float64, jump time.Duration) string {
	var parts []string
	if rate != 0 {
		parts = append(parts, fmt.Sprintf("rate %g", rate))
	}
	if jump != 0 {
		sign := "+"
		if jump < 0 {
			sign = ""
		}
		parts = append(parts, fmt.Sprintf("jump %s%v", sign, jump))
	}
	return strings.Join(parts, " ")
}
