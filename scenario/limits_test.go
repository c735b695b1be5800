package scenario

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the limits table in docs/scenarios.md")

const (
	limitsBegin = "<!-- limits: generated from scenario.Limits; go test ./scenario -run TestLimitsAreDocumented -update -->\n"
	limitsEnd   = "<!-- end limits -->"
)

// The limits docs/scenarios.md lists are the parser's own: the table
// between the markers is LimitsTable, written from the constants.
func TestLimitsAreDocumented(t *testing.T) {
	const page = "../docs/scenarios.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, limitsBegin), strings.Index(doc, limitsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no limits table between %q and %q", page, limitsBegin, limitsEnd)
	}
	have, want := doc[i+len(limitsBegin):j], LimitsTable()
	if have == want {
		return
	}
	if *update {
		if err := os.WriteFile(page, []byte(doc[:i+len(limitsBegin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's limits table is out of date (run with -update):\nhave:\n%s\nwant:\n%s", page, have, want)
}
