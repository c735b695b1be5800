package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"time"
)

// DistKind names a delay distribution.
type DistKind int

const (
	// DistConstant: every sample is Mean.
	DistConstant DistKind = iota
	// DistUniform: uniform on [Min, Max].
	DistUniform
	// DistExponential: Min plus an exponential with mean Mean-Min, so that a
	// message never arrives sooner than Min (the wire's floor) while a few
	// arrive very late, as on a loaded network.
	DistExponential
)

// Dist is a distribution of message delays. The zero value is the constant
// 1 ms delay: short enough that elections are quick in virtual time, and
// non-zero so that causality always moves time forward.
type Dist struct {
	Kind DistKind
	Min  time.Duration
	Max  time.Duration
	Mean time.Duration
}

// Constant is a fixed delay d.
func Constant(d time.Duration) Dist { return Dist{Kind: DistConstant, Mean: d, Min: d, Max: d} }

// Uniform is a delay drawn uniformly from [lo, hi].
func Uniform(lo, hi time.Duration) Dist { return Dist{Kind: DistUniform, Min: lo, Max: hi} }

// Exponential is a delay of at least lo with the given mean.
func Exponential(lo, mean time.Duration) Dist {
	return Dist{Kind: DistExponential, Min: lo, Mean: mean}
}

// Validate reports a distribution that cannot be sampled.
func (d Dist) Validate() error {
	switch d.Kind {
	case DistConstant:
		if d.Mean < 0 {
			return fmt.Errorf("delay: constant %v is negative", d.Mean)
		}
	case DistUniform:
		if d.Min < 0 || d.Max < d.Min {
			return fmt.Errorf("delay: uniform [%v, %v] needs 0 <= min <= max", d.Min, d.Max)
		}
	case DistExponential:
		if d.Min < 0 || d.Mean < d.Min {
			return fmt.Errorf("delay: exponential with floor %v and mean %v needs 0 <= floor <= mean", d.Min, d.Mean)
		}
	default:
		return fmt.Errorf("delay: unknown distribution kind %d (want constant, uniform or exponential)", d.Kind)
	}
	return nil
}

func (d Dist) String() string {
	switch d.Kind {
	case DistConstant:
		return fmt.Sprintf("constant(%v)", d.effectiveConstant())
	case DistUniform:
		return fmt.Sprintf("uniform(%v, %v)", d.Min, d.Max)
	case DistExponential:
		return fmt.Sprintf("exponential(min %v, mean %v)", d.Min, d.Mean)
	}
	return fmt.Sprintf("dist(%d)", int(d.Kind))
}

func (d Dist) effectiveConstant() time.Duration {
	if d == (Dist{}) {
		return time.Millisecond
	}
	return d.Mean
}

// Sample draws one delay. The constant distribution draws nothing from r, so
// that changing the delay alone does not reshuffle the network's other
// random choices.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case DistUniform:
		if d.Max == d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case DistExponential:
		return d.Min + time.Duration(r.ExpFloat64()*float64(d.Mean-d.Min))
	}
	return d.effectiveConstant()
}

// samplePCG is Sample(r) where r is a rand.Rand over src: the same delay
// from the same state, but a uniform delay is drawn from src here rather
// than through r's interface call of its Source and its own call of
// uint64n, for every message the explorer sends.
func (d Dist) samplePCG(src *rand.PCG, r *rand.Rand) time.Duration {
	if d.Kind == DistUniform && d.Max > d.Min {
		return d.Min + time.Duration(uint64n(src, uint64(d.Max-d.Min)+1))
	}
	return d.Sample(r)
}

// uint64n is the Uint64N (and so the Int64N) of a rand.Rand over src:
// Lemire's multiply-and-reject as math/rand/v2 computes it, which Go keeps
// the same on every platform so that a seed gives one sequence
// everywhere. TestUint64nIsRandsUint64N holds it to the library's.
func uint64n(src *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 { // a power of two: a mask
		return src.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// ParseDist reads a distribution as the CLI writes it: "2ms" (constant),
// "uniform:1ms-5ms", "exp:1ms-3ms" (floor 1 ms, mean 3 ms).
func ParseDist(s string) (Dist, error) {
	kind, rest, found := strings.Cut(s, ":")
	if !found {
		v, err := time.ParseDuration(s)
		if err != nil {
			return Dist{}, fmt.Errorf("delay %q: want a duration (2ms), uniform:MIN-MAX or exp:MIN-MEAN", s)
		}
		d := Constant(v)
		return d, d.Validate()
	}
	lo, hi, ok := strings.Cut(rest, "-")
	if !ok {
		return Dist{}, fmt.Errorf("delay %q: want %s:A-B", s, kind)
	}
	a, err1 := time.ParseDuration(lo)
	b, err2 := time.ParseDuration(hi)
	if err1 != nil || err2 != nil {
		return Dist{}, fmt.Errorf("delay %q: %q and %q must both be durations", s, lo, hi)
	}
	var d Dist
	switch kind {
	case "uniform":
		d = Uniform(a, b)
	case "exp", "exponential":
		d = Exponential(a, b)
	default:
		return Dist{}, fmt.Errorf("delay %q: unknown distribution %q (want uniform or exp)", s, kind)
	}
	return d, d.Validate()
}
