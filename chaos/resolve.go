package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
)

// pool is the set of nodes an operation can sensibly apply to: only a
// running node can be killed, only a down one restarted, only a paused one
// resumed. Symbolic targets pick from it.
func pool(op Op, s State, members []election.NodeID) []election.NodeID {
	in := isUp // partition shapes choose among running nodes
	if k := kindOf(op); k != nil && k.pool != nil {
		in = k.pool
	}
	var out []election.NodeID
	for _, m := range members {
		if in(s, m) {
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
func ResolveTarget(t Target, op Op, s State, members []election.NodeID, rng *rand.Rand) ([]election.NodeID, error) {
	n := len(members)
	p := pool(op, s, members)
	sized := func(k int, what string) ([]election.NodeID, error) {
		if len(p) < k {
			return nil, fmt.Errorf("target %s needs %d nodes (%s of %d members) but only %d can be %s: %v", t.Kind, k, what, n, len(p), verb(op), p)
		}
		return pick(rng, p, k), nil
	}
	switch t.Kind {
	case TargetIDs:
		return slices.Clone(t.IDs), nil
	case TargetLeader:
		l := s.CommonLeader(members)
		if l == election.None {
			return nil, fmt.Errorf("target leader: no live node views a leader (views: %s)", s.Describe(members))
		}
		return []election.NodeID{l}, nil
	case TargetFollower:
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
	case TargetOne:
		return sized(1, "one")
	case TargetMinority:
		return sized((n-1)/2, "a minority")
	case TargetMajority:
		return sized(n/2+1, "a majority")
	case TargetAll, TargetDown, TargetPaused:
		if len(p) == 0 {
			return nil, fmt.Errorf("target %s: no node can be %s", t.Kind, verb(op))
		}
		return p, nil
	}
	return nil, fmt.Errorf("target %q: unknown kind", t.Kind)
}

func verb(op Op) string {
	switch op {
	case Restart:
		return "restarted (none is down)"
	case Resume:
		return "resumed (none is paused)"
	case Pause:
		return "paused (none is live)"
	}
	return string(op) + "ed"
}

// Resolve turns the symbolic fault into a Fault against the state at this
// moment. Every world resolves with this one function: the harness for a
// scenario step, the explorer for a drawn one.
func (st Spec) Resolve(s State, members []election.NodeID, rng *rand.Rand) (Fault, error) {
	f := Fault{Op: st.Op}
	var err error
	k := kindOf(st.Op)
	switch {
	case k == nil:
		return f, fmt.Errorf("%q is not a fault (valid: %v)", st.Op, Ops)
	case len(k.Targets) > 0:
		f.Nodes, err = ResolveTarget(st.Target, st.Op, s, members, rng)
		f.Params = st.Params
	case st.Op == Partition:
		if st.Partition == nil {
			return f, fmt.Errorf("partition: no form given")
		}
		f.Groups, f.Links, f.Nodes, err = partition(st.Partition, s, members, rng)
	}
	return f, err
}

// partition builds the groups or links of a partition step. Nodes is set
// for shapes with a target (the isolated or bridging nodes).
func partition(p *PartitionSpec, s State, members []election.NodeID, rng *rand.Rand) (groups [][]election.NodeID, links [][2]election.NodeID, nodes []election.NodeID, err error) {
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
	case p.Shape == Halves:
		// The larger half holds the lower IDs, so that with 5 nodes the
		// majority {1,2,3} lacks the highest ID: the case where Bully
		// and quorum Bully disagree.
		h := (len(sorted) + 1) / 2
		groups = [][]election.NodeID{slices.Clone(sorted[:h]), slices.Clone(sorted[h:])}
	case p.Shape == MajoritiesRing:
		links = majoritiesRing(members)
	case p.Shape == Engines:
		if len(s.Placement) < 2 {
			return nil, nil, nil, fmt.Errorf("partition %s: the cluster runs on one engine; run it on several (--engines) or give cluster.placement", p)
		}
		for _, g := range s.Placement {
			groups = append(groups, slices.Clone(g))
		}
	case p.Shape == Isolate:
		nodes, err = ResolveTarget(p.Target, Kill, s, members, rng)
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
	case p.Shape == Bridge:
		bridge := sorted[len(sorted)/2]
		if p.Target.Kind != "" {
			ids, err := ResolveTarget(p.Target, Kill, s, members, rng)
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
