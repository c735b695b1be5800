package scenario

import (
	"flag"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the limits table in docs/scenarios.md")

// The limits docs/scenarios.md lists are the parser's own: the table
// between the markers is LimitsTable, written from the constants.
func TestLimitsAreDocumented(t *testing.T) {
	begin, end := docblock.Markers("limits", "from scenario.Limits by TestLimitsAreDocumented", "go test ./scenario -update")
	docblock.Check(t, "../docs/scenarios.md", begin, end, LimitsTable(), *update, "go test ./scenario -update rewrites it")
}
