package chaos

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite the docs' fault-kind tables from the descriptors")

const (
	kindsBegin = "<!-- fault kinds: generated from package chaos by TestDocsFaultTables; go test ./chaos -update rewrites it -->\n"
	kindsEnd   = "<!-- fault kinds: end -->\n"
)

// TestDocsFaultTables holds the README's and docs/scenarios.md's tables of
// fault kinds equal to the descriptors: a kind added, renamed or given a
// value shows up in the docs or fails here.
func TestDocsFaultTables(t *testing.T) {
	want := KindsTable()
	for _, path := range []string{"../README.md", "../docs/scenarios.md"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		i, j := strings.Index(doc, kindsBegin), strings.Index(doc, kindsEnd)
		if i < 0 || j < i {
			t.Errorf("%s: no generated fault table (want the lines %q … %q)", path, kindsBegin, kindsEnd)
			continue
		}
		got := doc[i+len(kindsBegin) : j]
		if got == want {
			continue
		}
		if *updateDocs {
			if err := os.WriteFile(path, []byte(doc[:i+len(kindsBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the fault table differs from the descriptors (go test ./chaos -update rewrites it); want:\n%s", path, want)
	}
}
