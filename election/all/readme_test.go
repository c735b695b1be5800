package all_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the README's algorithm table from the registry")

const readme = "../../README.md"

// algorithmTable is the README's algorithm table as the registry says it:
// name, title, topology, quorum modes (default marked), options, claims in
// each mode, and whether runs replay from their seed.
func algorithmTable(algs []election.Algorithm) string {
	var b strings.Builder
	b.WriteString("| name | algorithm | topology | quorum | options | claims | seeded |\n|---|---|---|---|---|---|---|\n")
	for _, a := range algs {
		topology := a.Topology
		if a.SimOnly {
			topology += " (simulator only)"
		}
		seeded := "no"
		if a.Seeded {
			seeded = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", a.Name, a.Title, topology, a.QuorumModes(), optionsCell(a), claimsCell(a), seeded)
	}
	return b.String()
}

func optionsCell(a election.Algorithm) string {
	if len(a.Options) == 0 {
		return "—"
	}
	var parts []string
	for _, o := range a.Options {
		parts = append(parts, fmt.Sprintf("`%s` (%s, default `%s`): %s", o.Name, o.Kind, o.Default, o.Help))
	}
	return strings.Join(parts, "; ")
}

func claimsCell(a election.Algorithm) string {
	var parts []string
	for _, q := range a.Quorums {
		var ps []string
		for _, p := range a.Claims(q) {
			ps = append(ps, string(p))
		}
		claims := strings.Join(ps, ", ")
		if claims == "" {
			claims = "none"
		}
		if len(a.Quorums) > 1 {
			claims = q.Text() + ": " + claims
		}
		parts = append(parts, claims)
	}
	return strings.Join(parts, "; ")
}

// TestReadmeAlgorithmTable holds the README's algorithm table equal to
// the registry; on a difference it prints the table the registry gives.
func TestReadmeAlgorithmTable(t *testing.T) {
	begin, end := docblock.Markers("algorithms", "from the registry by TestReadmeAlgorithmTable", "go test ./election/all -update")
	docblock.Check(t, readme, begin, end, algorithmTable(election.Algorithms()), *update, "go test ./election/all -update rewrites it")
}
