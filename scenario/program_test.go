package scenario

import (
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// TestParseReadsAProgramInsteadOfAnAlgorithm: cluster.program is a
// command line; the quorum defaults to none, and Format writes it back.
func TestParseReadsAProgramInsteadOfAnAlgorithm(t *testing.T) {
	src := "name: own\ncluster:\n  program: [python3, examples/bully-python/bully.py]\n  nodes: 3\nsteps:\n  - kill: leader\n"
	s, err := Parse("own.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"python3", "examples/bully-python/bully.py"}; !slices.Equal(s.Cluster.Program, want) || s.Cluster.Algorithm != "" {
		t.Fatalf("program %q, algorithm %q; want %q and none", s.Cluster.Program, s.Cluster.Algorithm, want)
	}
	if s.Cluster.Quorum != election.NoQuorum {
		t.Errorf("quorum %q, want none", s.Cluster.Quorum)
	}
	out, err := Format(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "program: [python3, examples/bully-python/bully.py]") {
		t.Errorf("formatted:\n%s\nlacks the program", out)
	}
	back, err := Parse("own.yaml", out)
	if err != nil {
		t.Fatalf("the formatted file does not parse: %v\n%s", err, out)
	}
	if !slices.Equal(back.Cluster.Program, s.Cluster.Program) {
		t.Errorf("round trip: program %q", back.Cluster.Program)
	}
}

func TestParseRefusesABadProgram(t *testing.T) {
	for _, c := range []struct{ cluster, want string }{
		{"program: python3 bully.py", "own.yaml:3: cluster.program: want a list"},
		{"program: []", "cluster.program: want a list"},
		{"algorithm: bully\n  program: [x]", "cluster.program: both algorithm and program given"},
		{"program: [x]\n  options: {a: b}", "cluster.options: a program takes no options"},
	} {
		src := "name: own\ncluster:\n  " + c.cluster + "\n  nodes: 3\nsteps:\n  - kill: leader\n"
		_, err := Parse("own.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.cluster, err, c.want)
		}
	}
}

func TestParseReadsAProgramsImage(t *testing.T) {
	src := "name: own\ncluster:\n  program: [python3, bully.py]\n  image: ringleader-python:bookworm\n  nodes: 3\nsteps:\n  - kill: leader\n"
	s, err := Parse("own.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster.Image != "ringleader-python:bookworm" {
		t.Fatalf("image %q", s.Cluster.Image)
	}
	out, err := Format(s, "")
	if err != nil || !strings.Contains(string(out), "image: ringleader-python:bookworm") {
		t.Fatalf("formatted (%v):\n%s", err, out)
	}
	_, err = Parse("own.yaml", []byte("name: own\ncluster:\n  algorithm: bully\n  image: x\n  nodes: 3\nsteps:\n  - kill: leader\n"))
	if err == nil || !strings.Contains(err.Error(), "cluster.image: only with a program") {
		t.Fatalf("error %v, want image refused without a program", err)
	}
}
