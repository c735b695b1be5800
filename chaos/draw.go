package chaos

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// How the explorer draws faults and the shrinker weakens them, per kind.
// A kind lists its Draws (a partition has several forms, each drawn on its
// own); the explorer offers their names as --kinds and picks by weight.

// Draw is one way to draw a fault of a kind at random.
type Draw struct {
	// Name is the word of --kinds.
	Name string
	// Weight is its share of the draws.
	Weight int
	// Default: drawn when --kinds is not given. Kinds added later are
	// drawn only when asked, so that the default exploration of a seed
	// stays the schedule it always was.
	Default bool
	fn      func(d *Drawer, s State) (Spec, bool)
}

// Drawer is what a draw sees: the schedule's random stream and the
// membership. It looks at the cluster only through State, as a nemesis
// could, and draws only steps that can apply now.
type Drawer struct {
	R       *rand.Rand
	Members []election.NodeID
}

// Draw draws a fault of this form that can apply in s; ok is false when
// none can now.
func (dr Draw) Draw(d *Drawer, s State) (Spec, bool) { return dr.fn(d, s) }

// Draws lists every way to draw a fault, in the kinds' order.
func Draws() []Draw {
	var out []Draw
	for _, k := range kindList {
		out = append(out, k.Draws...)
	}
	return out
}

// Where lists the members pred holds for, in membership order.
func (d *Drawer) Where(pred func(election.NodeID) bool) []election.NodeID {
	var out []election.NodeID
	for _, id := range d.Members {
		if pred(id) {
			out = append(out, id)
		}
	}
	return out
}

func (d *Drawer) shuffled() []election.NodeID {
	ids := slices.Clone(d.Members)
	d.R.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

// victim is the target of a fault that hurts nodes: half the time the
// leader (the interesting one to hurt) when there is one among can (the
// nodes the fault can apply to), else one node the resolver picks.
func (d *Drawer) victim(s State, can []election.NodeID) Target {
	if d.R.IntN(2) == 0 {
		if l := s.CommonLeader(d.Members); l != election.None && slices.Contains(can, l) {
			return Target{Kind: TargetLeader}
		}
	}
	return Target{Kind: TargetOne}
}

func partitionSpec(p PartitionSpec) Spec { return Spec{Op: Partition, Partition: &p} }

// drawHurt draws op against a victim among the nodes up (kill, stop).
func drawHurt(op Op) func(d *Drawer, s State) (Spec, bool) {
	return func(d *Drawer, s State) (Spec, bool) {
		up := d.Where(func(id election.NodeID) bool { return s.Up[id] })
		if len(up) == 0 {
			return Spec{}, false
		}
		return Spec{Op: op, Target: d.victim(s, up)}, true
	}
}

var (
	killDraws    = []Draw{{Name: "kill", Weight: 4, Default: true, fn: drawHurt(Kill)}}
	stopDraws    = []Draw{{Name: "stop", Weight: 1, Default: true, fn: drawHurt(Stop)}}
	restartDraws = []Draw{{Name: "restart", Weight: 4, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
		up := d.Where(func(id election.NodeID) bool { return s.Up[id] })
		return Spec{Op: Restart, Target: Target{Kind: TargetOne}}, len(up) < len(d.Members)
	}}}
	pauseDraws = []Draw{{Name: "pause", Weight: 2, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
		running := d.Where(s.Live)
		if len(running) == 0 {
			return Spec{}, false
		}
		return Spec{Op: Pause, Target: d.victim(s, running)}, true
	}}}
	resumeDraws = []Draw{{Name: "resume", Weight: 2, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
		paused := slices.ContainsFunc(d.Members, func(id election.NodeID) bool { return s.Up[id] && s.Paused[id] })
		return Spec{Op: Resume, Target: Target{Kind: TargetOne}}, paused
	}}}
	partitionDraws = []Draw{
		{Name: string(Halves), Weight: 2, Default: true, fn: drawShape(Halves)},
		{Name: string(MajoritiesRing), Weight: 1, Default: true, fn: drawShape(MajoritiesRing)},
		{Name: string(Isolate), Weight: 3, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
			up := d.Where(func(id election.NodeID) bool { return s.Up[id] })
			if len(d.Members) < 2 || len(up) == 0 {
				return Spec{}, false
			}
			return partitionSpec(PartitionSpec{Shape: Isolate, Target: d.victim(s, up)}), true
		}},
		{Name: string(Bridge), Weight: 2, Default: true, fn: drawShape(Bridge)},
		// Along engines: only a cluster placed on several has any.
		{Name: string(Engines), Weight: 2, fn: func(_ *Drawer, s State) (Spec, bool) {
			return partitionSpec(PartitionSpec{Shape: Engines}), len(s.Placement) >= 2
		}},
		{Name: "groups", Weight: 2, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
			n := len(d.Members)
			if n < 2 {
				return Spec{}, false
			}
			// Two random sides of random sizes: partitions no named
			// shape draws.
			ids := d.shuffled()
			cut := 1 + d.R.IntN(n-1)
			a, b := slices.Clone(ids[:cut]), slices.Clone(ids[cut:])
			slices.Sort(a)
			slices.Sort(b)
			return partitionSpec(PartitionSpec{Groups: [][]election.NodeID{a, b}}), true
		}},
		{Name: "cut", Weight: 1, Default: true, fn: drawLink(false)},
		{Name: "one-way", Weight: 2, Default: true, fn: drawLink(true)},
	}
	healDraws = []Draw{{Name: "heal", Weight: 3, Default: true, fn: func(*Drawer, State) (Spec, bool) {
		return Spec{Op: Heal}, true
	}}}
	lossDraws = []Draw{{Name: "loss", Weight: 1, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
		if !slices.ContainsFunc(d.Members, func(id election.NodeID) bool { return s.Up[id] }) {
			return Spec{}, false
		}
		return Spec{Op: Loss, Target: Target{Kind: TargetOne}, Params: ParamsOf(LossPercent.Of(float64(1+d.R.IntN(5)) / 10))}, true
	}}}
	delayDraws = []Draw{{Name: "delay", Weight: 1, Default: true, fn: func(d *Drawer, s State) (Spec, bool) {
		if !slices.ContainsFunc(d.Members, func(id election.NodeID) bool { return s.Up[id] }) {
			return Spec{}, false
		}
		dl := time.Duration(1+d.R.IntN(10)) * 5 * time.Millisecond
		j := time.Duration(d.R.IntN(5)) * 5 * time.Millisecond
		return Spec{Op: Delay, Target: Target{Kind: TargetOne}, Params: ParamsOf(DelayMS.OfDur(dl), DelayJitter.OfDur(j))}, true
	}}}
	// clockDraws: a victim's clock slowed or sped up by a factor of 0.25
	// to 2, or jumped by up to two seconds either way.
	clockDraws = []Draw{{Name: "clock", Weight: 2, fn: func(d *Drawer, s State) (Spec, bool) {
		up := d.Where(func(id election.NodeID) bool { return s.Up[id] })
		if len(up) == 0 {
			return Spec{}, false
		}
		t := d.victim(s, up)
		if d.R.IntN(3) == 0 {
			j := time.Duration(d.R.IntN(41)-20) * 100 * time.Millisecond
			if j == 0 {
				j = 100 * time.Millisecond
			}
			return Spec{Op: Clock, Target: t, Params: ParamsOf(ClockJump.OfDur(j))}, true
		}
		rates := []float64{0.25, 0.4, 0.5, 0.75, 0.9, 1.1, 1.5, 2}
		return Spec{Op: Clock, Target: t, Params: ParamsOf(ClockRate.Of(rates[d.R.IntN(len(rates))]))}, true
	}}}
)

func drawShape(sh Shape) func(d *Drawer, s State) (Spec, bool) {
	return func(d *Drawer, s State) (Spec, bool) {
		return partitionSpec(PartitionSpec{Shape: sh}), len(d.Members) >= 3
	}
}

func drawLink(oneWay bool) func(d *Drawer, s State) (Spec, bool) {
	return func(d *Drawer, s State) (Spec, bool) {
		if len(d.Members) < 2 {
			return Spec{}, false
		}
		ids := d.shuffled()
		pair := []election.NodeID{ids[0], ids[1]}
		if oneWay {
			return partitionSpec(PartitionSpec{OneWay: pair}), true
		}
		return partitionSpec(PartitionSpec{Cut: pair}), true
	}
}

// Weaker lists the faults one notch weaker than sp, which resolved to r:
// what the shrinker tries in its place. A kind with no weaker form gives
// none.
func Weaker(sp Spec, r Fault, members []election.NodeID) []Spec {
	if k := kindOf(sp.Op); k != nil && k.weaken != nil {
		return k.weaken(sp, r, members)
	}
	return nil
}

// weakenKill: a kill is weaker as a stop (the node says goodbye).
func weakenKill(sp Spec, _ Fault, _ []election.NodeID) []Spec {
	g := sp.Clone()
	g.Op = Stop
	return []Spec{g}
}

// weakenPartition: a partition by the two-way cut of one of its links,
// then by a one-way cut; a two-way cut by one of its directions.
func weakenPartition(sp Spec, r Fault, members []election.NodeID) []Spec {
	p := sp.Partition
	if p == nil || len(p.OneWay) == 2 {
		return nil
	}
	var out []Spec
	links := r.CutLinks(members)
	if len(p.Cut) == 2 {
		links = [][2]election.NodeID{{p.Cut[0], p.Cut[1]}, {p.Cut[1], p.Cut[0]}}
	} else {
		for _, l := range links {
			if l[0] < l[1] && slices.Contains(links, [2]election.NodeID{l[1], l[0]}) {
				out = append(out, partitionSpec(PartitionSpec{Cut: []election.NodeID{l[0], l[1]}}))
			}
		}
	}
	for _, l := range links {
		out = append(out, partitionSpec(PartitionSpec{OneWay: []election.NodeID{l[0], l[1]}}))
	}
	return out
}

// weakenClock: a rate halfway back to real speed (to the nearest 0.05),
// a jump halved (to whole milliseconds); a fault already within a notch
// of none has no weaker form.
func weakenClock(sp Spec, _ Fault, _ []election.NodeID) []Spec {
	g := sp.Clone()
	changed := false
	if rate := ClockRate.Num(sp.Params); rate != 0 {
		r := float64(int((rate+1)/2*20+0.5)) / 20
		if r != rate && r != 1 {
			g.Params, changed = g.Params.With(ClockRate.Of(r)), true
		}
	}
	if jump := ClockJump.Dur(sp.Params); jump != 0 {
		j := (jump / 2).Round(time.Millisecond)
		if j != 0 && j != jump {
			g.Params, changed = g.Params.With(ClockJump.OfDur(j)), true
		}
	}
	if !changed {
		return nil
	}
	return []Spec{g}
}
