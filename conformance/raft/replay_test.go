package raft_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

var five = []election.NodeID{1, 2, 3, 4, 5}

// faultyRun is a 5-node raft run with a leader kill, a partition and a
// restart, under message loss and delay spread, so that raft's random
// election timeouts decide who wins: it returns the whole history,
// messages included, as JSON lines.
func faultyRun(t *testing.T, seed int64, opts election.Options) []byte {
	t.Helper()
	var mem history.Memory
	sm, err := sim.New(sim.Options{Algorithm: "raft", Members: five, Options: opts, Seed: seed, Loss: 0.05,
		Delay: sim.Dist{Kind: sim.DistUniform, Min: time.Millisecond, Max: 20 * time.Millisecond}}, &mem)
	if err != nil {
		t.Fatal(err)
	}
	sm.Start()
	sm.RunFor(3 * time.Second)
	leader := sm.State().Views[1].Leader
	if leader == election.None {
		leader = 3
	}
	must(t, sm.Kill(leader))
	sm.RunFor(3 * time.Second)
	must(t, sm.Partition([]election.NodeID{1, 2}, []election.NodeID{3, 4, 5}))
	sm.RunFor(2 * time.Second)
	must(t, sm.Heal())
	must(t, sm.Restart(leader))
	sm.RunFor(3 * time.Second)
	if err := sm.Err(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range mem.Records() {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSameSeedSameHistory fails if replay ever diverges: raft's election
// jitter comes from crypto/rand, which the machine feeds from Config.Rand
// only while the simulator replays (determinism.go).
func TestSameSeedSameHistory(t *testing.T) {
	for _, opts := range []election.Options{nil, {"prevote": "false", "check_quorum": "false"}} {
		a, b := faultyRun(t, 7, opts), faultyRun(t, 7, opts)
		if !bytes.Equal(a, b) {
			t.Fatalf("options %v: seed 7 gave two different histories (%d and %d bytes); first difference at byte %d", opts, len(a), len(b), firstDiff(a, b))
		}
		// The check has teeth: another seed draws other timeouts.
		if c := faultyRun(t, 8, opts); bytes.Equal(a, c) {
			t.Fatalf("options %v: seeds 7 and 8 gave the same history: the seed does not reach raft", opts)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestExplorerWorkersReplay runs the same exploration with one worker and
// with eight, twice: raft machines in parallel simulators share
// crypto/rand.Reader, and the results must not depend on how they
// interleave.
func TestExplorerWorkersReplay(t *testing.T) {
	run := func(workers int) []byte {
		res, err := explore.Run(explore.Options{Algorithm: "raft", N: 5, Schedules: 40, Seed: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one := run(1)
	for _, w := range []int{8, 8} {
		if got := run(w); !bytes.Equal(one, got) {
			t.Fatalf("exploration with %d workers differs from one worker at byte %d:\n%s\n%s", w, firstDiff(one, got), one, got)
		}
	}
}
