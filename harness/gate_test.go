package harness

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/history"
)

// gatedFake is the scripted backend as a chaos.Gate: it remembers whether
// Start was asked to gate, and how many faults were in force when Open
// came.
type gatedFake struct {
	*fakeBackend
	gated         bool
	opens         int
	appliedAtOpen int
}

func (g *gatedFake) Start(ctx context.Context, spec chaos.ClusterSpec, sink history.Sink) error {
	g.gated = spec.Gated
	return g.fakeBackend.Start(ctx, spec, sink)
}

func (g *gatedFake) Open(context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opens++
	g.appliedAtOpen = len(g.applied)
	return nil
}

const opensWithFaults = `name: opens-with-faults
cluster: {algorithm: fake-bully, nodes: 5}
steps:
  - partition: {cut: [5, 1]}
  - pause: 2
  - wait: stable
  - heal
  - resume: 2
  - expect: {leader: 5, on: all, within: 2s}
`

// TestOpeningFaultsComeBeforeTheGateOpens: a scenario that opens with
// faults starts a Gate backend gated and opens it once, right after its
// last opening fault and before its first wait, with a mark in the
// history; a later fault does not open it again.
func TestOpeningFaultsComeBeforeTheGateOpens(t *testing.T) {
	g := &gatedFake{fakeBackend: newFake()}
	res, err := Run(context.Background(), mustParse(t, opensWithFaults), g, Options{Store: t.TempDir(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("gated: %v", res.Failures)
	}
	if !g.gated {
		t.Fatal("Start was not asked to gate a scenario that opens with faults")
	}
	if g.opens != 1 || g.appliedAtOpen != 2 {
		t.Fatalf("opened %d times, with %d faults in force at the first; want once, after the 2 opening faults", g.opens, g.appliedAtOpen)
	}
	marks := 0
	for _, r := range res.records {
		if r.Kind == history.KindMark && r.Note == GateMark {
			marks++
		}
	}
	if marks != 1 {
		t.Fatalf("%d gate marks in the history, want 1", marks)
	}
}

// TestAScenarioThatOpensWithAWaitIsGatedAndOpenedFirst: nothing to put
// first, yet the machines still start together, once every node has
// booted: the gate opens before the first step, with its mark first in
// the history's steps. A backend that is no Gate runs a scenario that
// opens with faults as before.
func TestAScenarioThatOpensWithAWaitIsGatedAndOpenedFirst(t *testing.T) {
	g := &gatedFake{fakeBackend: newFake()}
	res, err := Run(context.Background(), mustParse(t, crash), g, Options{Store: t.TempDir(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !g.gated || g.opens != 1 || g.appliedAtOpen != 0 {
		t.Fatalf("gated %v, opened %d times with %d faults in force; want gated and opened once, before any fault", g.gated, g.opens, g.appliedAtOpen)
	}
	var marks []string
	for _, r := range res.records {
		if r.Kind == history.KindMark {
			marks = append(marks, r.Note)
		}
	}
	if i := slices.Index(marks, GateMark); i < 0 || i+1 >= len(marks) || !strings.HasPrefix(marks[i+1], "step 1/") {
		t.Fatalf("marks %q: want the gate's mark right before step 1's", marks)
	}
	res, err = Run(context.Background(), mustParse(t, opensWithFaults), newFake(), Options{Store: t.TempDir(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("without a gate: %v", res.Failures)
	}
}
