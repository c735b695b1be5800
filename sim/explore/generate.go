package explore

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Kinds of fault the generator draws, for Options.Kinds and --kinds. They
// are the fault language's own words (package chaos): the operations, and
// for partitions the form — a named shape, random groups, a two-way cut of
// one link, or a one-way cut.
var Kinds = []string{
	string(chaos.Kill), string(chaos.Stop), string(chaos.Restart), string(chaos.Pause), string(chaos.Resume),
	string(chaos.Halves), string(chaos.MajoritiesRing), string(chaos.Isolate), string(chaos.Bridge),
	"groups", "cut", "one-way",
	string(chaos.Heal), string(chaos.Loss), string(chaos.Delay),
}

// defaultWeights of each kind: crashes and partitions dominate, since they
// are what elections exist for.
var defaultWeights = map[string]int{
	"kill": 4, "stop": 1, "restart": 4, "pause": 2, "resume": 2,
	"halves": 2, "majorities-ring": 1, "isolate": 3, "bridge": 2, "groups": 2, "cut": 1, "one-way": 2,
	"heal": 3, "loss": 1, "delay": 1,
}

// generator draws one schedule's steps from its own random stream. It looks
// at the cluster only through chaos.State (who runs, who is paused, who is
// viewed as leader), as a nemesis could, and draws only steps that can apply
// now, so that the same seed gives the same schedule.
type generator struct {
	r       *rand.Rand
	kinds   []string
	weights []int
	members []election.NodeID
	timing  election.Timing
}

func newGenerator(o Options, seed int64) *generator {
	g := &generator{
		r:       rand.New(rand.NewPCG(uint64(seed), 0x7363686564)), // "sched"
		members: o.Members,
		timing:  o.Timing,
	}
	for _, k := range Kinds {
		if len(o.Kinds) == 0 || slices.Contains(o.Kinds, k) {
			g.kinds = append(g.kinds, k)
			g.weights = append(g.weights, defaultWeights[k])
		}
	}
	return g
}

// gap is the wait between faults: up to three suspicion timeouts, so that
// some faults land mid-election and some after the cluster settled. It is
// whole milliseconds, as a scenario file writes it.
func (g *generator) gap() scenario.Step {
	d := time.Duration(g.r.Int64N(int64(3*g.timing.Suspicion)/int64(time.Millisecond))+1) * time.Millisecond
	return scenario.WaitStep(d)
}

func (g *generator) pickKind() string {
	total := 0
	for _, w := range g.weights {
		total += w
	}
	x := g.r.IntN(total)
	for i, w := range g.weights {
		if x < w {
			return g.kinds[i]
		}
		x -= w
	}
	return g.kinds[len(g.kinds)-1]
}

func (g *generator) where(pred func(election.NodeID) bool) []election.NodeID {
	var out []election.NodeID
	for _, id := range g.members {
		if pred(id) {
			out = append(out, id)
		}
	}
	return out
}

func (g *generator) shuffled() []election.NodeID {
	ids := slices.Clone(g.members)
	g.r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

// victim is the target of a fault that hurts nodes: half the time the
// leader (the interesting one to hurt) when there is one among can (the
// nodes the fault can apply to), else one node the resolver picks.
func (g *generator) victim(s chaos.State, can []election.NodeID) chaos.Target {
	if g.r.IntN(2) == 0 {
		if l := s.CommonLeader(g.members); l != election.None && slices.Contains(can, l) {
			return chaos.Target{Kind: chaos.TargetLeader}
		}
	}
	return chaos.Target{Kind: chaos.TargetOne}
}

func partition(p chaos.PartitionSpec) chaos.Spec {
	return chaos.Spec{Op: chaos.Partition, Partition: &p}
}

// next draws a fault step that can apply in state s; ok is false when none
// could be found (a one-node cluster with nothing to do).
func (g *generator) next(s chaos.State) (chaos.Spec, bool) {
	n := len(g.members)
	running := g.where(s.Live)
	up := g.where(func(id election.NodeID) bool { return s.Up[id] })
	down := len(up) < n
	paused := len(running) < len(up)
	for try := 0; try < 20; try++ {
		switch k := g.pickKind(); k {
		case "kill", "stop":
			if len(up) == 0 {
				continue
			}
			return chaos.Spec{Op: chaos.Op(k), Target: g.victim(s, up)}, true
		case "restart":
			if down {
				return chaos.Spec{Op: chaos.Restart, Target: chaos.Target{Kind: chaos.TargetOne}}, true
			}
		case "pause":
			if len(running) > 0 {
				return chaos.Spec{Op: chaos.Pause, Target: g.victim(s, running)}, true
			}
		case "resume":
			if paused {
				return chaos.Spec{Op: chaos.Resume, Target: chaos.Target{Kind: chaos.TargetOne}}, true
			}
		case "halves", "majorities-ring", "bridge":
			if n >= 3 {
				return partition(chaos.PartitionSpec{Shape: chaos.Shape(k)}), true
			}
		case "isolate":
			if n >= 2 && len(up) > 0 {
				return partition(chaos.PartitionSpec{Shape: chaos.Isolate, Target: g.victim(s, up)}), true
			}
		case "groups":
			if n >= 2 {
				// Two random sides of random sizes: partitions no
				// named shape draws.
				ids := g.shuffled()
				cut := 1 + g.r.IntN(n-1)
				a, b := slices.Clone(ids[:cut]), slices.Clone(ids[cut:])
				slices.Sort(a)
				slices.Sort(b)
				return partition(chaos.PartitionSpec{Groups: [][]election.NodeID{a, b}}), true
			}
		case "cut", "one-way":
			if n >= 2 {
				ids := g.shuffled()
				pair := []election.NodeID{ids[0], ids[1]}
				if k == "cut" {
					return partition(chaos.PartitionSpec{Cut: pair}), true
				}
				return partition(chaos.PartitionSpec{OneWay: pair}), true
			}
		case "heal":
			return chaos.Spec{Op: chaos.Heal}, true
		case "loss":
			if len(up) > 0 {
				return chaos.Spec{Op: chaos.Loss, Target: chaos.Target{Kind: chaos.TargetOne}, Loss: float64(1+g.r.IntN(5)) / 10}, true
			}
		case "delay":
			if len(up) > 0 {
				d := time.Duration(1+g.r.IntN(10)) * 5 * time.Millisecond
				j := time.Duration(g.r.IntN(5)) * 5 * time.Millisecond
				return chaos.Spec{Op: chaos.Delay, Target: chaos.Target{Kind: chaos.TargetOne}, Delay: d, Jitter: j}, true
			}
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
	up := len(g.where(func(id election.NodeID) bool { return s.Up[id] }))
	var restart []election.NodeID
	for _, id := range g.where(func(id election.NodeID) bool { return !s.Up[id] }) {
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
