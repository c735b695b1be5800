package ringnet

import (
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
)

// Ring arrangements for tests and benchmarks: IDs 1..n in a clockwise order.

// Increasing is 1, 2, …, n clockwise.
func Increasing(n int) []election.NodeID {
	return election.FirstIDs(n)
}

// Decreasing is n, n−1, …, 1 clockwise.
func Decreasing(n int) []election.NodeID {
	out := Increasing(n)
	slices.Reverse(out)
	return out
}

// Shuffled is a random arrangement drawn from r.
func Shuffled(n int, r *rand.Rand) []election.NodeID {
	out := Increasing(n)
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// BitReversed places ID rank k at the position whose index is k with its
// bits reversed: large and small IDs interleave at every scale, so many
// candidates survive each doubling phase — a hard case for Hirschberg–
// Sinclair and Peterson.
func BitReversed(n int) []election.NodeID {
	w := bits.Len(uint(n))
	pos := make([]int, n)
	for i := range pos {
		pos[i] = i
	}
	rev := func(i int) uint { return bits.Reverse(uint(i)) >> (bits.UintSize - w) }
	slices.SortFunc(pos, func(a, b int) int {
		ra, rb := rev(a), rev(b)
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	out := make([]election.NodeID, n)
	for rank, p := range pos {
		out[p] = election.NodeID(rank + 1)
	}
	return out
}
