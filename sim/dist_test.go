package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestUint64nIsRandsUint64N: the simulator's own uniform draw gives what
// rand.Rand's does from the same source, draw for draw, for small and
// large bounds, powers of two, and bounds near 2⁶⁴, where the rejection
// loop runs; and a uniform delay samples the same either way.
func TestUint64nIsRandsUint64N(t *testing.T) {
	bounds := []uint64{1, 2, 3, 7, 64, 1000, 4_500_001, 1 << 40, 1<<63 + 1, 1<<64 - 1, 3 << 62}
	mine, theirs := rand.NewPCG(1, 2), rand.NewPCG(1, 2)
	r := rand.New(theirs)
	for i := range 20000 {
		n := bounds[i%len(bounds)]
		if got, want := uint64n(mine, n), r.Uint64N(n); got != want {
			t.Fatalf("draw %d, bound %d: %d, rand.Rand gives %d", i, n, got, want)
		}
	}
	d := Uniform(500*time.Microsecond, 5*time.Millisecond)
	mine, theirs = rand.NewPCG(3, 4), rand.NewPCG(3, 4)
	mr, tr := rand.New(mine), rand.New(theirs)
	for i := range 1000 {
		if got, want := d.samplePCG(mine, mr), d.Sample(tr); got != want {
			t.Fatalf("sample %d: %v, Sample gives %v", i, got, want)
		}
	}
}
