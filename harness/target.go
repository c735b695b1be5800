package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// pool is the set of nodes an operation can sensibly apply to: only a
// running node can be killed, only a down one restarted, only a paused one
// resumed. Symbolic targets pick from it.
func pool(op scenario.Op, s chaos.State, members []election.NodeID) []election.NodeID {
	var out []election.NodeID
	for _, m := range members {
		var in bool
		switch op {
		case scenario.OpRestart:
			in = !s.Up[m]
		case scenario.OpResume:
			in = s.Up[m] && s.Paused[m]
		case scenario.OpPause:
			in = s.Live(m)
		default: // kill, stop, loss, delay, partition shapes
			in = s.Up[m]
		}
		if in {
			out = append(out, m)
		}
	}
	return out
}

// pick returns k distinct nodes of from chosen with rng, sorted.
func pick(rng *rand.Rand, from []election.NodeID, k int) []election.NodeID {
	c := slices.Clone(from)
	rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	c = c[:k]
	slices.Sort(c)
	return c
}

// ResolveTarget turns a symbolic target into node IDs against the state at
// this moment. op decides the pool symbolic targets choose from.
func ResolveTarget(t scenario.Target, op scenario.Op, s chaos.State, members []election.NodeID, rng *rand.Rand) ([]election.NodeID, error) {
	n := len(members)
	p := pool(op, s, members)
	sized := func(k int, what string) ([]election.NodeID, error) {
		if len(p) < k {
			return nil, fmt.Errorf("target %s needs %d nodes (%s of %d members) but only %d can be %s: %v", t.Kind, k, what, n, len(p), verb(op), p)
		}
		return pick(rng, p, k), nil
	}
	switch t.Kind {
	case scenario.TargetIDs:
		return slices.Clone(t.IDs), nil
	case scenario.TargetLeader:
		l := s.CommonLeader(members)
		if l == election.None {
			return nil, fmt.Errorf("target leader: no live node views a leader (views: %s)", describeViews(s, members))
		}
		return []election.NodeID{l}, nil
	case scenario.TargetFollower:
		l := s.CommonLeader(members)
		var fs []election.NodeID
		for _, m := range p {
			if m != l && s.Live(m) {
				fs = append(fs, m)
			}
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("target follower: no live node other than the leader %d", l)
		}
		return pick(rng, fs, 1), nil
	case scenario.TargetOne:
		return sized(1, "one")
	case scenario.TargetMinority:
		return sized((n-1)/2, "a minority")
	case scenario.TargetMajority:
		return sized(n/2+1, "a majority")
	case scenario.TargetAll, scenario.TargetDown, scenario.TargetPaused:
		if len(p) == 0 {
			return nil, fmt.Errorf("target %s: no node can be %s", t.Kind, verb(op))
		}
		return p, nil
	}
	return nil, fmt.Errorf("target %q: unknown kind", t.Kind)
}

func verb(op scenario.Op) string {
	switch op {
	case scenario.OpRestart:
		return "restarted (none is down)"
	case scenario.OpResume:
		return "resumed (none is paused)"
	case scenario.OpPause:
		return "paused (none is live)"
	}
	return string(op) + "ed"
}

// Resolve turns a fault step into a chaos.Fault against the state at this
// moment, and returns the target text the history records.
func Resolve(st scenario.Step, s chaos.State, members []election.NodeID, rng *rand.Rand) (chaos.Fault, string, error) {
	f := chaos.Fault{Op: chaos.Op(st.Op)}
	text := st.Target.String()
	var err error
	switch st.Op {
	case scenario.OpKill, scenario.OpStop, scenario.OpRestart, scenario.OpPause, scenario.OpResume:
		f.Nodes, err = ResolveTarget(st.Target, st.Op, s, members, rng)
	case scenario.OpLoss:
		f.Nodes, err = ResolveTarget(st.Target, st.Op, s, members, rng)
		f.Loss = st.Loss
	case scenario.OpDelay:
		f.Nodes, err = ResolveTarget(st.Target, st.Op, s, members, rng)
		f.Delay, f.Jitter = st.Delay, st.Jitter
	case scenario.OpHeal:
		text = ""
	case scenario.OpPartition:
		text = st.Partition.String()
		f.Groups, f.Links, f.Nodes, err = partition(st.Partition, s, members, rng)
	default:
		return f, "", fmt.Errorf("step %s is not a fault", st.Op)
	}
	return f, text, err
}

// partition builds the groups or links of a partition step. Nodes is set
// for shapes with a target (the isolated or bridging nodes).
func partition(p *scenario.Partition, s chaos.State, members []election.NodeID, rng *rand.Rand) (groups [][]election.NodeID, links [][2]election.NodeID, nodes []election.NodeID, err error) {
	sorted := slices.Sorted(slices.Values(members))
	switch {
	case len(p.Groups) > 0:
		for _, g := range p.Groups {
			groups = append(groups, slices.Clone(g))
		}
	case len(p.Cut) == 2:
		links = [][2]election.NodeID{{p.Cut[0], p.Cut[1]}, {p.Cut[1], p.Cut[0]}}
	case len(p.OneWay) == 2:
		links = [][2]election.NodeID{{p.OneWay[0], p.OneWay[1]}}
	case p.Shape == scenario.ShapeHalves:
		// The larger half holds the lower IDs, so that with 5 nodes the
		// majority {1,2,3} lacks the highest ID: the case where Bully
		// and quorum Bully disagree.
		h := (len(sorted) + 1) / 2
		groups = [][]election.NodeID{slices.Clone(sorted[:h]), slices.Clone(sorted[h:])}
	case p.Shape == scenario.ShapeMajoritiesRing:
		links = majoritiesRing(members)
	case p.Shape == scenario.ShapeIsolate:
		nodes, err = ResolveTarget(p.Target, scenario.OpKill, s, members, rng)
		if err != nil {
			return nil, nil, nil, err
		}
		var rest []election.NodeID
		for _, m := range sorted {
			if !slices.Contains(nodes, m) {
				rest = append(rest, m)
			}
		}
		groups = [][]election.NodeID{nodes, rest}
	case p.Shape == scenario.ShapeBridge:
		bridge := sorted[len(sorted)/2]
		if p.Target.Kind != "" {
			ids, err := ResolveTarget(p.Target, scenario.OpKill, s, members, rng)
			if err != nil {
				return nil, nil, nil, err
			}
			bridge = ids[0]
		}
		var others []election.NodeID
		for _, m := range sorted {
			if m != bridge {
				others = append(others, m)
			}
		}
		h := (len(others) + 1) / 2
		lo := append(slices.Clone(others[:h]), bridge)
		hi := append([]election.NodeID{bridge}, others[h:]...)
		slices.Sort(lo)
		slices.Sort(hi)
		groups = [][]election.NodeID{lo, hi}
		nodes = []election.NodeID{bridge}
	default:
		return nil, nil, nil, fmt.Errorf("partition %s: nothing to cut", p)
	}
	return groups, links, nodes, nil
}

// majoritiesRing is Jepsen's majorities-ring: every node keeps the links to
// its nearest ring neighbours, just enough of them that it sees a majority
// (itself included), and loses the rest. Each node sees a majority, but no
// two adjacent nodes see the same one, so no majority agrees on anything.
func majoritiesRing(ring []election.NodeID) [][2]election.NodeID {
	n := len(ring)
	maj := n/2 + 1
	reach := maj / 2 // neighbours kept on each side
	if 1+2*reach < maj {
		reach++
	}
	var links [][2]election.NodeID
	for i := range ring {
		for j := range ring {
			if i == j {
				continue
			}
			d := min((i-j+n)%n, (j-i+n)%n)
			if d > reach {
				links = append(links, [2]election.NodeID{ring[i], ring[j]})
			}
		}
	}
	return links
}
