package check

import (
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
		if f.Failed || f.Applied.IsZero() || !chaos.LetsBackIn(chaos.Op(f.Op)) || chaos.Unmeasured(f.Note) {
			continue
		}
		ret := Failover{Op: f.Op, Label: f.Label, Leader: t.StateAt(f.Invoked).CommonLeader(t.Members),
			Invoked: f.Invoked, From: f.At()}
		settleAfter(t, i, &ret, func(s chaos.State) ([]election.NodeID, bool) {
			return settledLeaders(s, t.Members, opts.Quorum, highest)
		})
		out = append(out, ret)
	}
	return out
}
