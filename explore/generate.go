package explore

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Kinds of fault the generator draws, for Options.Kinds and --kinds: the
// names of the fault kinds' draws (chaos.Draws) — the operations, and for
// partitions the form: a named shape, random groups, a two-way cut of one
// link, or a one-way cut.
var Kinds = func() []string {
	var out []string
	for _, d := range chaos.Draws() {
		out = append(out, d.Name)
	}
	return out
}()

// generator draws one schedule's steps from its own random stream. It looks
// at the cluster only through chaos.State (who runs, who is paused, who is
// viewed as leader), as a nemesis could, and draws only steps that can apply
// now, so that the same seed gives the same schedule.
type generator struct {
	d       chaos.Drawer
	draws   []chaos.Draw
	weights []int
	members []election.NodeID
	timing  election.Timing
}

// newGenerator draws the schedule of seed. Its draws and weights come
// from the previous schedule's generator when there is one (prev): they
// depend on the options only, and a worker makes a generator per schedule.
func newGenerator(o Options, seed int64, prev *generator) *generator {
	g := &generator{
		d: chaos.Drawer{
			R:       rand.New(rand.NewPCG(uint64(seed), 0x7363686564)), // "sched"
			Members: o.Members,
		},
		members: o.Members,
		timing:  o.Timing,
	}
	if prev != nil {
		g.draws, g.weights = prev.draws, prev.weights
		return g
	}
	for _, d := range chaos.Draws() {
		if (len(o.Kinds) == 0 && d.Default) || slices.Contains(o.Kinds, d.Name) {
			g.draws = append(g.draws, d)
			g.weights = append(g.weights, d.Weight)
		}
	}
	return g
}

// gap is the wait between faults: up to three suspicion timeouts, so that
// some faults land mid-election and some after the cluster settled. It is
// whole milliseconds, as a scenario file writes it.
func (g *generator) gap() scenario.Step {
	d := time.Duration(g.d.R.Int64N(int64(3*g.timing.Suspicion)/int64(time.Millisecond))+1) * time.Millisecond
	return scenario.WaitStep(d)
}

func (g *generator) pick() chaos.Draw {
	total := 0
	for _, w := range g.weights {
		total += w
	}
	x := g.d.R.IntN(total)
	for i, w := range g.weights {
		if x < w {
			return g.draws[i]
		}
		x -= w
	}
	return g.draws[len(g.draws)-1]
}

// next draws a fault step that can apply in state s; ok is false when none
// could be found (a one-node cluster with nothing to do).
func (g *generator) next(s chaos.State) (chaos.Spec, bool) {
	for try := 0; try < 20; try++ {
		if sp, ok := g.pick().Draw(&g.d, s); ok {
			return sp, true
		}
	}
	return chaos.Spec{}, false
}

// finish ends a schedule so the checkers have a cluster that can settle:
// heal the network, resume every paused node, and restart crashed nodes
// (lowest first) until a majority runs, so a quorum algorithm can elect.
// Nodes beyond that stay down: the leader may well be among them.
func (g *generator) finish(s chaos.State, netFaults bool) []chaos.Spec {
	var out []chaos.Spec
	if netFaults {
		out = append(out, chaos.Spec{Op: chaos.Heal})
	}
	if slices.ContainsFunc(g.members, func(id election.NodeID) bool { return s.Paused[id] }) {
		out = append(out, chaos.Spec{Op: chaos.Resume, Target: chaos.Target{Kind: chaos.TargetPaused}})
	}
	up := len(g.d.Where(func(id election.NodeID) bool { return s.Up[id] }))
	var restart []election.NodeID
	for _, id := range g.d.Where(func(id election.NodeID) bool { return !s.Up[id] }) {
		if up >= len(g.members)/2+1 {
			break
		}
		restart = append(restart, id)
		up++
	}
	if len(restart) > 0 {
		out = append(out, chaos.Spec{Op: chaos.Restart, Target: chaos.IDs(restart...)})
	}
	return out
}
