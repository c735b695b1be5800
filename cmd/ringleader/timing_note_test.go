package main

import (
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/scenario"
)

func TestALargeClusterWithAHastySuspicionGetsANote(t *testing.T) {
	parse := func(nodes, timing string) *scenario.Scenario {
		t.Helper()
		sc, err := scenario.Parse("t.yaml", []byte("name: t\ncluster:\n  algorithm: bully\n  nodes: "+nodes+"\n"+timing+"steps:\n  - wait: stable\n"))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	const hasty = "  timing: {heartbeat: 100ms, suspicion: 500ms, answer: 200ms}\n"
	if note := hastyTiming(parse("48", hasty)); !strings.Contains(note, "48 nodes with a 500ms suspicion, shorter than the 1.6s") {
		t.Fatalf("48 nodes, 500 ms: note %q", note)
	}
	for _, c := range []struct{ nodes, timing string }{
		{"48", ""},    // the defaults
		{"5", hasty},  // the defaults of a small cluster
		{"16", hasty}, // still the base
		{"48", "  timing: {heartbeat: 400ms, suspicion: 3s, answer: 1s}\n"},
	} {
		if note := hastyTiming(parse(c.nodes, c.timing)); note != "" {
			t.Errorf("%s nodes, timing %q: note %q, want none", c.nodes, c.timing, note)
		}
	}
}
