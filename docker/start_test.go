package docker

import (
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func TestNodesStartHighestFirst(t *testing.T) {
	got := startOrder([]election.NodeID{3, 1, 5, 2, 4})
	if !slices.Equal(got, []election.NodeID{5, 4, 3, 2, 1}) {
		t.Fatalf("start order %v, want highest first", got)
	}
}
