package rules

import (
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/chaos/netfilter"
	"github.com/ringleader-dev/ringleader/election"
)

var members = []election.NodeID{1, 2, 3}

func addrs() Addrs {
	return Addrs{1: netip.MustParseAddr("10.0.0.2"), 2: netip.MustParseAddr("10.0.0.3"), 3: netip.MustParseAddr("10.0.0.4")}
}

// world is the state after faults, applied as every backend applies them.
func world(faults ...chaos.Fault) chaos.State {
	s := chaos.Steady(members, 3)
	for _, f := range faults {
		s.Apply(f, members)
	}
	return s
}

// TestAOneWayCutIsTheReceiversDropSetNotARule: a one-way cut 1→3 is no
// netfilter rule anywhere (a dropped packet of a TCP route stalls it both
// ways) but 3's drop set; a link cut both ways is a drop-out rule at each
// end, and no drop set.
func TestAOneWayCutIsTheReceiversDropSetNotARule(t *testing.T) {
	s := world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}}})
	a := addrs()
	for _, id := range members {
		if got := Want(s, members, a, id); !got.Empty() {
			t.Errorf("node %d holds %s, want nothing", id, got)
		}
	}
	if got := DropFrom(s, members, 3); !slices.Equal(got, []election.NodeID{1}) {
		t.Errorf("node 3 drops from %v, want [1]", got)
	}
	if got := DropFrom(s, members, 1); len(got) != 0 {
		t.Errorf("node 1 (the sender) drops from %v, want nothing", got)
	}
	s = world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}, {3, 1}}})
	if got := Want(s, members, a, 1); !slices.Equal(got.DropOut, []netip.Addr{a[3]}) {
		t.Errorf("two-way: node 1 holds %s, want a drop-out to 3", got)
	}
	if got := Want(s, members, a, 3); !slices.Equal(got.DropOut, []netip.Addr{a[1]}) {
		t.Errorf("two-way: node 3 holds %s, want a drop-out to 1", got)
	}
	if got := DropFrom(s, members, 3); len(got) != 0 {
		t.Errorf("two-way: node 3 drops from %v, want nothing (the rules cut it)", got)
	}
}

func TestWantLossAndDelayCoverEveryPeerWithAnAddress(t *testing.T) {
	s := world(chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{2}, Loss: 0.25},
		chaos.Fault{Op: chaos.Delay, Nodes: []election.NodeID{2}, Delay: 100 * time.Millisecond})
	a := addrs()
	delete(a, 3) // down: no address, no rule names it
	got := Want(s, members, a, 2)
	if got.LossPercent != 25 || !slices.Equal(got.LossPeers, []netip.Addr{a[1]}) {
		t.Errorf("loss: got %d%% to %v, want 25%% to node 1 only", got.LossPercent, got.LossPeers)
	}
	if got.Queue != Queue(2) || !slices.Equal(got.QueuePeers, []netip.Addr{a[1]}) {
		t.Errorf("delay: got queue %d to %v, want queue %d to node 1 only", got.Queue, got.QueuePeers, Queue(2))
	}
}

func TestDiffLiftsCutsInTwoRoundsAndLeavesTheUnchangedAlone(t *testing.T) {
	a := addrs()
	cut := world(chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2}, {3}}})
	healed := world()
	want := func(s chaos.State) map[election.NodeID]netfilter.Rules {
		m := map[election.NodeID]netfilter.Rules{}
		for _, id := range members {
			m[id] = Want(s, members, a, id)
		}
		return m
	}
	held := want(cut)
	if p := Diff(members, held, held); !p.Empty() {
		t.Errorf("nothing changes, yet the plan is %+v", p)
	}
	p := Diff(members, held, want(healed))
	if len(p.Install) != 3 {
		t.Fatalf("install %+v, want all three namespaces emptied", p.Install)
	}
	if len(p.Lift) != 3 {
		t.Fatalf("lift %+v, want a refusing round in all three", p.Lift)
	}
	for _, c := range p.Lift {
		if len(c.Rules.DropOut) != 0 || !slices.Equal(c.Rules.RefuseOut, held[c.Node].DropOut) {
			t.Errorf("node %d lifts with %s, want it to refuse what it cut (%v) and drop nothing", c.Node, c.Rules, held[c.Node].DropOut)
		}
	}
	// Adding a cut drops at once: no interim round.
	if p := Diff(members, want(healed), held); len(p.Lift) != 0 || len(p.Install) != 3 {
		t.Errorf("cutting: plan %+v, want three installs and no lift round", p)
	}
	// A namespace want does not name is left alone.
	only1 := map[election.NodeID]netfilter.Rules{1: {}}
	if p := Diff(members, held, only1); len(p.Install) != 1 || p.Install[0].Node != 1 {
		t.Errorf("plan %+v, want node 1 only", p)
	}
}

// TestFaultsRebuildTheWorldTheRulesCameFrom: the rules of a world, read
// back and turned into faults, rebuild that world's two-way cuts and
// losses (one-way cuts live in the nodes' drop sets, not in rules).
func TestFaultsRebuildTheWorldTheRulesCameFrom(t *testing.T) {
	a := addrs()
	orig := world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}, {3, 1}, {2, 1}, {1, 2}}},
		chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{3}, Loss: 0.4})
	held := map[election.NodeID]netfilter.Rules{}
	for _, id := range members {
		held[id] = Want(orig, members, a, id)
	}
	// An older backend cut inbound: a drop-in at 3 from 2 is the cut 2→3.
	r := held[3]
	r.DropIn = append(r.DropIn, a[2], netip.MustParseAddr("10.9.9.9"))
	held[3] = r
	got := world(Faults(members, a, held)...)
	wantCut := maps.Clone(orig.Cut)
	wantCut[[2]election.NodeID{2, 3}] = true
	if !maps.Equal(got.Cut, wantCut) {
		t.Errorf("cuts %v, want %v", got.Cut, wantCut)
	}
	if !maps.Equal(got.Loss, orig.Loss) {
		t.Errorf("loss %v, want %v", got.Loss, orig.Loss)
	}
	if fs := Faults(members, a, map[election.NodeID]netfilter.Rules{1: {}}); len(fs) != 0 {
		t.Errorf("empty rules give faults %+v, want none", fs)
	}
}
