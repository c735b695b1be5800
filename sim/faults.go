package sim

import (
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Apply injects a fault now and records it as every backend does: an
// invoke record, then ok (with chaos.Decide's note for what was already so)
// or fail with the error. The fault's edges (killing a node that is down,
// healing nothing) have the outcomes chaos.Decide gives every backend.
// target is the scenario's text for the record ("leader", "3"); empty means
// the resolved node list.
func (s *Sim) Apply(f chaos.Fault, target string) error {
	if target == "" {
		target = idsString(f.Nodes)
	}
	s.emitFault(f, target, history.FaultInvoke, "", nil)
	out, err := s.decide(f)
	if err == nil {
		err = s.carryOut(out.Fault)
	}
	if err != nil {
		err = fmt.Errorf("sim: %s %s: %w", f.Op, target, err)
		s.emitFault(f, target, history.FaultFail, "", err)
		return err
	}
	s.emitFault(f, target, history.FaultOK, out.Note, nil)
	return nil
}

func (s *Sim) emitFault(f chaos.Fault, target string, p history.FaultPhase, note string, err error) {
	if s.sink != nil {
		s.emit(f.Record(s.Time(), target, p, note, err))
	}
}

func (s *Sim) decide(f chaos.Fault) (chaos.Outcome, error) {
	if s.opts.FaultFree {
		return chaos.Outcome{}, fmt.Errorf("the cluster runs fault-free (Options.FaultFree): its machines detect no failures")
	}
	switch f.Op {
	case chaos.Kill, chaos.Stop, chaos.Restart, chaos.Pause, chaos.Resume:
		// The network may be shaped before the nodes boot; the nodes
		// themselves cannot be touched before they exist.
		if !s.started {
			return chaos.Outcome{}, fmt.Errorf("the cluster has not started (call Start first)")
		}
	}
	return chaos.Decide(f, s.state, s.opts.Members)
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

// Heal removes every cut and every per-node loss and delay.
func (s *Sim) Heal() error { return s.Apply(chaos.Fault{Op: chaos.Heal}, "all") }

func (s *Sim) lookup(ids []election.NodeID) ([]*node, error) {
	out := make([]*node, 0, len(ids))
	for _, id := range ids {
		i, ok := s.index[id]
		if !ok {
			return nil, fmt.Errorf("node %d is not a member (members: %s)", id, idsString(s.opts.Members))
		}
		out = append(out, s.nodes[i])
	}
	return out, nil
}

// carryOut applies a fault chaos.Decide has checked: every node in it is a
// member in the state the fault changes.
func (s *Sim) carryOut(f chaos.Fault) error {
	ns, err := s.lookup(f.Nodes)
	if err != nil {
		return err
	}
	switch f.Op {
	case chaos.Kill, chaos.Stop:
		for _, n := range ns {
			if f.Op == chaos.Stop && s.sink != nil {
				s.emit(s.nodeRecord(n, history.KindStop))
			}
			s.down(n)
			s.hintCrashed(n)
		}
	case chaos.Restart:
		for _, n := range ns {
			if err := s.build(n); err != nil {
				return err
			}
			s.boot(n)
		}
	case chaos.Pause:
		for _, n := range ns {
			n.paused = true
			s.state.Paused[n.id] = true
			s.hintPaused(n)
		}
	case chaos.Resume:
		for _, n := range ns {
			s.resume(n)
		}
	case chaos.Partition:
		links := f.CutLinks(s.opts.Members)
		s.hintCut(s.newlyCutPairs(links))
		for _, l := range links {
			s.setCut(l)
		}
	case chaos.Heal:
		s.heals++
		clear(s.state.Cut)
		clear(s.cutDense)
		clear(s.state.Degraded)
		for _, n := range s.nodes {
			n.loss, n.delay, n.jitter = 0, 0, 0
		}
	case chaos.Loss:
		for _, n := range ns {
			n.loss = f.Loss
			s.perNode = true
			s.markDegraded(n)
		}
	case chaos.Delay:
		for _, n := range ns {
			n.delay, n.jitter = f.Delay, f.Jitter
			s.perNode = true
			s.markDegraded(n)
		}
		s.trackFIFO = true
	}
	s.stateChanged = true
	return nil
}

// resume thaws n: everything that waited runs now, in arrival order,
// before anything scheduled later.
func (s *Sim) resume(n *node) {
	n.paused = false
	delete(s.state.Paused, n.id)
	for _, e := range n.held {
		e.at = s.now
		if e.kind == evTimer {
			if t := n.timers.find(e.timer); t != nil && t.queued == e.gen {
				t.queuedAt = e.at // its event is due now
			}
		}
		s.schedule(e)
	}
	n.held = emptied(n.held)
	s.hintThawed(n)
}

// markDegraded keeps State.Degraded true for a node with loss or delay.
func (s *Sim) markDegraded(n *node) {
	if n.loss > 0 || n.delay > 0 || n.jitter > 0 {
		s.state.Degraded[n.id] = true
	} else {
		delete(s.state.Degraded, n.id)
	}
}

func (s *Sim) status(n *node) string {
	switch {
	case !n.up:
		return "down"
	case n.paused:
		return "paused"
	}
	return "running"
}

// down drops a node's machine, timers and held events. Messages already on
// the wire to it are lost when they arrive (process checks up).
func (s *Sim) down(n *node) {
	n.up, n.paused = false, false
	n.m = nil
	n.timers = nil
	n.held = emptied(n.held)
	s.state.Up[n.id] = false
	delete(s.state.Paused, n.id)
	s.stateChanged = true
}

// Up reports whether id runs (paused or not).
func (s *Sim) Up(id election.NodeID) bool {
	i, ok := s.index[id]
	return ok && s.nodes[i].up
}

// Paused reports whether id is paused.
func (s *Sim) Paused(id election.NodeID) bool {
	i, ok := s.index[id]
	return ok && s.nodes[i].paused
}

// Durable is what id last persisted.
func (s *Sim) Durable(id election.NodeID) election.Durable {
	i, ok := s.index[id]
	if !ok {
		return election.Durable{}
	}
	return s.nodes[i].durable
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
