package chaos

import (
	"maps"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// State is the world model: what the faults in force have done to the
// cluster, and what every node believes. Every world keeps one — the
// simulator, each backend, the timeline replay of a history. Its fault
// part changes only through State.Apply (each kind's apply, kind.go), so a
// fault means one thing everywhere; a world that starts a new run on the
// same memory (the simulator's Reset) empties it with Clear.
type State struct {
	// Views holds each node's last recorded view (absent: none yet).
	Views map[election.NodeID]election.View
	// Up: the node's process runs (not killed or stopped). A paused node
	// is Up and Paused.
	Up     map[election.NodeID]bool
	Paused map[election.NodeID]bool
	// Cut holds the directed links currently cut.
	Cut map[[2]election.NodeID]bool
	// Net holds the per-node network faults in force (loss, delay, …),
	// keyed by kind and node, each as its fault's Params: one structure
	// for every such kind, so that a new one needs no field here.
	Net map[NetKey]Params
	// Clocks holds the nodes whose clock is faulted (absent: true time).
	Clocks map[election.NodeID]Skew
	// Placement is which engine holds each node, fixed when the cluster
	// starts (nil on one engine): what the partition shape Engines cuts
	// along. No fault changes it.
	Placement Placement
}

// NetKey names one per-node network fault in State.Net: its kind and the
// node it holds on.
type NetKey struct {
	Op   Op
	Node election.NodeID
}

// Skew is what clock faults have done to a node's clock: its rate, and the
// sum of the jumps since the process started (a restart keeps the rate —
// it is the machine's — and loses the jumps, with the process that read
// them).
type Skew struct {
	Rate   float64
	Jumped time.Duration
}

// NewState is an empty world whose maps are ready to fill.
func NewState() State {
	var s State
	s.ensure()
	return s
}

// Clone returns a deep copy whose maps are never nil (Params are
// immutable and shared).
func (s State) Clone() State {
	return State{
		Views: cloneMap(s.Views), Up: cloneMap(s.Up), Paused: cloneMap(s.Paused), Cut: cloneMap(s.Cut),
		Net: cloneMap(s.Net), Clocks: cloneMap(s.Clocks), Placement: s.Placement,
	}
}

// Clear empties every map, keeping its memory: a world that plays a new
// run on the same State (the simulator's Reset) starts from nothing.
func (s *State) Clear() {
	s.ensure()
	clear(s.Views)
	clear(s.Up)
	clear(s.Paused)
	clear(s.Cut)
	clear(s.Net)
	clear(s.Clocks)
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

// NetOf is the per-node network fault of kind op on node id: its Params,
// and whether it is in force.
func (s State) NetOf(op Op, id election.NodeID) (Params, bool) {
	p, ok := s.Net[NetKey{op, id}]
	return p, ok
}

// Degraded reports whether id has a per-node network fault in force
// (loss, delay, …).
func (s State) Degraded(id election.NodeID) bool {
	for k := range s.Net {
		if k.Node == id {
			return true
		}
	}
	return false
}

// NetworkFaulted reports whether any network fault is in force: what a
// heal would undo.
func (s State) NetworkFaulted() bool { return len(s.Cut) > 0 || len(s.Net) > 0 }

// InForce lists the faults that, applied in order through Apply to a
// world in which every member runs and nothing is in force, give s's
// fault part: a kill for each member that is down, a pause for each
// paused one, the cut links, then each per-node network fault (in the
// kinds' order, then the members') and each clock. A history that begins
// on a running cluster (attach) records them first, so that its replay
// starts from the world as found.
func (s State) InForce(members []election.NodeID) []Fault {
	var out []Fault
	var down, paused []election.NodeID
	for _, m := range members {
		switch {
		case !s.Up[m]:
			down = append(down, m)
		case s.Paused[m]:
			paused = append(paused, m)
		}
	}
	if len(down) > 0 {
		out = append(out, Fault{Op: Kill, Nodes: down})
	}
	if len(paused) > 0 {
		out = append(out, Fault{Op: Pause, Nodes: paused})
	}
	var links [][2]election.NodeID
	for _, a := range members {
		for _, b := range members {
			if s.Cut[[2]election.NodeID{a, b}] {
				links = append(links, [2]election.NodeID{a, b})
			}
		}
	}
	if len(links) > 0 {
		out = append(out, Fault{Op: Partition, Links: links})
	}
	for _, k := range kindList {
		for _, m := range members {
			if p, ok := s.NetOf(k.Op, m); ok && k.net {
				out = append(out, Fault{Op: k.Op, Nodes: []election.NodeID{m}, Params: p})
			}
		}
	}
	for _, m := range members {
		if c, ok := s.Clocks[m]; ok {
			var rate float64 // 0: unchanged
			if c.Rate != 1 {
				rate = c.Rate
			}
			p := ParamsOf(ClockRate.Of(rate), ClockJump.OfDur(c.Jumped))
			out = append(out, Fault{Op: Clock, Nodes: []election.NodeID{m}, Params: p})
		}
	}
	return out
}

// ClockOf is id's clock skew; a node with none runs at rate 1.
func (s State) ClockOf(id election.NodeID) Skew {
	if c, ok := s.Clocks[id]; ok {
		return c
	}
	return Skew{Rate: 1}
}

// Apply changes the world model as fault f does. It is the one place a
// fault's effect on the world is written (each kind's apply, kind.go): the
// simulator applies a fault and then does its physics from the change, the
// container backend applies it and reconciles its rules from the state,
// and the timeline replays a history through it. f is an Outcome's fault
// (Decide has checked it); Apply assumes so. members is the membership
// (partition groups cut against it).
func (s *State) Apply(f Fault, members []election.NodeID) {
	s.ensure()
	if k := kindOf(f.Op); k != nil {
		k.apply(s, f, members)
	}
}

// ensure makes every map of a zero State.
func (s *State) ensure() {
	if s.Views == nil {
		s.Views = map[election.NodeID]election.View{}
	}
	if s.Up == nil {
		s.Up = map[election.NodeID]bool{}
	}
	if s.Paused == nil {
		s.Paused = map[election.NodeID]bool{}
	}
	if s.Cut == nil {
		s.Cut = map[[2]election.NodeID]bool{}
	}
	if s.Net == nil {
		s.Net = map[NetKey]Params{}
	}
	if s.Clocks == nil {
		s.Clocks = map[election.NodeID]Skew{}
	}
}
