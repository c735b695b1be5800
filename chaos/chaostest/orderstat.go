package chaostest

import (
	"math"
	"time"
)

// falseFail is the chance a correct delay may have of failing the suite's
// latency bounds on one run.
const falseFail = 1e-6

// jitterBounds widens the fixed bounds of the k-th smallest of n measured
// latencies (k from 1) to what n draws from U[D−J, D+J] keep with
// probability 1−falseFail: with a few dozen messages the median and the
// maximum of correct draws stray further than the fixed bounds allow (the
// median's floor of D−10 ms failed one run in 26 at 40 messages, the
// maximum's floor of D+J−10 ms one in 200). The network's own latency only
// adds to each draw, so it needs no term of its own below; above, the
// fixed bounds' margins hold it. Bounds are only ever widened.
func jitterBounds(fixed [2]time.Duration, k, n int) [2]time.Duration {
	lo, span := float64(jitterDelay-jitterSpread), float64(2*jitterSpread)
	at := func(p float64) time.Duration { return time.Duration(lo + p*span) }
	// The k-th smallest lies below the draw quantile p with the chance
	// that k or more of the n draws do.
	var pLow, pHigh float64
	for step := 0; step <= 1000; step++ {
		p := float64(step) / 1000
		if atLeast(n, k, p) <= falseFail {
			pLow = p
		}
	}
	for step := 1000; step >= 0; step-- {
		p := float64(step) / 1000
		// Above p when fewer than k of the draws fall below it.
		if 1-atLeast(n, k, p) <= falseFail {
			pHigh = p
		}
	}
	return [2]time.Duration{min(fixed[0], at(pLow)), max(fixed[1], at(pHigh))}
}

// atLeast is the chance that k or more of n independent trials succeed,
// each with chance p.
func atLeast(n, k int, p float64) float64 {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := k; i <= n; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - lgI - lgR + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return min(sum, 1)
}
