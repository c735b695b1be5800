package rules

import (
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
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
	// A tie (one cut each): the higher ID's namespace holds the link whole.
	if got := Want(s, members, a, 3); !slices.Equal(got.DropOut, []netip.Addr{a[1]}) || !slices.Equal(got.DropIn, []netip.Addr{a[1]}) {
		t.Errorf("two-way: node 3 holds %s, want a drop-out to 1 and a drop-in from 1", got)
	}
	if got := Want(s, members, a, 1); !got.Empty() {
		t.Errorf("two-way: node 1 holds %s, want nothing (3 holds the link)", got)
	}
	if got := DropFrom(s, members, 3); len(got) != 0 {
		t.Errorf("two-way: node 3 drops from %v, want nothing (the rules cut it)", got)
	}
}

func TestWantLossAndDelayCoverEveryPeerWithAnAddress(t *testing.T) {
	s := world(chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{2}, Params: chaos.ParamsOf(chaos.LossPercent.Of(0.25))},
		chaos.Fault{Op: chaos.Delay, Nodes: []election.NodeID{2}, Params: chaos.ParamsOf(chaos.DelayMS.OfDur(100 * time.Millisecond))})
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

// TestAnIsolationIsOneNamespace: the isolated node's namespace holds all
// its links, so it loses the rest at one instant.
func TestAnIsolationIsOneNamespace(t *testing.T) {
	a := addrs()
	for _, lone := range members {
		var rest []election.NodeID
		for _, m := range members {
			if m != lone {
				rest = append(rest, m)
			}
		}
		s := world(chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{lone}, rest}})
		for _, id := range members {
			got := Want(s, members, a, id)
			if (id == lone) == got.Empty() {
				t.Errorf("isolating %d: node %d holds %s", lone, id, got)
			}
		}
	}
}

func TestDiffLiftsCutsInTwoRoundsAndLeavesTheUnchangedAlone(t *testing.T) {
	a := addrs()
	cut := world(chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1}, {2}, {3}}})
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
	holding := 0 // namespaces with rules: the owners of the links
	for _, r := range held {
		if !r.Empty() {
			holding++
		}
	}
	p := Diff(members, held, want(healed))
	if holding < 2 || len(p.Install) != holding {
		t.Fatalf("install %+v, want the %d namespaces holding rules emptied", p.Install, holding)
	}
	if len(p.Lift) != holding {
		t.Fatalf("lift %+v, want a refusing round in all %d", p.Lift, holding)
	}
	for _, c := range p.Lift {
		if len(c.Rules.DropOut) != 0 || len(c.Rules.DropIn) != 0 || !slices.Equal(c.Rules.RefuseOut, held[c.Node].DropOut) {
			t.Errorf("node %d lifts with %s, want it to refuse what it cut (%v) and drop nothing", c.Node, c.Rules, held[c.Node].DropOut)
		}
	}
	// Adding a cut drops at once, in the first round: nothing else.
	if p := Diff(members, want(healed), held); len(p.Lift) != 0 || len(p.Install) != 0 || len(p.Add) != holding {
		t.Errorf("cutting: plan %+v, want %d adds and nothing more", p, holding)
	}
	// A namespace want does not name is left alone.
	only3 := map[election.NodeID]netfilter.Rules{3: {}}
	if p := Diff(members, held, only3); len(p.Install) != 1 || p.Install[0].Node != 3 {
		t.Errorf("plan %+v, want node 3 only", p)
	}
}

// TestAMovedLinkIsNeverUncut: a partition that moves a link's rules from
// one end's namespace to the other cuts it in the new one before the old
// one lets it go.
func TestAMovedLinkIsNeverUncut(t *testing.T) {
	a := addrs()
	want := func(s chaos.State) map[election.NodeID]netfilter.Rules {
		m := map[election.NodeID]netfilter.Rules{}
		for _, id := range members {
			m[id] = Want(s, members, a, id)
		}
		return m
	}
	// 1–3 cut alone: 3 holds it (a tie, the higher ID). Then 1 is cut
	// from 2 as well: 1, cut off from two, holds both.
	before := world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}, {3, 1}}})
	after := world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}, {3, 1}, {1, 2}, {2, 1}}})
	held := want(before)
	p := Diff(members, held, want(after))
	if len(p.Add) == 0 {
		t.Fatalf("plan %+v: no add round", p)
	}
	// After the add round, 1–3 is cut in some namespace.
	now := maps.Clone(held)
	for _, c := range p.Add {
		now[c.Node] = c.Rules
	}
	cutSomewhere := slices.Contains(now[1].DropOut, a[3]) || slices.Contains(now[3].DropIn, a[1])
	if !cutSomewhere {
		t.Errorf("after the add round %+v, 1->3 is cut nowhere", now)
	}
}

// TestFaultsRebuildTheWorldTheRulesCameFrom: the rules of a world, read
// back and turned into faults, rebuild that world's two-way cuts and
// losses (one-way cuts live in the nodes' drop sets, not in rules).
func TestFaultsRebuildTheWorldTheRulesCameFrom(t *testing.T) {
	a := addrs()
	orig := world(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{1, 3}, {3, 1}, {2, 1}, {1, 2}}},
		chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{3}, Params: chaos.ParamsOf(chaos.LossPercent.Of(0.4))})
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
	if !maps.EqualFunc(got.Net, orig.Net, chaos.Params.Equal) {
		t.Errorf("per-node faults %v, want %v", got.Net, orig.Net)
	}
	if fs := Faults(members, a, map[election.NodeID]netfilter.Rules{1: {}}); len(fs) != 0 {
		t.Errorf("empty rules give faults %+v, want none", fs)
	}
}
