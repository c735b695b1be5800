package check

import (
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// isolatedLeader: 1..5 settle on 5, 5 is cut off from {1,2,3,4} at 1000,
// the majority elects 4 at 1500 and 5 steps down (its lease gone) at 1700.
func isolatedLeader() *hist {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{5}, []election.NodeID{1, 2, 3, 4})
	h.send(1400, 4, 0, "ELECTION")
	h.lead(1500, 4, 2).follow(1500, 4, 2, 1, 2, 3)
	return h.undecided(1700, 5)
}

// onlyFailover returns the one failover of recs, failing t otherwise.
func onlyFailover(t *testing.T, an *Analysis) Failover {
	t.Helper()
	return onlyOne(t, "failovers", an.Failovers)
}

// onlyOne returns the one measurement of fs (named what), failing t
// otherwise.
func onlyOne(t *testing.T, what string, fs []Failover) Failover {
	t.Helper()
	if len(fs) != 1 {
		t.Fatalf("%s = %+v, want exactly one", what, fs)
	}
	return fs[0]
}

func TestFailoverOfAnIsolatedLeaderWithQuorumEndsWhenItStepsDown(t *testing.T) {
	o := opts(5)
	o.Quorum = election.Majority
	f := onlyFailover(t, Analyze(isolatedLeader().recs, o))
	// The isolated 5 keeps running, but the majority lost it. With a
	// quorum the cluster is settled only once the minority views none.
	if f.Op != "partition" || f.Leader != 5 || !f.Recovered || f.Duration != 700*time.Millisecond ||
		!slices.Equal(f.NewLeader, []election.NodeID{4}) {
		t.Fatalf("failover = %+v, want the partition taking 5 away, settled on 4 after 700ms", f)
	}
}

func TestFailoverOfAnIsolatedLeaderWithoutQuorumEndsWhenTheMajorityAgrees(t *testing.T) {
	f := onlyFailover(t, Analyze(isolatedLeader().recs, opts(5)))
	// Without a quorum the lone 5 leading itself is a settled component:
	// the failover ends when the majority agrees on 4, its own member.
	if f.Leader != 5 || !f.Recovered || f.Duration != 500*time.Millisecond ||
		!slices.Equal(f.NewLeader, []election.NodeID{4, 5}) {
		t.Fatalf("failover = %+v, want 5 → {4, 5} after 500ms", f)
	}
}

func TestFailoverOfHalvesIsTheMajoritySidesLoss(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.follow(1200, 3, 2, 1).lead(1300, 3, 2)
	h.follow(1450, 3, 2, 2)
	f := onlyFailover(t, Analyze(h.recs, opts(5)))
	if f.Leader != 5 || !f.Recovered || f.Duration != 450*time.Millisecond ||
		!slices.Equal(f.NewLeader, []election.NodeID{3, 5}) {
		t.Fatalf("failover = %+v, want {1,2,3} settled on 3 beside {4,5} on 5 after 450ms", f)
	}
}

func TestPartitionsThatLeaveTheLeaderAMajorityAreNoFailover(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{1, 2}, []election.NodeID{3, 4, 5})
	h.lead(1300, 2, 2).follow(1300, 2, 2, 1)
	h.heal(2000, 2000).follow(2200, 5, 1, 1, 2)
	h.partition(3000, 3000, []election.NodeID{1}, []election.NodeID{2, 3, 4, 5})
	if fs := Analyze(h.recs, opts(5)).Failovers; len(fs) != 0 {
		t.Fatalf("the leader kept a majority each time, yet failovers = %+v", fs)
	}
}

func TestFailoverOfAPausedLeaderEndsWithoutWaitingForItsThaw(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "pause", 5)
	h.lead(1600, 4, 2).follow(1600, 4, 2, 1, 2, 3)
	h.nodeFault(3000, 3000, "resume", 5)
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		o := opts(5)
		o.Quorum = q
		// The frozen 5 still views itself as leader; it is not live, so
		// no component holds it and the survivors settle on 4 alone.
		f := onlyFailover(t, Analyze(h.recs, o))
		if f.Op != "pause" || f.Leader != 5 || !f.Recovered || f.Duration != 600*time.Millisecond ||
			!slices.Equal(f.NewLeader, []election.NodeID{4}) {
			t.Fatalf("%v: failover = %+v, want 5 → 4 after 600ms", q, f)
		}
	}
}

func TestFailoverCutShortByTheNextFaultSaysSo(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "kill", 5)
	h.nodeFault(1200, 1200, "kill", 4)
	h.lead(1800, 3, 2).follow(1800, 3, 2, 1, 2)
	fs := Analyze(h.recs, opts(5)).Failovers
	if len(fs) != 1 || fs[0].Recovered || fs[0].Note == "" {
		t.Fatalf("failovers = %+v, want the kill of 5 unrecovered with a note (4 was not the leader)", fs)
	}
}

// TestElectionsListTheReElectionAfterAHeal: after the heal the side that
// elected 3 simply adopts 5, whose heartbeats it hears again, without an
// election message; that stretch is an election all the same.
func TestElectionsListTheReElectionAfterAHeal(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.send(1100, 3, 0, "ELECTION")
	h.lead(1500, 3, 2).follow(1500, 3, 2, 1, 2)
	h.send(1500, 3, 0, "COORDINATOR")
	h.heal(2000, 2000)
	h.send(2100, 5, 0, "HEARTBEAT")
	h.follow(2300, 5, 1, 1, 2, 3)
	an := Analyze(h.recs, Options{Members: election.FirstIDs(5), Algorithm: election.Algorithm{
		ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"}}})
	want := []struct {
		start, agreed int
		leaders       []election.NodeID
		messages      int
	}{
		{0, 100, []election.NodeID{5}, 0},
		{1000, 1500, []election.NodeID{3, 5}, 8},
		{2000, 2300, []election.NodeID{5}, 0},
	}
	if len(an.Elections) != len(want) {
		t.Fatalf("elections = %+v, want %d", an.Elections, len(want))
	}
	for i, w := range want {
		e := an.Elections[i]
		if !e.Start.Equal(at(w.start)) || !e.Agreed.Equal(at(w.agreed)) || !slices.Equal(e.Leaders, w.leaders) || e.Election+e.Announce != w.messages {
			t.Errorf("election %d = %+v, want %d→%d on %v with %d message(s)", i, e, w.start, w.agreed, w.leaders, w.messages)
		}
	}
}

func TestAnIsolationIsLabelledByItsShape(t *testing.T) {
	h := stableFive()
	h.fault(1000, "partition", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{5}})
	h.fault(1000, "partition", history.FaultOK, history.Fault{Nodes: []election.NodeID{5},
		Groups: [][]election.NodeID{{5}, {1, 2, 3, 4}}})
	if got := NewTimeline(h.recs, election.FirstIDs(5)).Faults[0].Label; got != "partition {5}|{1,2,3,4}" {
		t.Fatalf("label = %q, want the partition's groups alone", got)
	}
}

// TestFailoverOfCutsThatSilenceTheLeader: one-way cuts from 5 to everyone
// leave 5 hearing the others but unheard, a component of its own.
func TestFailoverOfCutsThatSilenceTheLeader(t *testing.T) {
	h := stableFive()
	links := history.Fault{Links: [][2]election.NodeID{{5, 1}, {5, 2}, {5, 3}, {5, 4}}}
	h.fault(1000, "partition", history.FaultInvoke, links)
	h.fault(1000, "partition", history.FaultOK, links)
	h.lead(1400, 4, 2).follow(1400, 4, 2, 1, 2, 3)
	f := onlyFailover(t, Analyze(h.recs, opts(5)))
	if f.Leader != 5 || !f.Recovered || f.Duration != 400*time.Millisecond || !slices.Equal(f.NewLeader, []election.NodeID{4, 5}) {
		t.Fatalf("failover = %+v, want 5 → {4, 5} after 400ms", f)
	}
}
