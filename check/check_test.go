package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func opts(n int) Options { return Options{Members: election.FirstIDs(n)} }

func splitEvidence(t *testing.T, v Verdict) SplitBrainEvidence {
	t.Helper()
	if v.Evidence.SplitBrain == nil {
		t.Fatalf("evidence is %+v, want SplitBrainEvidence", v.Evidence)
	}
	return *v.Evidence.SplitBrain
}

// oneActingOverlap checks h for split brain and demands that it fail on
// exactly one overlap of two acting leaders, lasting d (why says which).
func oneActingOverlap(t *testing.T, h *hist, d time.Duration, why string) SplitBrainEvidence {
	t.Helper()
	v := Check(h.recs, opts(5), NoSplitBrain)
	ev := splitEvidence(t, v)
	if v.Pass || len(ev.Overlaps) != 1 || ev.Overlaps[0].Duration != d {
		t.Fatalf("acting overlaps %+v, want one of %v (%s)", ev.Overlaps, d, why)
	}
	return ev
}

func TestNoSplitBrainPassesOneLeaderAtATime(t *testing.T) {
	h := &hist{}
	h.lead(0, 1, 1).follow(0, 1, 1, 2)
	h.follow(1000, 2, 2, 1) // 1 hands over at the instant 2 takes over
	h.lead(1000, 2, 2)
	v := Check(h.recs, opts(2), NoSplitBrain)
	if !v.Pass {
		t.Fatalf("touching leader intervals must not overlap: %s", v.Summary)
	}
	if n := len(splitEvidence(t, v).LeaderIntervals); n != 2 {
		t.Fatalf("leader intervals = %d, want 2", n)
	}
}

func TestNoSplitBrainReportsExactOverlap(t *testing.T) {
	h := &hist{}
	h.lead(0, 1, 1).follow(0, 1, 1, 2, 3)
	h.lead(400, 2, 2)       // 2 leads from 400 ms
	h.follow(1000, 2, 2, 1) // 1 steps down at 1000 ms
	h.follow(1500, 3, 3, 2) // 2 steps down at 1500 ms
	h.lead(1200, 3, 3)      // 3 leads from 1200 ms: overlaps 2 for 300 ms
	h.follow(2000, 3, 3, 1) // end of history
	v := Check(h.recs, opts(3), NoSplitBrain)
	if v.Pass {
		t.Fatal("two overlapping leaders passed")
	}
	ev := splitEvidence(t, v)
	want := []Overlap{
		{Nodes: [2]election.NodeID{1, 2}, Start: at(400), End: at(1000), Duration: 600 * time.Millisecond},
		{Nodes: [2]election.NodeID{2, 3}, Start: at(1200), End: at(1500), Duration: 300 * time.Millisecond},
	}
	if len(ev.Overlaps) != len(want) {
		t.Fatalf("overlaps = %+v, want %d", ev.Overlaps, len(want))
	}
	for i, w := range want {
		g := ev.Overlaps[i]
		if g.Nodes != w.Nodes || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Duration != w.Duration {
			t.Errorf("overlap %d = %v %v..%v (%v), want %v %v..%v (%v)", i, g.Nodes, g.Start, g.End, g.Duration, w.Nodes, w.Start, w.End, w.Duration)
		}
	}
	if ev.Total != 900*time.Millisecond || ev.TotalMillis != 900 {
		t.Errorf("total overlap = %v, want 900ms", ev.Total)
	}
	if !strings.Contains(v.Summary, "900 ms") {
		t.Errorf("summary %q does not quote the total overlap", v.Summary)
	}
}

func TestNoSplitBrainThreeLeadersCountOnceInTotal(t *testing.T) {
	h := &hist{}
	h.lead(0, 1, 1).lead(100, 2, 1).lead(200, 3, 1).undecided(300, 1, 2, 3)
	ev := splitEvidence(t, Check(h.recs, opts(3), NoSplitBrain))
	// pairs: 1-2 200 ms, 1-3 100 ms, 2-3 100 ms; union of time with ≥2 leaders: 100..300.
	if len(ev.Overlaps) != 3 || ev.PairTotal != 400*time.Millisecond || ev.Total != 200*time.Millisecond {
		t.Fatalf("overlaps %d, pair total %v, total %v; want 3, 400ms, 200ms", len(ev.Overlaps), ev.PairTotal, ev.Total)
	}
}

func TestKilledLeaderIntervalEndsAtKill(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1010, "kill", 5)
	h.lead(1005, 4, 2) // 4 takes over between the kill's invoke and its ok
	h.follow(1300, 4, 2, 1, 2, 3)
	v := Check(h.recs, opts(5), NoSplitBrain)
	ev := splitEvidence(t, v)
	var five LeaderInterval
	for _, iv := range ev.LeaderIntervals {
		if iv.Node == 5 {
			five = iv
		}
	}
	// 5 did nothing after the kill was invoked: gone from then, not from
	// the engine's late confirmation.
	if !five.End.Equal(at(1000)) {
		t.Fatalf("node 5's leader interval ends at %v, want the kill's invoke at %v", five.End, at(1000))
	}
	if !v.Pass || len(ev.Overlaps) != 0 {
		t.Fatalf("a leader that took over from a dead one is no split brain, though the engine confirmed the kill late: %+v", ev.Overlaps)
	}
}

func TestKilledLeaderThatStillActsLeadsUntilItsLastAct(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1010, "kill", 5)
	h.lead(1002, 4, 2)
	h.send(1007, 5, 1, "HEARTBEAT") // 5 still ran, and acted, after the invoke
	h.follow(1300, 4, 2, 1, 2, 3)
	oneActingOverlap(t, h, 5*time.Millisecond, "1002..1007: from 4's lead to 5's last act")
}

func TestPausedLeaderIsStaleUntilItThaws(t *testing.T) {
	h := stableFive()
	h.nodeFault(500, 510, "pause", 5)
	h.lead(1200, 4, 2).follow(1200, 4, 2, 1, 2, 3)
	h.nodeFault(2000, 2010, "resume", 5)
	h.follow(2050, 4, 2, 5) // 5 learns it was replaced 40ms after it thawed
	v := Check(h.recs, opts(5), NoSplitBrain)
	ev := splitEvidence(t, v)
	// Frozen from 1200 to 2010 it could not act: stale, not split brain.
	if len(ev.StaleOverlaps) != 1 || ev.StaleOverlaps[0].Duration != 810*time.Millisecond || !slices.Equal(ev.StaleOverlaps[0].Paused, []election.NodeID{5}) {
		t.Fatalf("stale overlaps %+v, want one of 810ms with 5 paused", ev.StaleOverlaps)
	}
	// Thawed and still leading for 40ms beside 4: that is split brain.
	if v.Pass || len(ev.Overlaps) != 1 || ev.Overlaps[0].Duration != 40*time.Millisecond || len(ev.Overlaps[0].Paused) != 0 {
		t.Fatalf("acting overlaps %+v, want one of 40ms after the resume", ev.Overlaps)
	}
	if !strings.Contains(v.Summary, "stale") {
		t.Errorf("summary %q does not name the stale leader", v.Summary)
	}
}

func TestPausedLeaderThatStepsDownOnThawIsNoSplitBrain(t *testing.T) {
	h := stableFive()
	h.nodeFault(500, 510, "pause", 5)
	h.lead(1200, 4, 2).follow(1200, 4, 2, 1, 2, 3)
	h.follow(2005, 4, 2, 5) // its lease timer fires first thing on thaw
	h.nodeFault(2000, 2010, "resume", 5)
	v := Check(h.recs, opts(5), NoSplitBrain)
	ev := splitEvidence(t, v)
	if !v.Pass || len(ev.Overlaps) != 0 {
		t.Fatalf("a leader frozen while replaced and stepping down on thaw is not split brain: %s %+v", v.Summary, ev.Overlaps)
	}
	if len(ev.StaleOverlaps) != 1 || ev.StaleOverlaps[0].Duration != 805*time.Millisecond {
		t.Fatalf("stale overlaps %+v, want one of 805ms (1200..2005)", ev.StaleOverlaps)
	}
}

func TestThawedLeaderActingBeforeResumeIsConfirmedIsSplitBrain(t *testing.T) {
	h := stableFive()
	h.nodeFault(500, 510, "pause", 5)
	h.lead(1200, 4, 2).follow(1200, 4, 2, 1, 2, 3)
	h.nodeFault(2000, 2030, "resume", 5)
	h.send(2003, 5, 1, "HEARTBEAT") // it runs (and acts) before the engine says so
	h.follow(2006, 4, 2, 5)
	ev := oneActingOverlap(t, h, 3*time.Millisecond, "from its first record after the resume to its step-down")
	if len(ev.StaleOverlaps) != 1 || ev.StaleOverlaps[0].Duration != 803*time.Millisecond {
		t.Fatalf("stale overlaps %+v, want one of 803ms (1200..2003)", ev.StaleOverlaps)
	}
}

func TestThawedLeaderJudgedFromItsMachinesFirstAct(t *testing.T) {
	h := stableFive()
	h.nodeFault(500, 510, "pause", 5)
	h.lead(1200, 4, 2).follow(1200, 4, 2, 1, 2, 3)
	h.nodeFault(2000, 2030, "resume", 5)
	// The runtime logs a queued message before its machine sees it; the
	// machine then gives leadership up before doing anything else.
	h.add(history.Record{Time: at(2003), Process: "node", Kind: history.KindRecv, Node: 5, Msg: &election.Message{Type: "HEARTBEAT", From: 4, To: 5, Epoch: 2}})
	h.follow(2004, 4, 2, 5)
	v := Check(h.recs, opts(5), NoSplitBrain)
	if ev := splitEvidence(t, v); !v.Pass || len(ev.Overlaps) != 0 {
		t.Fatalf("a thawed leader whose first act is to step down is no split brain: %s %+v", v.Summary, ev.Overlaps)
	}
}

// thawed is a leader 5, paused and replaced by 4, thawed by a resume
// invoked at 2000 that the engine confirms at ok. A node that talks has
// its messages recorded (ringleader's own runtime); one that does not is
// a real server, whose views are polled.
func thawed(talks bool, ok int) *hist {
	h := stableFive()
	if talks {
		h.send(300, 5, 1, "HEARTBEAT")
	}
	h.nodeFault(500, 510, "pause", 5)
	h.lead(1200, 4, 2).follow(1200, 4, 2, 1, 2, 3)
	return h.nodeFault(2000, ok, "resume", 5)
}

// thawedLate is thawed for a node that talks, the engine answering at
// 2010, before 5 writes anything.
func thawedLate() *hist { return thawed(true, 2010) }

func TestThawedLeaderScheduledAfterTheEngineAnsweredIsJudgedFromItsFirstAct(t *testing.T) {
	h := thawedLate()
	h.add(history.Record{Time: at(2013), Process: "node", Kind: history.KindView, Node: 5, Boot: "b", Seq: 9,
		View: &election.View{Leader: 4, Epoch: 2, Role: election.Follower}}) // its first act: stepping down
	v := Check(h.recs, opts(5), NoSplitBrain)
	ev := splitEvidence(t, v)
	if !v.Pass || len(ev.Overlaps) != 0 {
		t.Fatalf("a thawed leader silent until it steps down is no split brain, though the engine answered first: %s %+v", v.Summary, ev.Overlaps)
	}
	if len(ev.StaleOverlaps) != 1 || ev.StaleOverlaps[0].Duration != 813*time.Millisecond {
		t.Fatalf("stale overlaps %+v, want one of 813ms (1200..2013)", ev.StaleOverlaps)
	}
}

func TestThawedLeaderScheduledLateIsJudgedFromTheStepItsFirstInputStarts(t *testing.T) {
	h := thawedLate()
	recv := func(ms int, seq uint64) {
		h.add(history.Record{Time: at(ms), Process: "node", Kind: history.KindRecv, Node: 5, Boot: "b", Seq: seq,
			Msg: &election.Message{Type: "HEARTBEAT", From: 4, To: 5, Epoch: 2}})
	}
	stepDown := func(ms int, seq uint64) {
		h.add(history.Record{Time: at(ms), Process: "node", Kind: history.KindView, Node: 5, Boot: "b", Seq: seq,
			View: &election.View{Leader: 4, Epoch: 2, Role: election.Follower}})
	}
	// The runtime writes the message it hands the machine, then the
	// machine steps down: one step, records 9 and 10.
	recv(2013, 9)
	stepDown(2015, 10)
	if v := Check(h.recs, opts(5), NoSplitBrain); !v.Pass {
		t.Fatalf("a thawed leader whose first step is to step down is no split brain: %s", v.Summary)
	}

	// A first step that does not act shows the node ran, still leading:
	// from the engine's answer on, that is split brain.
	h = thawedLate()
	recv(2013, 9)
	recv(2020, 10)
	stepDown(2025, 11)
	oneActingOverlap(t, h, 15*time.Millisecond, "the ok at 2010 to the step-down at 2025")
}

func TestThawedLeaderThatNeverTalksIsJudgedFromTheEnginesAnswer(t *testing.T) {
	// A real server's views are polled: its silence after the thaw says
	// nothing of whether it ran, so the engine's answer stands.
	h := thawed(false, 2010)
	h.follow(2013, 4, 2, 5)
	oneActingOverlap(t, h, 3*time.Millisecond, "the ok at 2010 to the polled step-down at 2013")
}

func TestSimulatedResumeIsNotDeferred(t *testing.T) {
	// The simulator completes a fault at its invoke's instant: the node
	// runs from then, whatever it writes next.
	h := thawed(true, 2000)
	h.follow(2013, 4, 2, 5)
	oneActingOverlap(t, h, 13*time.Millisecond, "2000..2013")
}

func TestRestartedNodeStartsUndecided(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "kill", 5)
	h.lead(1500, 4, 2).follow(1500, 4, 2, 1, 2, 3)
	h.boot(2000, 5, "b2")
	tl := NewTimeline(h.recs, election.FirstIDs(5))
	s := tl.StateAt(at(2000))
	if !s.Up[5] {
		t.Fatal("a boot record must bring node 5 up")
	}
	if _, has := s.Views[5]; has {
		t.Fatalf("restarted node 5 still holds its old view %v", s.Views[5])
	}
	lane := tl.Lane(5)
	var states []Status
	for _, st := range lane.States {
		states = append(states, st.State)
	}
	if !slices.Equal(states, []Status{Up, Down, Up}) {
		t.Fatalf("node 5 states = %v, want up, down, up", states)
	}
	if got := lane.Views[len(lane.Views)-1]; !got.End.Equal(at(1000)) {
		t.Fatalf("node 5's last view ends at %v, want the kill at %v", got.End, at(1000))
	}
}

func TestAgreementJudgesPartitionedComponentsSeparately(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1010, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.lead(1600, 3, 2).follow(1600, 3, 2, 1, 2)
	o := opts(5)
	o.Checkpoints = []time.Time{at(500), at(3000)}
	for _, name := range []Name{Agreement, BullyMax} {
		v := Check(h.recs, o, name)
		if !v.Pass {
			t.Fatalf("%s: {1,2,3} on 3 and {4,5} on 5 must pass without quorum: %s", name, v.Summary)
		}
		ev := (*v.Evidence.Stable)
		if n := len(ev.Checkpoints[1].Components); n != 2 {
			t.Fatalf("%s: %d components at the second checkpoint, want 2", name, n)
		}
	}
	// Before the minority side settles, node 3 still views 5: disagreement.
	o.Checkpoints = []time.Time{at(1300)}
	h2 := stableFive()
	h2.partition(1000, 1010, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h2.lead(1200, 3, 2).follow(1200, 3, 2, 1)
	v := Check(h2.recs, o, Agreement)
	if v.Pass || !strings.Contains(v.Summary, "{1,2,3}") || !strings.Contains(v.Summary, "disagree") {
		t.Fatalf("component {1,2,3} with node 2 still on 5 must fail agreement, got %v: %s", v.Pass, v.Summary)
	}
}

func TestQuorumMinorityMustHaveNoLeader(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1010, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.lead(1600, 3, 2).follow(1600, 3, 2, 1, 2)
	o := opts(5)
	o.Quorum = election.Majority
	v := Check(h.recs, o, BullyMax)
	if v.Pass || !strings.Contains(v.Summary, "minority") || !strings.Contains(v.Summary, "{4,5}") {
		t.Fatalf("minority {4,5} still leading must fail bully-max with quorum: %v %s", v.Pass, v.Summary)
	}
	h.undecided(2000, 4, 5) // the lease expires: the minority steps down
	for _, name := range []Name{Agreement, BullyMax} {
		if v := Check(h.recs, o, name); !v.Pass {
			t.Fatalf("%s: leaderless minority and majority on 3 must pass: %s", name, v.Summary)
		}
	}
	// Without quorum the same leaderless minority fails agreement.
	if v := Check(h.recs, opts(5), Agreement); v.Pass {
		t.Fatal("without quorum a component with no leader must fail agreement")
	}
}

func TestBullyMaxFailsWhenLowerIDLeads(t *testing.T) {
	h := &hist{}
	h.lead(100, 4, 1).follow(100, 4, 1, 1, 2, 3, 5)
	v := Check(h.recs, opts(5), BullyMax)
	if v.Pass || !strings.Contains(v.Summary, "highest live ID is 5") {
		t.Fatalf("leader 4 with 5 alive must fail bully-max: %s", v.Summary)
	}
	if v := Check(h.recs, opts(5), Agreement); !v.Pass {
		t.Fatalf("everyone on 4 still agrees: %s", v.Summary)
	}
}

func TestBridgedComponentIsNotJudged(t *testing.T) {
	h := stableFive()
	// 3 bridges {1,2,3} and {3,4,5}: 1 cannot talk to 5 directly.
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{3, 4, 5})
	h.lead(1500, 3, 2).follow(1500, 3, 2, 1, 2)
	v := Check(h.recs, opts(5), Agreement)
	if !v.Pass || !strings.Contains(v.Summary, "bridged") {
		t.Fatalf("a bridged component is outside the algorithms' premise: %v %s", v.Pass, v.Summary)
	}
}

func TestEpochSafetyFailsOnTwoLeadersInOneEpoch(t *testing.T) {
	h := &hist{}
	h.lead(0, 3, 7).follow(0, 3, 7, 1, 2)
	h.follow(100, 2, 8, 3).lead(100, 2, 8)
	if v := Check(h.recs, opts(3), EpochSafety); !v.Pass {
		t.Fatalf("leaders in epochs 7 and 8 are safe: %s", v.Summary)
	}
	h.lead(200, 1, 8)
	v := Check(h.recs, opts(3), EpochSafety)
	ev := (*v.Evidence.Epochs)
	if v.Pass || len(ev.Violations) != 1 || ev.Violations[0].Epoch != 8 || !slices.Equal(ev.Violations[0].Nodes, []election.NodeID{1, 2}) {
		t.Fatalf("epoch 8 led by 1 and 2 must fail: %v %+v", v.Pass, ev.Violations)
	}
}

func TestLivenessMeasuresFromTheLastFault(t *testing.T) {
	h := stableFive()
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.lead(1500, 3, 2).follow(1500, 3, 2, 1, 2)
	h.heal(2000, 2010)
	h.follow(6010, 5, 3, 1, 2, 3) // everyone back on 5 four seconds after the heal
	o := opts(5)
	o.LivenessBound = 2 * time.Second
	v := Check(h.recs, o, Liveness)
	ev := v.Evidence.Liveness
	if v.Pass || !ev.Reached || ev.Took != 4*time.Second || ev.LastFault != "heal" {
		t.Fatalf("a leader 4s after the heal must fail a 2s bound: %v %+v", v.Pass, ev)
	}
	o.LivenessBound = 5 * time.Second
	if v := Check(h.recs, o, Liveness); !v.Pass {
		t.Fatalf("4s is within 5s: %s", v.Summary)
	}
}

func TestLivenessFailsWhenNoLeaderEmerges(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "kill", 5)
	h.undecided(1500, 1, 2, 3, 4)
	h.send(3000, 1, 2, "ELECTION")
	v := Check(h.recs, opts(5), Liveness)
	if v.Pass || !strings.Contains(v.Summary, "no leader") {
		t.Fatalf("a leaderless cluster after a kill must fail liveness: %s", v.Summary)
	}
	// Nodes still believing in the dead leader are not a leader either.
	h2 := stableFive()
	h2.nodeFault(1000, 1000, "kill", 5)
	h2.send(3000, 1, 2, "HEARTBEAT")
	if v := Check(h2.recs, opts(5), Liveness); v.Pass {
		t.Fatal("followers of a dead leader must fail liveness")
	}
}

func TestFailoverTimesTheLeaderKill(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1020, "kill", 5)
	h.lead(1500, 4, 2).follow(1500, 4, 2, 1, 2)
	h.follow(1820, 4, 2, 3)            // the last live node learns at 1820
	h.nodeFault(3000, 3000, "kill", 2) // a follower: not a failover
	fs := Failovers(h.recs, opts(5))
	if len(fs) != 1 {
		t.Fatalf("failovers = %+v, want only the leader's kill", fs)
	}
	f := fs[0]
	// 5 did nothing after the kill was invoked: the failover runs from
	// then, not from the engine's confirmation 20ms later.
	if !f.Recovered || f.Leader != 5 || f.Duration != 820*time.Millisecond || !slices.Equal(f.NewLeader, []election.NodeID{4}) {
		t.Fatalf("failover = %+v, want 5 → 4 in 820ms from the kill", f)
	}
	st := Stats(fs)
	if st.N != 1 || st.P50 != 820*time.Millisecond || st.Max != 820*time.Millisecond {
		t.Fatalf("stats = %+v", st)
	}
}

func TestStatsNearestRank(t *testing.T) {
	var fs []Failover
	for i := 1; i <= 20; i++ {
		fs = append(fs, Failover{Recovered: true, Duration: time.Duration(i) * time.Millisecond})
	}
	fs = append(fs, Failover{})
	st := Stats(fs)
	if st.N != 20 || st.Unrecovered != 1 || st.P50 != 10*time.Millisecond || st.P95 != 19*time.Millisecond || st.Max != 20*time.Millisecond {
		t.Fatalf("stats = %+v, want n=20 unrecovered=1 p50=10ms p95=19ms max=20ms", st)
	}
}

func testAlgorithm(formula float64, exact bool) election.Algorithm {
	return election.Algorithm{
		Name:          "test",
		ElectionTypes: []string{"ELECTION", "OK"},
		AnnounceTypes: []string{"COORDINATOR"},
		Formula: func(ids []election.NodeID) election.Formula {
			return election.Formula{Name: "test formula", Value: formula, Exact: exact}
		},
		Claims: func(q election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins}
		},
	}
}

// electionOfThree: 1 and 2 each ask 3; 3 announces; settled at 30 ms. One
// straggling OK after agreement still belongs to the first election.
func electionOfThree() *hist {
	h := &hist{}
	h.undecided(0, 1, 2, 3)
	h.send(10, 1, 3, "ELECTION").send(10, 2, 3, "ELECTION")
	h.send(20, 3, 0, "COORDINATOR") // a broadcast logged once: 2 messages
	h.lead(20, 3, 1).follow(30, 3, 1, 1, 2)
	h.send(35, 3, 1, "OK")
	h.send(100, 3, 1, "HEARTBEAT")
	return h
}

func TestMessageComplexityComparesTheFirstElection(t *testing.T) {
	o := opts(3)
	o.Algorithm = testAlgorithm(3, true)
	v := Check(electionOfThree().recs, o, MessageComplexity)
	ev := v.Evidence.Complexity
	if !v.Pass || ev.First != 3 || !ev.Compared {
		t.Fatalf("3 election messages = exact 3 must pass: %s (%+v)", v.Summary, ev)
	}
	if ev.Counts.Announce != 2 || ev.Counts.Maintenance != 1 || ev.Counts.ByType["ELECTION"] != 2 {
		t.Fatalf("counts = %+v, want announce 2 (broadcast to 2), maintenance 1, ELECTION 2", ev.Counts)
	}
	if len(ev.Elections) != 1 || ev.Elections[0].Election != 3 || ev.Elections[0].Announce != 2 {
		t.Fatalf("elections = %+v, want one with 3 election and 2 announce messages", ev.Elections)
	}
	o.Algorithm = testAlgorithm(2, true)
	if v := Check(electionOfThree().recs, o, MessageComplexity); v.Pass || !strings.Contains(v.Summary, "3 election message(s) ≠") {
		t.Fatalf("3 ≠ exact 2 must fail: %s", v.Summary)
	}
	o.Algorithm = testAlgorithm(4, false)
	if v := Check(electionOfThree().recs, o, MessageComplexity); !v.Pass {
		t.Fatalf("3 ≤ bound 4 must pass: %s", v.Summary)
	}
	o.Algorithm = testAlgorithm(2, false)
	if v := Check(electionOfThree().recs, o, MessageComplexity); v.Pass {
		t.Fatalf("3 > bound 2 must fail: %s", v.Summary)
	}
}

func TestMessageComplexitySegmentsElectionsByFaults(t *testing.T) {
	h := electionOfThree()
	h.nodeFault(500, 500, "kill", 3)
	h.send(1000, 1, 2, "ELECTION")
	h.lead(1010, 2, 2).follow(1020, 2, 2, 1)
	o := opts(3)
	o.Algorithm = testAlgorithm(3, true)
	ev := Check(h.recs, o, MessageComplexity).Evidence.Complexity
	if len(ev.Elections) != 2 || ev.Elections[1].Election != 1 || !ev.Elections[1].Agreed.Equal(at(1020)) {
		t.Fatalf("elections = %+v, want a second one of 1 message agreed at 1020ms", ev.Elections)
	}
	if ev.First != 3 {
		t.Fatalf("first election = %d messages, want 3 (the later one is not part of it)", ev.First)
	}
}

func TestMessageComplexityDoesNotCompareAFaultyFirstElection(t *testing.T) {
	h := &hist{}
	h.send(10, 1, 3, "ELECTION")
	h.nodeFault(15, 15, "kill", 3)
	h.lead(50, 2, 1).follow(60, 2, 1, 1)
	o := opts(3)
	o.Algorithm = testAlgorithm(0, true)
	v := Check(h.recs, o, MessageComplexity)
	if ev := v.Evidence.Complexity; !v.Pass || ev.Compared {
		t.Fatalf("a first election cut by a fault is not compared: %v %s", v.Pass, v.Summary)
	}
}

func TestRunUsesTheClaimsAndNamesUnknownCheckers(t *testing.T) {
	o := opts(3)
	o.Algorithm = testAlgorithm(3, true)
	vs := Run(electionOfThree().recs, o)
	var names []Name
	for _, v := range vs {
		names = append(names, v.Checker)
		if !v.Pass {
			t.Errorf("%s failed a correct history: %s", v.Checker, v.Summary)
		}
	}
	if !slices.Equal(names, []Name{Agreement, BullyMax, MessageComplexity}) {
		t.Fatalf("checkers run = %v, want the claimed ones plus message-complexity", names)
	}
	v := Run(nil, o, "split-brian")[0]
	if v.Pass || !strings.Contains(v.Summary, "no-split-brain") {
		t.Fatalf("an unknown name must fail and list the known ones: %s", v.Summary)
	}
}

func TestHistoryOrderDoesNotMatter(t *testing.T) {
	h := &hist{}
	h.lead(400, 2, 2).lead(0, 1, 1).follow(1000, 2, 2, 1)
	ev := splitEvidence(t, Check(h.recs, opts(2), NoSplitBrain))
	if len(ev.Overlaps) != 1 || ev.Overlaps[0].Duration != 600*time.Millisecond {
		t.Fatalf("records out of time order: overlaps %+v, want one of 600ms", ev.Overlaps)
	}
}

func TestFaultSpansLabelAndUndo(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1010, "kill", 5)
	h.partition(2000, 2005, []election.NodeID{1, 2, 3}, []election.NodeID{4})
	h.nodeFault(3000, 3020, "restart", 5)
	h.heal(4000, 4001)
	h.fault(5000, "pause", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{1}})
	h.fault(5001, "pause", history.FaultFail, history.Fault{Nodes: []election.NodeID{1}, Error: "no such container"})
	tl := NewTimeline(h.recs, election.FirstIDs(5))
	want := []struct {
		label string
		until time.Time
	}{
		{"kill 5", at(3020)},
		{"partition {1,2,3}|{4}", at(4001)},
		{"restart 5", at(3020)},
		{"heal", at(4001)},
		{"pause 1 (failed)", at(5000)},
	}
	if len(tl.Faults) != len(want) {
		t.Fatalf("faults = %+v", tl.Faults)
	}
	for i, w := range want {
		if f := tl.Faults[i]; f.Label != w.label || !f.Until.Equal(w.until) {
			t.Errorf("fault %d = %q until %v, want %q until %v", i, f.Label, f.Until, w.label, w.until)
		}
	}
	if s := tl.StateAt(at(5001)); s.Paused[1] {
		t.Error("a failed pause must not pause the node")
	}
}

func TestCheckpointAtTheNextFaultsInstantJudgesThePeriodBefore(t *testing.T) {
	h := stableFive()
	// The simulator's clock does not move between the end of a quiet
	// period and the next fault: both happen at 1000 ms.
	h.partition(1000, 1000, []election.NodeID{1, 2, 3}, []election.NodeID{4, 5})
	h.lead(1000, 3, 2).follow(1000, 3, 2, 1, 2)
	o := opts(5)
	o.Checkpoints = []time.Time{at(1000)}
	v := Check(h.recs, o, BullyMax)
	if !v.Pass {
		t.Fatalf("the checkpoint must judge the stable period before the partition: %s", v.Summary)
	}
	if n := len((*v.Evidence.Stable).Checkpoints[0].Components); n != 1 {
		t.Fatalf("components = %d, want the single pre-partition component", n)
	}
}

func TestOneWayCutSeparatesAPair(t *testing.T) {
	h := stableFive()
	h.fault(1000, "partition", history.FaultInvoke, history.Fault{Links: [][2]election.NodeID{{5, 1}, {5, 2}, {5, 3}, {5, 4}}})
	h.fault(1000, "partition", history.FaultOK, history.Fault{Links: [][2]election.NodeID{{5, 1}, {5, 2}, {5, 3}, {5, 4}}})
	tl := NewTimeline(h.recs, election.FirstIDs(5))
	comps := Components(tl.StateAt(at(1000)), tl.Members)
	if len(comps) != 2 || !slices.Equal(comps[0].Nodes, []election.NodeID{1, 2, 3, 4}) || !slices.Equal(comps[1].Nodes, []election.NodeID{5}) {
		t.Fatalf("5 can hear but not be heard: components %+v, want {1,2,3,4} and {5}", comps)
	}
	if tl.Faults[0].Label != "partition 5→1 5→2 5→3 5→4" {
		t.Errorf("label = %q", tl.Faults[0].Label)
	}
}

func TestPausedNodesAreNotLive(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "pause", 5)
	o := opts(5)
	v := Check(h.recs, o, BullyMax)
	if v.Pass || !strings.Contains(v.Summary, "highest live ID is 4") {
		t.Fatalf("with 5 paused, 4 is the highest live ID: %s", v.Summary)
	}
	ev := (*v.Evidence.Stable)
	if !slices.Equal(ev.Checkpoints[0].Paused, []election.NodeID{5}) {
		t.Fatalf("paused = %v, want [5]", ev.Checkpoints[0].Paused)
	}
}

func TestSettledDatesEachKilledNodeByItsOwnLastAct(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1010, "kill", 4, 5)
	h.send(1003, 4, 1, "HEARTBEAT") // 4 still ran after the invoke; 5 did not
	var oks []history.Record
	for _, r := range DateFaults(h.recs) {
		if r.Kind == history.KindFault && r.Fault.Phase == history.FaultOK {
			oks = append(oks, r)
		}
	}
	if len(oks) != 2 {
		t.Fatalf("ok records %+v, want one per killed node", oks)
	}
	got := map[election.NodeID]time.Time{}
	for _, r := range oks {
		got[r.Fault.Nodes[0]] = r.Time
	}
	if !got[5].Equal(at(1000)) || !got[4].Equal(at(1003)) {
		t.Fatalf("kill dated 4 at %v and 5 at %v, want 1003 (its last act) and 1000 (the invoke)", got[4], got[5])
	}
	if recs := DateFaults(h.recs[:len(h.recs)-2]); len(recs) != len(h.recs)-2 {
		t.Fatalf("a history whose kill never completed lost or gained records")
	}
}
