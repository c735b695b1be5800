package election

import "testing"

// TestEffectBufferGivesTheCallerItsSlice: without Reuse, what one step
// returned is never written by a later step.
func TestEffectBufferGivesTheCallerItsSlice(t *testing.T) {
	var b EffectBuffer
	var kept [][]Effect
	for step := 0; step < 200; step++ {
		out := b.Begin()
		for k := 0; k <= step%11; k++ { // some steps outgrow the block
			out = append(out, Effect{Kind: EffectSend, Msg: Message{Seq: uint64(step)}})
		}
		out = b.End(out)
		if cap(out) != len(out) {
			t.Fatalf("step %d: capacity %d beyond length %d: the caller's append would write into the block", step, cap(out), len(out))
		}
		kept = append(kept, out)
	}
	for step, out := range kept {
		for _, e := range out {
			if e.Msg.Seq != uint64(step) {
				t.Fatalf("step %d's effects were overwritten (seq %d)", step, e.Msg.Seq)
			}
		}
	}
	if out := b.End(b.Begin()); out != nil {
		t.Fatalf("a step with no effects returned %v, want nil", out)
	}
}

// TestEffectBufferReuseAllocatesNothing: with Reuse, steps share one
// buffer once it has grown.
func TestEffectBufferReuseAllocatesNothing(t *testing.T) {
	b := EffectBuffer{Reuse: true}
	step := func() {
		out := b.Begin()
		for k := 0; k < 5; k++ {
			out = append(out, Effect{Kind: EffectSend})
		}
		if got := b.End(out); len(got) != 5 {
			t.Fatalf("got %d effects, want 5", len(got))
		}
	}
	step()
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("%v allocations per step, want 0", n)
	}
}
