package program_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// benchEvents steps one follower of a 5-node cluster with its leader's
// heartbeats: one receive in, a set-timer out, the most common event of
// an exploration. The time per operation is the cost of one event.
func benchEvents(b *testing.B, alg string) {
	a, err := election.Lookup(alg)
	if err != nil {
		b.Fatal(err)
	}
	seed := election.Seed{1, 2}
	m, err := a.New(election.Config{ID: 2, Members: election.FirstIDs(5), Quorum: election.NoQuorum, Timing: election.DefaultTiming, Rand: seed.Rand(), Seed: seed})
	if err != nil {
		b.Fatal(err)
	}
	if r, ok := m.(election.Releaser); ok {
		defer r.Release()
	}
	m.Step(election.Event{Kind: election.EventStart})
	hb := election.Event{Kind: election.EventReceive, Msg: election.Message{Type: "HEARTBEAT", From: 5, To: 2, Epoch: 1}}
	b.ResetTimer()
	for i := range b.N {
		hb.Now = time.Duration(i+1) * election.DefaultTiming.Heartbeat
		if len(m.Step(hb)) == 0 {
			b.Fatalf("event %d: no effects (a follower re-arms its suspicion timer)", i)
		}
	}
}

// BenchmarkEventInProcess is the in-process Bully, for comparison.
func BenchmarkEventInProcess(b *testing.B) { benchEvents(b, "bully") }

// BenchmarkEventGoProgram is the same Bully over the pipe
// (examples/bully-go): the pipe's cost per event is the difference.
func BenchmarkEventGoProgram(b *testing.B) {
	name, err := registerB(bullyGo())
	if err != nil {
		b.Fatal(err)
	}
	benchEvents(b, name)
}

// BenchmarkEventPythonProgram is the Python example over the pipe.
func BenchmarkEventPythonProgram(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3")
	}
	name, err := registerB([]string{py, "../examples/bully-python/bully.py"})
	if err != nil {
		b.Fatal(err)
	}
	benchEvents(b, name)
}
