package chaos

import (
	"maps"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// State is the world model: what the faults in force have done to the
// cluster, and what every node believes. Every world keeps one — the
// simulator, each backend, the timeline replay of a history — and
// State.Apply is the only code that changes its fault part, so a fault
// means one thing everywhere.
type State struct {
	// Views holds each node's last recorded view (absent: none yet).
	Views map[election.NodeID]election.View
	// Up: the node's process runs (not killed or stopped). A paused node
	// is Up and Paused.
	Up     map[election.NodeID]bool
	Paused map[election.NodeID]bool
	// Cut holds the directed links currently cut.
	Cut map[[2]election.NodeID]bool
	// Loss is the fraction of a node's packets dropped (absent: none).
	Loss map[election.NodeID]float64
	// Delay is the latency added to a node's packets (absent: none).
	Delay map[election.NodeID]Latency
	// Clocks holds the nodes whose clock is faulted (absent: true time).
	Clocks map[election.NodeID]Skew
}

// Latency is an added delay with its jitter.
type Latency struct {
	Delay, Jitter time.Duration
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
	return State{
		Views:  map[election.NodeID]election.View{},
		Up:     map[election.NodeID]bool{},
		Paused: map[election.NodeID]bool{},
		Cut:    map[[2]election.NodeID]bool{},
		Loss:   map[election.NodeID]float64{},
		Delay:  map[election.NodeID]Latency{},
		Clocks: map[election.NodeID]Skew{},
	}
}

// Clone returns a deep copy whose maps are never nil.
func (s State) Clone() State {
	return State{
		Views: cloneMap(s.Views), Up: cloneMap(s.Up), Paused: cloneMap(s.Paused), Cut: cloneMap(s.Cut),
		Loss: cloneMap(s.Loss), Delay: cloneMap(s.Delay), Clocks: cloneMap(s.Clocks),
	}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

// Degraded reports whether id has loss or delay in force.
func (s State) Degraded(id election.NodeID) bool {
	_, delayed := s.Delay[id]
	return s.Loss[id] > 0 || delayed
}

// NetworkFaulted reports whether anything is cut, lost or delayed: what a
// heal would undo.
func (s State) NetworkFaulted() bool {
	return len(s.Cut) > 0 || len(s.Loss) > 0 || len(s.Delay) > 0
}

// InForce lists the faults that, applied in order through Apply to a
// world in which every member runs and nothing is in force, give s's
// fault part: a kill for each member that is down, a pause for each
// paused one, the cut links, then each node's loss, delay and clock. A
// history that begins on a running cluster (attach) records them first,
// so that its replay starts from the world as found.
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
	for _, m := range members {
		if l := s.Loss[m]; l > 0 {
			out = append(out, Fault{Op: Loss, Nodes: []election.NodeID{m}, Loss: l})
		}
	}
	for _, m := range members {
		if d, ok := s.Delay[m]; ok {
			out = append(out, Fault{Op: Delay, Nodes: []election.NodeID{m}, Delay: d.Delay, Jitter: d.Jitter})
		}
	}
	for _, m := range members {
		if c, ok := s.Clocks[m]; ok {
			f := Fault{Op: Clock, Nodes: []election.NodeID{m}, Jump: c.Jumped}
			if c.Rate != 1 {
				f.Rate = c.Rate
			}
			out = append(out, f)
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
	if s.Loss == nil {
		s.Loss = map[election.NodeID]float64{}
	}
	if s.Delay == nil {
		s.Delay = map[election.NodeID]Latency{}
	}
	if s.Clocks == nil {
		s.Clocks = map[election.NodeID]Skew{}
	}
}
