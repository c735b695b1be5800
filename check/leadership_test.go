package check

import (
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func TestLeadershipCountsTakingsAndTheHighestEpoch(t *testing.T) {
	view := func(n election.NodeID, leader election.NodeID, epoch uint64, role election.Role) history.Record {
		return history.Record{Kind: history.KindView, Node: n, View: &election.View{Leader: leader, Epoch: epoch, Role: role}}
	}
	recs := []history.Record{
		view(1, 0, 1, election.Candidate),
		view(1, 1, 1, election.Leader), // 1 takes over
		view(2, 1, 1, election.Follower),
		view(1, 1, 1, election.Leader), // a repeated view is no change
		view(2, 0, 7, election.Candidate),
		{Kind: history.KindSend, Node: 2, Msg: &election.Message{Epoch: 99}}, // messages do not count
		view(2, 2, 7, election.Leader),                                       // 2 takes over in epoch 7
		view(1, 2, 7, election.Follower),                                     // 1 deposed
		view(1, 1, 8, election.Leader),                                       // and back
	}
	got := LeadershipOf(recs)
	if got != (Leadership{LeaderChanges: 3, HighestEpoch: 8}) {
		t.Fatalf("LeadershipOf = %+v, want 3 changes and epoch 8", got)
	}
}
