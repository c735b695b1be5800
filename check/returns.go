package check

import (
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// ReturnsOf measures, for every fault that let nodes back in — a resume, a
// restart, a heal — the time from the fault taking effect to the first
// instant the cluster is settled again: every component entitled to a
// leader agrees on one (Settled) and, where the algorithm claims the
// highest ID wins (Bully), that leader is the component's highest live ID.
// A node that comes back to a cluster that needs nothing from it returns in
// no time; one that must be elected again returns when everyone follows it.
// The search stops at the next fault's invoke, as for failovers. Leader is
// the leader most live nodes viewed just before the fault.
func ReturnsOf(t *Timeline, opts Options) []Failover {
	highest := opts.Algorithm.Claim(opts.Quorum, election.HighestWins)
	var out []Failover
	for i, f := range t.Faults {
		if f.Failed || f.Applied.IsZero() || !letsBackIn(chaos.Op(f.Op)) {
			continue
		}
		ret := Failover{Op: f.Op, Label: f.Label, Leader: t.StateAt(f.Invoked).CommonLeader(t.Members),
			Invoked: f.Invoked, From: f.At()}
		settleAfter(t, i, &ret, func(s chaos.State) ([]election.NodeID, bool) {
			leaders, ok := SettledLeaders(s, t.Members, opts.Quorum)
			if ok && highest && !leadersAreHighest(s, t.Members, opts.Quorum, leaders) {
				return nil, false
			}
			return leaders, ok
		})
		out = append(out, ret)
	}
	return out
}

func letsBackIn(op chaos.Op) bool {
	return op == chaos.Resume || op == chaos.Restart || op == chaos.Heal
}

// leadersAreHighest reports whether every entitled component of s, settled
// on leaders (in the order SettledLeaders gives them), follows its highest
// live ID.
func leadersAreHighest(s chaos.State, members []election.NodeID, q election.QuorumMode, leaders []election.NodeID) bool {
	i := 0
	for _, c := range Components(s, members) {
		if !c.Clique || !Entitled(len(c.Nodes), members, q) {
			continue
		}
		if i >= len(leaders) || leaders[i] != slices.Max(c.Nodes) {
			return false
		}
		i++
	}
	return true
}
