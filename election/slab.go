package election

// EffectBuffer hands out the effect slices machines return from Step,
// shared by every machine a runtime steps from one goroutine (the
// simulator has one per cluster). An Effect is a couple of hundred bytes,
// and a slice grown by append per step was the largest allocation of a big
// simulated election. A nil *EffectBuffer is valid: each step then
// allocates its own slice.
//
// Without Reuse, slices are carved from blocks of effects: the slice a
// step returns is the caller's outright (its capacity is cut to its length
// and the block moves past it, so nothing later writes to it), and a block
// serves dozens of steps. With Reuse, every step returns the same memory:
// a runtime may set it only if it is done with one step's effects before
// it steps any machine sharing the buffer again. The simulator is; then a
// step allocates nothing.
type EffectBuffer struct {
	Reuse bool
	rest  []Effect // without Reuse: unused rest of the current block, len 0
	buf   []Effect // with Reuse: the one buffer, len 0
}

const (
	effectBlock   = 64 // effects per block
	effectMinRoom = 8  // the least room a step starts with
)

// Begin returns an empty slice to append one step's effects to.
func (b *EffectBuffer) Begin() []Effect {
	switch {
	case b == nil:
		return nil
	case b.Reuse:
		return b.buf[:0]
	}
	if cap(b.rest) < effectMinRoom {
		b.rest = make([]Effect, 0, effectBlock)
	}
	return b.rest
}

// End finishes the step whose effects out holds (out began as Begin's
// slice) and returns them, nil when there are none.
func (b *EffectBuffer) End(out []Effect) []Effect {
	if b != nil && b.Reuse {
		if cap(out) > cap(b.buf) {
			b.buf = out[:0] // keep what append grew
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	if len(out) == 0 {
		return nil
	}
	out = out[:len(out):len(out)]
	if b == nil {
		return out
	}
	// out grew by append from the block's rest, which reallocates only
	// beyond its capacity: it is still in the block exactly when it fits.
	if len(out) <= cap(b.rest) {
		b.rest = b.rest[len(out):len(out)]
	} else {
		b.rest = nil
	}
	return out
}
