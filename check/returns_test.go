package check

import (
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// A paused 5 comes back leading itself beside the others' 4: the return
// ends when everyone follows 5 again — for Bully, not at the moment all
// agree on 4 first.
func resumedLeader() *hist {
	h := stableFive()
	h.nodeFault(1000, 1000, "pause", 5)
	h.lead(1600, 4, 2).follow(1600, 4, 2, 1, 2, 3)
	h.nodeFault(3000, 3000, "resume", 5)
	h.follow(3040, 4, 2, 5) // 5 hears 4's heartbeat first
	h.lead(3100, 5, 3).follow(3180, 5, 3, 1, 2, 3, 4)
	return h
}

func onlyReturn(t *testing.T, an *Analysis) Failover {
	t.Helper()
	return onlyOne(t, "returns", an.Returns)
}

func TestReturnForBullyEndsWhenEveryoneFollowsTheHighest(t *testing.T) {
	o := opts(5)
	o.Algorithm = election.Algorithm{Name: "bully", Claims: func(election.QuorumMode) []election.Property {
		return []election.Property{election.HighestWins}
	}}
	r := onlyReturn(t, Analyze(resumedLeader().recs, o))
	if r.Op != "resume" || r.Leader != 4 || !r.Recovered || r.Duration != 180*time.Millisecond ||
		!slices.Equal(r.NewLeader, []election.NodeID{5}) {
		t.Fatalf("return = %+v, want the resume settled on 5 after 180ms", r)
	}
}

func TestReturnWithoutTheHighestClaimEndsAtAnyAgreement(t *testing.T) {
	r := onlyReturn(t, Analyze(resumedLeader().recs, opts(5)))
	if !r.Recovered || r.Duration != 40*time.Millisecond || !slices.Equal(r.NewLeader, []election.NodeID{4}) {
		t.Fatalf("return = %+v, want settled on 4 after 40ms", r)
	}
}

func TestAHealIsAReturnAndAPartitionIsNot(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.lead(1300, 3, 2).follow(1300, 3, 2, 1, 2)
	h.heal(2000, 2010).follow(2250, 5, 3, 1, 2, 3)
	r := onlyReturn(t, Analyze(h.recs, opts(5)))
	if r.Op != "heal" || !r.Recovered || r.Duration != 240*time.Millisecond {
		t.Fatalf("return = %+v, want the heal settled 240ms after its ok", r)
	}
}
