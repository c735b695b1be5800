package harness

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

// runShipped runs scenarios/<name>.yaml once in the simulator.
func runShipped(t *testing.T, name string) *Result {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, &sim.Backend{}, Options{Store: t.TempDir(), Seed: 1, Rep: 1, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("%s failed: %v", name, res.Failures)
	}
	return res
}

// faultAt returns when the run's fault op first took effect.
func faultAt(t *testing.T, res *Result, op string) check.FaultSpan {
	t.Helper()
	for _, f := range res.analysis.Timeline.Faults {
		if f.Op == op {
			return f
		}
	}
	t.Fatalf("no %s in the run's faults %+v", op, res.analysis.Timeline.Faults)
	return check.FaultSpan{}
}

// TestIsolatingTheLeaderWithQuorumIsAFailover: the isolated 5 keeps
// running, but the majority lost it; the failover lasts until {1,2,3,4}
// agree on 4 and 5, alone, views no leader.
func TestIsolatingTheLeaderWithQuorumIsAFailover(t *testing.T) {
	res := runShipped(t, "leader-isolated-quorum")
	if len(res.Failovers) != 1 {
		t.Fatalf("failovers = %+v, want the isolation of 5", res.Failovers)
	}
	f := res.Failovers[0]
	cut := faultAt(t, res, "partition")
	if f.Op != "partition" || f.Leader != 5 || !f.Recovered || !slices.Equal(f.NewLeader, []election.NodeID{4}) ||
		!f.From.Equal(cut.At()) || f.Duration <= 0 {
		t.Fatalf("failover = %+v, want the partition taking 5 away, settled on 4", f)
	}
	if s := res.analysis.Timeline.StateAt(f.At); s.Views[5].Leader != election.None {
		t.Fatalf("settled while the isolated 5 still views %d", s.Views[5].Leader)
	}
}

// TestSplitBrainWithoutQuorumListsEveryElection: the majority side's loss
// of 5 is a failover, and after the heal {1,2,3} adopting 5 again is an
// election of its own.
func TestSplitBrainWithoutQuorumListsEveryElection(t *testing.T) {
	res := runShipped(t, "split-brain-no-quorum")
	if len(res.Failovers) != 1 || res.Failovers[0].Leader != 5 || !res.Failovers[0].Recovered ||
		!slices.Equal(res.Failovers[0].NewLeader, []election.NodeID{3, 5}) {
		t.Fatalf("failovers = %+v, want the halves taking 5 from {1,2,3}, settled on 3 and 5", res.Failovers)
	}
	heal := faultAt(t, res, "heal").At()
	var leaders [][]election.NodeID
	for _, e := range res.Elections {
		leaders = append(leaders, e.Leaders)
	}
	want := [][]election.NodeID{{5}, {3, 5}, {5}}
	if !reflect.DeepEqual(leaders, want) {
		t.Fatalf("elections settled on %v, want %v", leaders, want)
	}
	last := res.Elections[2]
	if last.Start.Before(heal) || last.Agreed.IsZero() || last.Unfinished {
		t.Fatalf("last election %+v, want one from the heal at %v to agreement", last, heal)
	}
}

// TestResultsAndReportShareOneAnalysis: results.json and the page are made
// from the analysis judge computed, not from replays of their own.
func TestResultsAndReportShareOneAnalysis(t *testing.T) {
	res := runShipped(t, "split-brain-no-quorum")
	an := res.analysis
	if an == nil {
		t.Fatal("judge kept no analysis")
	}
	if reportOf(res).Analysis != an {
		t.Fatal("the report is not handed the run's analysis")
	}
	back, err := ReadResult(filepath.Join(res.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Elections) != len(an.Elections) || len(back.Failovers) != len(an.Failovers) {
		t.Fatalf("results.json has %d elections and %d failovers, the analysis %d and %d",
			len(back.Elections), len(back.Failovers), len(an.Elections), len(an.Failovers))
	}
	for i, e := range an.Elections {
		if !back.Elections[i].Agreed.Equal(e.Agreed) || !slices.Equal(back.Elections[i].Leaders, e.Leaders) {
			t.Errorf("election %d: results.json %+v, analysis %+v", i, back.Elections[i], e)
		}
	}
	for i, v := range an.Verdicts {
		got := back.Checkers[i].Verdict
		if got.Checker != v.Checker || got.Pass != v.Pass || got.Evidence.IsZero() {
			t.Errorf("verdict %d read back as %+v, want %s with typed evidence", i, got, v.Checker)
		}
	}
	if sb := back.Checkers[slices.IndexFunc(back.Checkers, func(c CheckerResult) bool { return c.Checker == check.NoSplitBrain })]; sb.Evidence.SplitBrain == nil ||
		len(sb.Evidence.SplitBrain.Overlaps) != len(an.SplitBrain.Overlaps) {
		t.Errorf("no-split-brain's evidence read back as %+v, want the analysis's %d overlap(s)", sb.Evidence, len(an.SplitBrain.Overlaps))
	}
	page, err := os.ReadFile(filepath.Join(res.Dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<tr class="election`); n != len(an.Elections) {
		t.Errorf("the page lists %d elections, the analysis %d", n, len(an.Elections))
	}
}
