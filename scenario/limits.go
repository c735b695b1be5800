package scenario

import (
	"fmt"
	"strings"
)

// Limit is one bound a scenario file is held to, as docs/scenarios.md
// lists it (LimitsTable; a test keeps the page equal to it).
type Limit struct {
	Field, Bound string
}

// Limits are every bound on names and sizes the parser enforces, written
// from the constants it enforces them with.
func Limits() []Limit {
	return []Limit{
		{"`name`", fmt.Sprintf("1 to %d characters: lower-case letters, digits and dashes, not starting with a dash (`MaxNameLen`)", MaxNameLen)},
		{"`cluster.nodes`, `cluster.ids`", fmt.Sprintf("1 to %d nodes (`MaxNodes`)", MaxNodes)},
		{"node IDs", "positive whole numbers, each listed once, members of the cluster"},
		{"`cluster.timing`", "positive durations with a unit; suspicion longer than heartbeat"},
		{"`repeat`", fmt.Sprintf("1 to %d (`MaxRepeat`; a batch of `ringleader run` holds at most as many runs, `harness.MaxRuns`)", MaxRepeat)},
		{"`seed`", "a whole number from 0 to 2⁶³−1"},
		{"`steps`", "at least one; one operation per step"},
		{"durations (`wait`, `within`, `for`, `liveness_bound`)", "positive, with a unit (`500ms`, `2s`)"},
		{"`loss.percent`", "0 (removes loss) or 1 to 100: the container rules drop whole percents"},
		{"`delay.ms`, `delay.jitter_ms`", "whole milliseconds ≥ 0 (0 and 0 remove delay)"},
		{"`partition`", "must cut a link: groups with nodes on different sides, never a node from itself (`chaos.Decide`, checked when the nodes are named in the file); shapes other than `isolate` and `engines` need at least 3 nodes"},
		{"`cluster.placement`", "at least two groups (one per engine, in `--engines` order), each a non-empty list of IDs; every member in exactly one group"},
		{"`pause`, `resume` of listed IDs", "not a node the file has put down (`kill: [3]`, `kill: all`) and not restarted since (`chaos.Decide` refuses it)"},
		{"the file", "one YAML document: a second one (after `---`) is an error"},
	}
}

// LimitsTable is Limits as the Markdown table docs/scenarios.md shows.
func LimitsTable() string {
	var b strings.Builder
	b.WriteString("| field | limit |\n|---|---|\n")
	for _, l := range Limits() {
		fmt.Fprintf(&b, "| %s | %s |\n", l.Field, l.Bound)
	}
	return b.String()
}
