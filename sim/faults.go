package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Apply injects a fault now and records it as every backend does
// (chaos.Carry): an invoke record, then ok (with chaos.Decide's note for
// what was already so) or fail with the error. The simulator's part is
// what it cannot do (world.Refuse) and its reconcile hook
// (world.Reconcile). target is the scenario's text for the record
// ("leader", "3"); empty means the resolved node list.
func (s *Sim) Apply(f chaos.Fault, target string) error {
	if target == "" {
		target = idsString(f.Nodes)
	}
	return chaos.Carry(context.Background(), (*world)(s), f, target)
}

// world is the simulator as chaos.Carry sees it.
type world Sim

func (w *world) Name() string   { return "sim" }
func (w *world) Now() time.Time { return (*Sim)(w).Time() }

func (w *world) Record(r history.Record) {
	if w.sink != nil {
		(*Sim)(w).emit(r)
	}
}

// Refuse: a fault-free cluster takes no fault, and a node cannot be
// touched before it exists (the network may be shaped before the nodes
// boot).
func (w *world) Refuse(f chaos.Fault) error {
	if w.opts.FaultFree {
		return fmt.Errorf("the cluster runs fault-free (Options.FaultFree): its machines detect no failures")
	}
	if k, _ := chaos.KindOf(f.Op); k.Family == chaos.FamilyProcess && !w.started {
		return fmt.Errorf("the cluster has not started (call Start first)")
	}
	return nil
}

func (w *world) LockModel() (*chaos.State, []election.NodeID) {
	return (*Sim)(w).model(), w.opts.Members
}

func (w *world) UnlockModel(_ chaos.Fault, applied bool) {
	w.stateChanged = w.stateChanged || applied
}

// Reconcile brings the simulator's physics to the world model, which f
// has just changed: machines stopped or booted, timers held or released,
// hints scheduled, the per-link tables refilled, clocks re-timed.
func (w *world) Reconcile(_ context.Context, f chaos.Fault) error {
	s := (*Sim)(w)
	ns, err := s.lookup(f.Nodes)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := s.reconcileNode(n, f.Op); err != nil {
			return err
		}
	}
	if k, _ := chaos.KindOf(f.Op); k.Family == chaos.FamilyNetwork {
		s.reconcileNetwork(f)
	}
	return nil
}

// Kill crashes the given nodes (SIGKILL).
func (s *Sim) Kill(ids ...election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Kill, Nodes: ids}, "")
}

// Stop shuts the given nodes down gracefully (SIGTERM): like Kill, but each
// writes a stop record first.
func (s *Sim) Stop(ids ...election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Stop, Nodes: ids}, "")
}

// Restart boots killed or stopped nodes again from their persisted state.
func (s *Sim) Restart(ids ...election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Restart, Nodes: ids}, "")
}

// Pause freezes the given nodes.
func (s *Sim) Pause(ids ...election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Pause, Nodes: ids}, "")
}

// Resume thaws paused nodes; what waited for them is handled at once.
func (s *Sim) Resume(ids ...election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Resume, Nodes: ids}, "")
}

// Cut cuts the directed link from -> to (a one-way cut); cut both
// directions for a symmetric one.
func (s *Sim) Cut(from, to election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Partition, Links: [][2]election.NodeID{{from, to}}}, fmt.Sprintf("%d->%d", from, to))
}

// Partition cuts every link between nodes that share no group.
func (s *Sim) Partition(groups ...[]election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Partition, Groups: groups}, "")
}

// Heal removes every cut and every per-node loss, delay and jam.
func (s *Sim) Heal() error { return s.Apply(chaos.Fault{Op: chaos.Heal}, "all") }

func (s *Sim) lookup(ids []election.NodeID) ([]*node, error) {
	out := make([]*node, 0, len(ids))
	for _, id := range ids {
		i, ok := s.lookupIndex(id)
		if !ok {
			return nil, fmt.Errorf("node %d is not a member (members: %s)", id, idsString(s.opts.Members))
		}
		out = append(out, &s.nodes[i])
	}
	return out, nil
}

// reconcileNode brings n's process, pause and clock to what the world
// model says.
func (s *Sim) reconcileNode(n *node, op chaos.Op) error {
	switch up := s.state.Up[n.id]; {
	case n.up && !up:
		if op == chaos.Stop && s.sink != nil {
			s.emit(s.nodeRecord(n, history.KindStop))
		}
		s.down(n)
		s.hintCrashed(n)
		return nil
	case !n.up && up:
		if err := s.build(n); err != nil {
			return err
		}
		s.reconcileClock(n) // the machine's rate outlives the process
		s.boot(n)
		return nil
	}
	if n.up && s.state.Paused[n.id] != n.paused {
		if n.paused {
			s.resume(n)
		} else {
			n.paused = true
			s.hintPaused(n)
		}
	}
	s.reconcileClock(n)
	return nil
}

// reconcileNetwork refills the per-link cut tables and the nodes' loss
// and delay from the world model, after f changed it: links newly cut
// both ways get their routes' hints, and hints about cuts now lifted are
// void.
func (s *Sim) reconcileNetwork(f chaos.Fault) {
	var newlyCut [][2]election.NodeID
	if f.Op == chaos.Partition {
		newlyCut = s.newlyCutPairs(f.Links) // Decide gave the partition as its links
	}
	lifted := false
	for l := range s.cuts {
		if !s.state.Cut[l] {
			lifted = true
			delete(s.cuts, l)
		}
	}
	if lifted {
		s.heals++
	}
	clear(s.cutDense)
	for l := range s.state.Cut {
		s.cuts[l] = true
		if s.cutDense == nil {
			continue
		}
		a, okA := s.lookupIndex(l[0])
		b, okB := s.lookupIndex(l[1])
		if okA && okB {
			s.cutDense[int(a)*len(s.nodes)+int(b)] = true
		}
	}
	s.hintCut(newlyCut)
	delayed, jamming := false, false
	for i := range s.nodes {
		n := &s.nodes[i]
		loss, lossy := s.state.NetOf(chaos.Loss, n.id)
		d, ok := s.state.NetOf(chaos.Delay, n.id)
		if n.x != nil || lossy || ok {
			x := n.ext()
			x.loss = chaos.LossPercent.Num(loss)
			x.delay, x.jitter = chaos.DelayMS.Dur(d), chaos.DelayJitter.Dur(d)
		}
		delayed = delayed || ok
		_, n.jammed = s.state.NetOf(chaos.Jam, n.id)
		jamming = jamming || n.jammed
	}
	if s.jamming {
		for i := range s.nodes {
			n := &s.nodes[i]
			s.releaseJam(n)
			jamming = jamming || n.x != nil && len(n.x.jam) > 0
		}
	}
	s.jamming = jamming
	s.perNode = s.perNode || len(s.state.Net) > 0
	// Delays that differ can reorder a link: keep it FIFO from now on.
	s.trackFIFO = s.trackFIFO || delayed
}

// holdJammed holds e, a message arriving at n on a jammed link, until the
// link is no longer jammed: the receiver holds it, as a node's runtime
// does in containers (chaos.Jam). Past chaos.JamHeld held messages it is
// lost instead.
func (s *Sim) holdJammed(n *node, e *event) {
	x := n.ext()
	if len(x.jam) >= chaos.JamHeld {
		s.lose(e)
		return
	}
	e.arrived = true // on the wire no more: in n's hands
	x.jam = append(x.jam, *e)
}

// releaseJam delivers what n holds on links no longer jammed, now, in the
// order it arrived: a burst at the heal, each recorded as received when it
// is delivered (a paused n holds them on, as anything arriving then).
func (s *Sim) releaseJam(n *node) {
	if n.x == nil || len(n.x.jam) == 0 {
		return
	}
	x := n.x
	kept := x.jam[:0]
	for _, e := range x.jam {
		if n.jammed || s.nodes[e.from].jammed {
			kept = append(kept, e)
			continue
		}
		e.at = s.now
		s.schedule(e)
	}
	x.jam = kept
}

// reconcileClock brings n's clock to the world model's skew: a rate
// change or a jump re-times every armed timer, whose deadlines are on the
// node's clock (package clock); a jump forward makes the ones it passes
// due at once.
func (s *Sim) reconcileClock(n *node) {
	want := s.state.ClockOf(n.id)
	if !n.skewed && want.Rate == 1 && want.Jumped == 0 {
		return
	}
	x := n.ext()
	if !n.skewed {
		x.clk, n.skewed, x.jumped = clock.New(), true, 0
	}
	if x.clk.Rate() == want.Rate && x.jumped == want.Jumped {
		return
	}
	if x.clk.Rate() != want.Rate {
		x.clk.SetRate(s.now, want.Rate)
	}
	if d := want.Jumped - x.jumped; d != 0 {
		x.clk.Jump(s.now, d)
		x.jumped = want.Jumped
	}
	timers := s.armed[n.idx]
	for i := range timers {
		t := &timers[i]
		if t.gen == 0 {
			continue
		}
		s.armTimer(n, t.name, s.now+x.clk.Until(s.now, t.local), t.local)
	}
}

// resume thaws n: everything that waited runs now, in arrival order,
// before anything scheduled later.
func (s *Sim) resume(n *node) {
	n.paused = false
	if x := n.x; x != nil {
		for _, e := range x.held {
			e.at = s.now
			if e.kind == evTimer {
				if t := s.armed[n.idx].queuedFor(e.gen); t != nil {
					t.queuedAt = e.at // its event is due now
				}
			}
			s.schedule(e)
		}
		x.held = emptied(x.held)
	}
	s.hintThawed(n)
}

// down drops a node's machine, timers and held events. Messages already on
// the wire to it are lost when they arrive (process checks up).
func (s *Sim) down(n *node) {
	n.up, n.paused = false, false
	s.release(n)
	s.armed[n.idx] = nil
	if x := n.x; x != nil {
		for i := range x.held {
			s.dropRefs(&x.held[i])
		}
		x.held = emptied(x.held)
		// What a jam held for it went with the process.
		for i := range x.jam {
			s.lose(&x.jam[i])
		}
		x.jam = emptied(x.jam)
	}
}

// Up reports whether id runs (paused or not).
func (s *Sim) Up(id election.NodeID) bool {
	i, ok := s.lookupIndex(id)
	return ok && s.nodes[i].up
}

// Paused reports whether id is paused.
func (s *Sim) Paused(id election.NodeID) bool {
	i, ok := s.lookupIndex(id)
	return ok && s.nodes[i].paused
}

// Durable is what id last persisted.
func (s *Sim) Durable(id election.NodeID) election.Durable {
	i, ok := s.lookupIndex(id)
	if !ok {
		return election.Durable{}
	}
	return s.nodes[i].durable()
}

// Cuts lists the currently cut directed links, sorted.
func (s *Sim) Cuts() [][2]election.NodeID {
	out := make([][2]election.NodeID, 0, len(s.state.Cut))
	for l := range s.state.Cut {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b [2]election.NodeID) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	return out
}
