package check

import (
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Leadership is how much leadership moved in a run: how many times a node
// took role leader (a node that leads from its first view counts once),
// and the highest epoch any node viewed. Raft's hazards show in these two
// figures rather than in a verdict: a node that rejoins without pre-vote
// deposes a healthy leader (one more change) after inflating its term (a
// higher epoch), and a flapping link makes leadership thrash.
type Leadership struct {
	LeaderChanges int    `json:"leader_changes"`
	HighestEpoch  uint64 `json:"highest_epoch"`
}

// LeadershipOf counts recs' view records (in time order).
func LeadershipOf(recs []history.Record) Leadership {
	var l Leadership
	leading := map[election.NodeID]bool{}
	for _, r := range recs {
		if r.Kind != history.KindView || r.View == nil {
			continue
		}
		l.HighestEpoch = max(l.HighestEpoch, r.View.Epoch)
		now := r.View.Role == election.Leader
		if now && !leading[r.Node] {
			l.LeaderChanges++
		}
		leading[r.Node] = now
	}
	return l
}
