package chaos

import (
	"flag"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/docblock"
)

var updateDocs = flag.Bool("update", false, "rewrite the docs' fault-kind tables from the descriptors")

// TestDocsFaultTables holds the README's and docs/scenarios.md's tables of
// fault kinds equal to the descriptors: a kind added, renamed or given a
// value shows up in the docs or fails here.
func TestDocsFaultTables(t *testing.T) {
	begin, end := docblock.Markers("fault kinds", "from package chaos by TestDocsFaultTables", "go test ./chaos -update")
	for _, path := range []string{"../README.md", "../docs/scenarios.md"} {
		docblock.Check(t, path, begin, end, KindsTable(), *updateDocs, "go test ./chaos -update rewrites it")
	}
}
