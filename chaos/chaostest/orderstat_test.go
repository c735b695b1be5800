package chaostest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestJitterBoundsHoldCorrectDrawsAndOnlyWiden: 20,000 seeded runs of 40
// correct draws from U[D−J, D+J] never leave the widened bounds, while
// the fixed median floor alone fails several percent of them (the defect
// that widening mends); the widened bounds are never narrower than the
// fixed ones, equal them once the messages are many, and still refuse a
// delay that was not applied (every latency near zero) or applied
// without its jitter (every latency D).
func TestJitterBoundsHoldCorrectDrawsAndOnlyWiden(t *testing.T) {
	const n, runs = 40, 20000
	bounds := [3][2]time.Duration{jitterBounds(jitterMin, 1, n), jitterBounds(jitterMedian, n/2+1, n), jitterBounds(jitterMax, n, n)}
	fixed := [3][2]time.Duration{jitterMin, jitterMedian, jitterMax}
	for i := range bounds {
		if bounds[i][0] > fixed[i][0] || bounds[i][1] < fixed[i][1] {
			t.Errorf("bound %d: %v narrows the fixed %v", i, bounds[i], fixed[i])
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, n)
	widenedFails, fixedMedianFails := 0, 0
	for range runs {
		for i := range lat {
			lat[i] = jitterDelay - jitterSpread + time.Duration(r.Int64N(int64(2*jitterSpread)))
		}
		slices.Sort(lat)
		got := [3]time.Duration{lat[0], lat[n/2], lat[n-1]}
		for i, g := range got {
			if g < bounds[i][0] || g > bounds[i][1] {
				widenedFails++
				break
			}
		}
		if got[1] < jitterMedian[0] {
			fixedMedianFails++
		}
	}
	if widenedFails > 0 {
		t.Errorf("%d of %d runs of correct draws left the widened bounds %v", widenedFails, runs, bounds)
	}
	if fixedMedianFails < runs/100 {
		t.Errorf("the fixed median floor failed only %d of %d runs: the widening has nothing to mend", fixedMedianFails, runs)
	}
	t.Logf("%d messages: bounds %v; the fixed median floor alone failed %d of %d runs", n, bounds, fixedMedianFails, runs)

	many := 1000
	if got := jitterBounds(jitterMedian, many/2+1, many); got != jitterMedian {
		t.Errorf("median bounds at %d messages %v, want the fixed %v", many, got, jitterMedian)
	}
	for _, wrong := range []time.Duration{2 * time.Millisecond, jitterDelay} {
		all := slices.Repeat([]time.Duration{wrong}, n)
		if all[0] >= bounds[0][0] && all[0] <= bounds[0][1] && all[n/2] >= bounds[1][0] && all[n-1] >= bounds[2][0] {
			t.Errorf("every latency %v passes the bounds %v", wrong, bounds)
		}
	}
}
