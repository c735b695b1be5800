package harness

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/millis"
)

// Table writes the verdict table: one row per run with its expectations,
// every checker's verdict, failovers, split-brain overlap and the result.
// A checker cell reads "pass" or "FAIL"; a verdict the scenario expected to
// be a failure reads "fail (expected)"; "-" means the checker did not run.
func Table(w io.Writer, results []*Result) error {
	// Every checker any run ran, in check.Names order.
	var names []check.Name
	for _, n := range check.Names {
		for _, r := range results {
			if _, ran := r.Checker(n); ran && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"SCENARIO", "REP", "EXPECT"}
	for _, n := range names {
		head = append(head, strings.ToUpper(string(n)))
	}
	head = append(head, "FAILOVER", "OVERLAP", "RESULT")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range results {
		p, n := r.ExpectationsPassed()
		row := []string{r.Scenario, fmt.Sprintf("%d/%d", r.Rep, r.Reps), fmt.Sprintf("%d/%d", p, n)}
		for _, name := range names {
			c, ok := r.Checker(name)
			switch {
			case !ok:
				row = append(row, "-")
			case c.Pass && c.Match:
				row = append(row, "pass")
			case !c.Pass && c.Match:
				row = append(row, "fail (expected)")
			case c.Pass:
				row = append(row, "PASS (fail expected)")
			default:
				row = append(row, "FAIL")
			}
		}
		row = append(row, failoverCell(r), overlapCell(r), resultCell(r))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// NotRecovered is the table's word for a failover after which the cluster
// did not settle before the next fault or the end (its JSON has
// "recovered": false and null lengths).
const NotRecovered = "not recovered"

func failoverCell(r *Result) string {
	if len(r.Failovers) == 0 {
		return "-"
	}
	var parts []string
	for _, f := range r.Failovers {
		if !f.Recovered {
			parts = append(parts, NotRecovered)
			continue
		}
		parts = append(parts, failoverText(f))
	}
	return strings.Join(parts, ",")
}

// failoverText shows a failover as one value, or as a range when the time
// the fault took effect is uncertain: from when the nodes show it took
// effect to when it was invoked (a pause whose node did nothing telling
// until the engine confirmed it).
func failoverText(f FailoverResult) string {
	lo, hi := f.Millis, f.FromInvokeMillis
	if hi-lo < 1 {
		return millis.Float(max(lo, hi))
	}
	return millis.Range(lo, hi)
}

func overlapCell(r *Result) string {
	if r.SplitBrain.Overlaps == 0 {
		return "0"
	}
	return millis.Float(r.SplitBrain.TotalMillis)
}

func resultCell(r *Result) string {
	switch {
	case r.Pass:
		return "PASS"
	case len(r.Errors) > 0:
		return "ERROR"
	}
	return "FAIL"
}

// Summary aggregates the repetitions of one scenario.
type Summary struct {
	Scenario string `json:"scenario"`
	Runs     int    `json:"runs"`
	Passed   int    `json:"passed"`
	// Failover is over every recovered failover of every run, from the
	// fault as the nodes show it (check.DateFaults); FailoverFromInvoke from
	// its invoke record.
	Failover           check.FailoverStats `json:"failover"`
	FailoverFromInvoke check.FailoverStats `json:"failover_from_invoke"`
	// Returns are over every resume, restart and heal of every run, by
	// operation: from the fault taking effect to the cluster settled
	// again (on the highest live ID where the algorithm claims it).
	Returns map[string]check.FailoverStats `json:"returns,omitempty"`
	// SuspicionMillis converts the failover figures into suspicion
	// timeouts.
	SuspicionMillis float64 `json:"suspicion_ms"`
	// RunsWithOverlap counts runs in which two nodes led at once;
	// OverlapMin/Max/Mean are over all runs, in ms.
	RunsWithOverlap int     `json:"runs_with_overlap"`
	OverlapMin      float64 `json:"overlap_min_ms"`
	OverlapMax      float64 `json:"overlap_max_ms"`
	OverlapMean     float64 `json:"overlap_mean_ms"`
}

// Summarise groups results by scenario, in first-seen order.
func Summarise(results []*Result) []Summary {
	var order []string
	by := map[string][]*Result{}
	for _, r := range results {
		if _, ok := by[r.Scenario]; !ok {
			order = append(order, r.Scenario)
		}
		by[r.Scenario] = append(by[r.Scenario], r)
	}
	out := make([]Summary, 0, len(order))
	for _, name := range order {
		rs := by[name]
		s := Summary{Scenario: name, Runs: len(rs), SuspicionMillis: rs[0].Timing.SuspicionMillis, OverlapMin: math.Inf(1)}
		var fos, fromInvoke []check.Failover
		returns := map[string][]check.Failover{}
		sum := 0.0
		for _, r := range rs {
			if r.Pass {
				s.Passed++
			}
			for _, f := range r.Failovers {
				fos = append(fos, f.Failover)
				fi := f.Failover
				if fi.Recovered {
					fi.Duration = fi.At.Sub(fi.Invoked)
				}
				fromInvoke = append(fromInvoke, fi)
			}
			for _, f := range r.Returns {
				returns[f.Op] = append(returns[f.Op], f.Failover)
			}
			o := r.SplitBrain.TotalMillis
			if r.SplitBrain.Overlaps > 0 {
				s.RunsWithOverlap++
			}
			s.OverlapMin, s.OverlapMax = math.Min(s.OverlapMin, o), math.Max(s.OverlapMax, o)
			sum += o
		}
		s.OverlapMean = sum / float64(len(rs))
		s.Failover = check.Stats(fos)
		s.FailoverFromInvoke = check.Stats(fromInvoke)
		if len(returns) > 0 {
			s.Returns = map[string]check.FailoverStats{}
		}
		for op, rs := range returns {
			s.Returns[op] = check.Stats(rs)
		}
		out = append(out, s)
	}
	return out
}

// WriteSummaries writes one paragraph per scenario that ran more than once.
func WriteSummaries(w io.Writer, sums []Summary) {
	for _, s := range sums {
		if s.Runs < 2 {
			continue
		}
		fmt.Fprintf(w, "%s: %d/%d runs passed\n", s.Scenario, s.Passed, s.Runs)
		x := func(d time.Duration) string {
			if s.SuspicionMillis <= 0 {
				return ""
			}
			return fmt.Sprintf(" (%.2f×)", ms(d)/s.SuspicionMillis)
		}
		type row struct {
			what string
			f    check.FailoverStats
		}
		rows := []row{{"failover from the fault", s.Failover}, {"failover from invoke", s.FailoverFromInvoke}}
		for _, op := range slices.Sorted(maps.Keys(s.Returns)) {
			rows = append(rows, row{"return after " + op, s.Returns[op]})
		}
		for _, row := range rows {
			f := row.f
			if f.N == 0 && f.Unrecovered == 0 {
				continue
			}
			if f.N == 0 {
				// Nothing to take a percentile of: say so, not "0 ms".
				fmt.Fprintf(w, "  %-22s none recovered; %d %s\n", row.what, f.Unrecovered, NotRecovered)
				continue
			}
			fmt.Fprintf(w, "  %-22s over %d: p50 %s%s  p95 %s%s  max %s%s  (suspicion %s)", row.what, f.N,
				millis.Of(f.P50), x(f.P50), millis.Of(f.P95), x(f.P95), millis.Of(f.Max), x(f.Max), millis.Float(s.SuspicionMillis))
			if f.Unrecovered > 0 {
				fmt.Fprintf(w, "; %d not recovered", f.Unrecovered)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  split-brain overlap: %d/%d runs; min %s  mean %s  max %s\n",
			s.RunsWithOverlap, s.Runs, millis.Float(s.OverlapMin), millis.Float(s.OverlapMean), millis.Float(s.OverlapMax))
	}
}
