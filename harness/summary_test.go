package harness

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/check"
)

func TestTableShowsExpectedFailuresAndRepetitionStats(t *testing.T) {
	var results []*Result
	for rep := 1; rep <= 3; rep++ {
		b := newFake()
		b.electionTime = time.Duration(rep) * 100 * time.Millisecond
		res, err := Run(context.Background(), mustParse(t, splitBrain+"expect_checkers: {no-split-brain: fail}\n"), b, Options{Store: t.TempDir(), Rep: rep, Reps: 3})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	crash, err := Run(context.Background(), mustParse(t, crash), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	results = append(results, crash)

	var table bytes.Buffer
	if err := Table(&table, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "NO-SPLIT-BRAIN") {
		t.Fatalf("table:\n%s", table.String())
	}
	if !strings.Contains(lines[1], "split") || !strings.Contains(lines[1], "1/3") || !strings.Contains(lines[1], "fail (expected)") || !strings.HasSuffix(lines[1], "PASS") {
		t.Errorf("split row: %q", lines[1])
	}
	if !strings.Contains(lines[4], "700 ms") {
		t.Errorf("crash row lacks its failover: %q", lines[4])
	}

	sums := Summarise(results)
	if len(sums) != 2 || sums[0].Runs != 3 || sums[0].Passed != 3 || sums[0].RunsWithOverlap != 3 {
		t.Fatalf("summaries: %+v", sums)
	}
	// The overlap lasts from the faster side's election to the heal's
	// re-election: different per repetition, never zero.
	if sums[0].OverlapMin <= 0 || sums[0].OverlapMax < sums[0].OverlapMin {
		t.Errorf("overlap stats: %+v", sums[0])
	}
	want := check.FailoverStats{N: 1, P50: 700 * time.Millisecond, P95: 700 * time.Millisecond, Max: 700 * time.Millisecond}
	if sums[1].Failover != want {
		t.Errorf("crash failover stats %+v, want %+v", sums[1].Failover, want)
	}
	var out bytes.Buffer
	WriteSummaries(&out, sums)
	if !strings.Contains(out.String(), "split: 3/3 runs passed") || strings.Contains(out.String(), "crash:") {
		t.Errorf("summaries text (single runs are not summarised):\n%s", out.String())
	}
}

func TestFailoverShownAsTheRangeTheEngineLeaves(t *testing.T) {
	for _, c := range []struct {
		ok, invoke float64
		want       string
	}{
		{700, 700, "700 ms"},     // the simulator: the fault acts the instant it is invoked
		{672, 690, "672–690 ms"}, // a pause: the engine confirmed it 18 ms late
		{0, 248, "0–248 ms"},     // a kill: the survivors moved on before docker returned
		{310, 0, "310 ms"},       // no invoke time recorded
		{1200, 1750, "1 200–1 750 ms"},
	} {
		f := FailoverResult{FromInvokeMillis: c.invoke}
		f.Millis = c.ok
		if got := failoverText(f); got != c.want {
			t.Errorf("ok %v, invoke %v: %q, want %q", c.ok, c.invoke, got, c.want)
		}
	}
}

// TestSummaryOfNothingRecoveredSaysSo: repetitions whose returns never
// recovered give no percentile of nothing ("p50 0 ms") but say none did.
func TestSummaryOfNothingRecoveredSaysSo(t *testing.T) {
	s := Summary{Scenario: "s", Runs: 3, Passed: 3, SuspicionMillis: 500,
		Returns: map[string]check.FailoverStats{"heal": {Unrecovered: 3}}}
	var out bytes.Buffer
	WriteSummaries(&out, []Summary{s})
	text := out.String()
	if !strings.Contains(text, "return after heal") || !strings.Contains(text, "none recovered; 3 "+NotRecovered) || strings.Contains(text, "p50 0 ms") {
		t.Errorf("summary:\n%s", text)
	}
}
