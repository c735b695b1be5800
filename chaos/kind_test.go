package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// TestEveryKindIsComplete: a kind without its edges, its effect or a way
// to be drawn is a kind half added.
func TestEveryKindIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if k.decide == nil || k.apply == nil || k.Summary == "" || k.Family == "" || k.Mark.Colour == "" || k.Mark.Legend == "" {
			t.Errorf("kind %s lacks decide, apply, summary, family or mark", k.Op)
		}
		if len(k.Draws) == 0 {
			t.Errorf("kind %s has no draw: the explorer cannot find its bugs", k.Op)
		}
		for _, d := range k.Draws {
			if seen[d.Name] || d.Weight <= 0 {
				t.Errorf("draw %q: repeated or without weight", d.Name)
			}
			seen[d.Name] = true
		}
		for _, op := range k.EndedBy {
			if _, ok := KindOf(op); !ok {
				t.Errorf("kind %s is ended by %q, which is no kind", k.Op, op)
			}
		}
	}
	if !slices.Equal(Ops, func() []Op {
		var ops []Op
		for _, k := range Kinds() {
			ops = append(ops, k.Op)
		}
		return ops
	}()) {
		t.Errorf("Ops %v is not the kinds' list", Ops)
	}
}

// TestApplyIsTheWorldModel: each kind's effect on the state, as every
// world (simulator, containers, replay) now sees it.
func TestApplyIsTheWorldModel(t *testing.T) {
	s := Steady(five, 5)
	apply := func(f Fault) {
		t.Helper()
		out, err := Decide(f, s, five)
		if err != nil {
			t.Fatalf("%s: %v", f.Op, err)
		}
		s.Apply(out.Fault, five)
	}
	apply(Fault{Op: Kill, Nodes: []election.NodeID{5}})
	apply(Fault{Op: Pause, Nodes: []election.NodeID{4}})
	apply(Fault{Op: Partition, Links: [][2]election.NodeID{{1, 2}}})
	apply(Fault{Op: Loss, Nodes: []election.NodeID{3}, Params: ParamsOf(LossPercent.Of(0.234))})
	apply(Fault{Op: Delay, Nodes: []election.NodeID{2}, Params: ParamsOf(DelayMS.OfDur(20 * time.Millisecond))})
	apply(Fault{Op: Clock, Nodes: []election.NodeID{1}, Params: ParamsOf(ClockRate.Of(0.5))})
	apply(Fault{Op: Clock, Nodes: []election.NodeID{1}, Params: ParamsOf(ClockJump.OfDur(-time.Second))})
	if s.Up[5] || !s.Paused[4] || !s.Cut[[2]election.NodeID{1, 2}] || s.Cut[[2]election.NodeID{2, 1}] {
		t.Fatalf("lifecycle or cut not applied: %s, cut %v", s.Describe(five), s.Cut)
	}
	loss, _ := s.NetOf(Loss, 3)
	delay, _ := s.NetOf(Delay, 2)
	if LossPercent.Num(loss) != 0.23 || DelayMS.Dur(delay) != 20*time.Millisecond || !s.Degraded(2) || s.Degraded(1) {
		t.Fatalf("net %v (want loss 0.23, rounded by Decide, and delay 20ms)", s.Net)
	}
	if c := s.ClockOf(1); c.Rate != 0.5 || c.Jumped != -time.Second {
		t.Fatalf("clock of 1 = %+v, want rate 0.5 jumped -1s", c)
	}
	apply(Fault{Op: Heal})
	if s.NetworkFaulted() || s.ClockOf(1).Rate != 0.5 {
		t.Fatalf("heal must clear the network and leave clocks: cut %v net %v clock %+v", s.Cut, s.Net, s.ClockOf(1))
	}
	// A restart keeps the machine's rate and loses the process's jumps.
	apply(Fault{Op: Kill, Nodes: []election.NodeID{1}})
	apply(Fault{Op: Restart, Nodes: []election.NodeID{1}})
	if c := s.ClockOf(1); c.Rate != 0.5 || c.Jumped != 0 {
		t.Fatalf("after restart the clock is %+v, want rate 0.5 and no jump", c)
	}
	apply(Fault{Op: Clock, Nodes: []election.NodeID{1}, Params: ParamsOf(ClockRate.Of(1))})
	if _, skewed := s.Clocks[1]; skewed {
		t.Fatal("rate 1 with no jump must leave no skew behind")
	}
}

func TestClockEdges(t *testing.T) {
	s := Steady(five, 5)
	for _, f := range []Fault{
		{Op: Clock, Nodes: []election.NodeID{1}},
		{Op: Clock, Nodes: []election.NodeID{1}, Params: ParamsOf(ClockRate.Of(-2))},
		{Op: Clock, Nodes: []election.NodeID{1}, Params: ParamsOf(ClockJump.OfDur(48 * time.Hour))},
		{Op: Clock, Params: ParamsOf(ClockRate.Of(2))},
	} {
		if _, err := Decide(f, s, five); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	out, err := Decide(Fault{Op: Clock, Nodes: []election.NodeID{1, 2}, Params: ParamsOf(ClockRate.Of(1))}, s, five)
	if err != nil || !strings.HasPrefix(out.Note, "no-op:") {
		t.Fatalf("rate 1 on clocks at rate 1: %v, note %q; want a recorded no-op", err, out.Note)
	}
	s.Up[3] = false
	if _, err := Decide(Fault{Op: Clock, Nodes: []election.NodeID{3}, Params: ParamsOf(ClockRate.Of(2))}, s, five); err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("a clock fault on a down node: %v, want a refusal naming it", err)
	}
}

// TestSpansEndAsTheirKindsSay: what ends a kill, a pause, a partition and a
// clock skew.
func TestSpansEndAsTheirKindsSay(t *testing.T) {
	kill, _ := KindOf(Kill)
	pause, _ := KindOf(Pause)
	part, _ := KindOf(Partition)
	clk, _ := KindOf(Clock)
	three := []election.NodeID{3}
	cases := []struct {
		k     Kind
		later Fault
		want  bool
	}{
		{kill, Fault{Op: Restart, Nodes: three}, true},
		{kill, Fault{Op: Restart, Nodes: []election.NodeID{4}}, false},
		{pause, Fault{Op: Kill, Nodes: three}, true},
		{part, Fault{Op: Heal}, true},
		{part, Fault{Op: Restart, Nodes: three}, false},
		{clk, Fault{Op: Clock, Nodes: three, Params: ParamsOf(ClockRate.Of(2))}, false},
		{clk, Fault{Op: Clock, Nodes: three, Params: ParamsOf(ClockRate.Of(1))}, true},
		{clk, Fault{Op: Heal}, false},
	}
	for _, c := range cases {
		if got := c.k.Ends(c.later, 3); got != c.want {
			t.Errorf("%s ended by %s %v = %v, want %v", c.k.Op, c.later.Op, c.later.Nodes, got, c.want)
		}
	}
	if !LetsBackIn(Heal) || !LetsBackIn(Restart) || LetsBackIn(Kill) || LetsBackIn(Clock) {
		t.Error("LetsBackIn: want restart, resume and heal only")
	}
}

func TestWeakerClockApproachesRealSpeed(t *testing.T) {
	sp := Spec{Op: Clock, Target: Target{Kind: TargetLeader}, Params: ParamsOf(ClockRate.Of(0.4))}
	var rates []float64
	for {
		w := Weaker(sp, Fault{}, five)
		if len(w) == 0 {
			break
		}
		sp = w[0]
		rates = append(rates, ClockRate.Num(sp.Params))
	}
	if !slices.Equal(rates, []float64{0.7, 0.85, 0.95}) {
		t.Fatalf("rates while weakening 0.4: %v", rates)
	}
	if w := Weaker(Spec{Op: Clock, Params: ParamsOf(ClockJump.OfDur(3 * time.Second))}, Fault{}, five); len(w) != 1 || ClockJump.Dur(w[0].Params) != 1500*time.Millisecond {
		t.Fatalf("weakening a 3 s jump: %+v", w)
	}
}

// TestHealEndsEveryPerNodeNetworkFault holds what applyHeal assumes: every
// kind State.Net holds is ended by heal, so heal clears Net whole.
func TestHealEndsEveryPerNodeNetworkFault(t *testing.T) {
	for _, k := range kindList {
		if k.net && !slices.Contains(k.EndedBy, Heal) {
			t.Errorf("%s is held in State.Net but heal does not end it: add Heal to its EndedBy", k.Op)
		}
	}
}
