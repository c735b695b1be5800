package ringnet

import (
	"math/rand/v2"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// TestIDSetIsASet adds random IDs to an IDSet and a map side by side: the
// set answers as the map does, and consecutive IDs merge into runs.
func TestIDSetIsASet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var s IDSet
		m := map[election.NodeID]bool{}
		span := 1 + r.IntN(200)
		for k := 0; k < 300; k++ {
			id := election.NodeID(1 + r.IntN(span))
			if got, want := s.Add(id), !m[id]; got != want {
				t.Fatalf("round %d: Add(%d) = %v, want %v", round, id, got, want)
			}
			m[id] = true
			for q := election.NodeID(0); q <= election.NodeID(span+1); q++ {
				if s.Has(q) != m[q] {
					t.Fatalf("round %d: Has(%d) = %v, want %v (runs %v)", round, q, s.Has(q), m[q], s.runs)
				}
			}
			for i := 1; i < len(s.runs); i++ {
				if s.runs[i-1].hi+1 >= s.runs[i].lo {
					t.Fatalf("round %d: runs %v overlap or touch", round, s.runs)
				}
			}
		}
		s.Clear()
		if s.Has(1) || len(s.runs) != 0 {
			t.Fatalf("Clear left %v", s.runs)
		}
	}
}

// TestIDSetKeepsAWorstRingNodeSmall: the candidates a node passes on in
// Chang–Roberts' worst ring are one run.
func TestIDSetKeepsAWorstRingNodeSmall(t *testing.T) {
	var s IDSet
	for id := election.NodeID(5); id <= 100000; id++ {
		s.Add(id)
	}
	if len(s.runs) != 1 {
		t.Fatalf("%d runs, want 1", len(s.runs))
	}
}
