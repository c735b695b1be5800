// Package chaos is the fault language, defined once, and the one interface
// every world implements. A fault kind is a descriptor (kind.go); a step's
// fault resolves against the world model (State) and is carried out through
// one apply sequence (Carry). A Backend runs a cluster of election nodes in
// some world — containers (docker), or the simulator (sim) — applies
// faults to it, and feeds everything that happens into a history.Sink. The
// harness drives any Backend with the same scenario; the backends live
// beside this package, not in it.
package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/system"
)

// Op names a fault operation. The names are those of the scenario files and
// of history.Fault.Op.
type Op string

const (
	Kill      Op = "kill"      // SIGKILL: the node and its NATS server vanish
	Stop      Op = "stop"      // SIGTERM: the node shuts down gracefully
	Restart   Op = "restart"   // start a killed or stopped node again
	Pause     Op = "pause"     // freeze the node (docker pause / virtual freeze)
	Resume    Op = "resume"    // thaw a paused node
	Partition Op = "partition" // cut links (Groups or Links)
	Heal      Op = "heal"      // remove every network fault
	Loss      Op = "loss"      // drop a fraction of packets to/from Nodes
	Delay     Op = "delay"     // delay packets to/from Nodes
)

// Ops lists every operation, for help text and validation, in the order
// of the kinds (kind.go).
var Ops = func() []Op {
	ops := make([]Op, len(kindList))
	for i, k := range kindList {
		ops[i] = k.Op
	}
	return ops
}()

// Fault is one resolved fault: targets are node IDs by now, not "leader".
type Fault struct {
	Op Op
	// Nodes the fault applies to (kill, stop, restart, pause, resume,
	// loss, delay).
	Nodes []election.NodeID
	// Groups of a partition: nodes in different groups cannot talk; a
	// node in no group keeps all its links (a bridge is a node listed in
	// two groups).
	Groups [][]election.NodeID
	// Links are extra directed cuts [from, to]: from's messages no longer
	// reach to. One entry is a one-way cut.
	Links [][2]election.NodeID
	// Params are the values of its kind (Kind.Params), as the step gave
	// them (Decide may round them: loss to whole percents).
	Params Params
}

// CutLinks returns every directed link the partition cuts: Links plus, for
// Groups, each pair of nodes that share no group. members is the whole
// membership (nodes in no group keep all their links).
func (f Fault) CutLinks(members []election.NodeID) [][2]election.NodeID {
	out := slices.Clone(f.Links)
	if len(f.Groups) == 0 {
		return out
	}
	sides := groupSides(f.Groups, members)
	explicit := len(out)
	for i, a := range members {
		for j, b := range members {
			if i == j || sides.share(i, j) {
				continue
			}
			if l := [2]election.NodeID{a, b}; !slices.Contains(out[:explicit], l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// sides says which groups of a partition each member is in, as bits: the
// words of member i are bits[i*words:(i+1)*words]. The worlds and the
// checkers cut links on every partition they apply or replay, so this is
// a few words per member rather than maps.
type sides struct {
	bits  []uint64
	words int
}

func groupSides(groups [][]election.NodeID, members []election.NodeID) sides {
	s := sides{words: (len(groups) + 63) / 64}
	s.bits = make([]uint64, len(members)*s.words)
	var index map[election.NodeID]int // for large clusters; a scan for small ones
	if len(members) > 32 {
		index = make(map[election.NodeID]int, len(members))
		for i, id := range members {
			index[id] = i
		}
	}
	for gi, g := range groups {
		for _, id := range g {
			i, ok := slices.Index(members, id), true
			if index != nil {
				i, ok = index[id]
			}
			if ok && i >= 0 {
				s.bits[i*s.words+gi/64] |= 1 << (gi % 64)
			}
		}
	}
	return s
}

// share reports whether members i and j are on one side: in a common
// group, or either in none (a node the groups leave out reaches everyone).
func (s sides) share(i, j int) bool {
	a, b := s.bits[i*s.words:(i+1)*s.words], s.bits[j*s.words:(j+1)*s.words]
	inA, inB := false, false
	for w := range a {
		if a[w]&b[w] != 0 {
			return true
		}
		inA, inB = inA || a[w] != 0, inB || b[w] != 0
	}
	return !inA || !inB
}

// Record turns f into the history record of phase p with the scenario's
// target text; note is the outcome's note (what was already so) for the
// ok record.
func (f Fault) Record(t time.Time, target string, p history.FaultPhase, note string, err error) history.Record {
	hf := &history.Fault{Op: string(f.Op), Phase: p, Target: target, Nodes: f.Nodes, Groups: f.Groups, Links: f.Links, Params: f.Params, Note: note}
	if err != nil {
		hf.Error = err.Error()
	}
	return history.Record{Time: t, Process: history.NemesisProcess, Kind: history.KindFault, Fault: hf}
}

// FaultOf is the fault a history record describes: what the timeline
// replays through State.Apply. A duration an old history wrote as a
// number of nanoseconds is read as the duration its kind's Param says.
func FaultOf(hf *history.Fault) Fault {
	f := Fault{Op: Op(hf.Op), Nodes: hf.Nodes, Groups: hf.Groups, Links: hf.Links, Params: hf.Params}
	if k := kindOf(f.Op); k != nil && !f.Params.IsZero() {
		for _, pr := range k.Params {
			if v, ok := f.Params.Get(pr.Field); ok && pr.Duration && !v.IsDur {
				f.Params = f.Params.With(pr.normal(v))
			}
		}
	}
	return f
}

// ClusterSpec is what a backend starts.
type ClusterSpec struct {
	// Name namespaces NATS subjects and names containers; unique per run.
	Name      string
	Algorithm string
	// Program, when set, is the command line of a program the nodes host
	// instead of a built-in algorithm (docs/protocol.md); Algorithm is
	// then the name it was registered under (package program). A
	// backend that runs nodes elsewhere carries the program there.
	Program []string
	// ProgramImage is the image that holds the program's runtime (an
	// interpreter); empty: the program is one static executable.
	ProgramImage string
	// ProgramTimeout, when not zero, bounds each of the program's
	// answers (program.Options.Timeout); a backend carries it to where
	// the program runs.
	ProgramTimeout time.Duration
	// Quorum and Options are the algorithm's, resolved by the scenario
	// (election.Algorithm.Resolve); Validate resolves them again to check.
	Quorum  election.QuorumMode
	Options election.Options
	// Members in ring order.
	Members []election.NodeID
	Timing  election.Timing
	// Seed drives every random choice the backend makes (the simulator's
	// network, the nodes' Rand).
	Seed int64
	// System, when set, is a real server the members run instead of
	// election nodes (docs/systems.md); Algorithm is its name, and
	// SystemOptions the options the scenario gave it (the others stay
	// the server's defaults). A backend that cannot run servers refuses
	// it.
	System        *system.System
	SystemOptions election.Options
	// Placement fixes which engine holds each member when a backend
	// spans several (nil: the backend's default, round-robin); the
	// simulator keeps it as its world's placement, for the shape Engines.
	Placement Placement
	// Gated asks a backend that is a Gate to boot every node without
	// starting its election machine, until Open: set by the harness when
	// a scenario opens with faults, so that they are in force before the
	// first election (Gate). A backend that is not a Gate never sees it
	// set.
	Gated bool
}

// Validate checks a spec before anything starts.
func (s ClusterSpec) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("cluster: empty name")
	}
	if err := s.Placement.Validate(s.Members, 0); err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	if s.System != nil {
		if len(s.Members) < 1 {
			return fmt.Errorf("cluster %s: no members", s.Name)
		}
		return s.System.Validate()
	}
	a, err := election.Lookup(s.Algorithm)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	q, _, err := a.Resolve(s.Quorum, s.Options)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	if len(s.Members) < 1 {
		return fmt.Errorf("cluster %s: no members", s.Name)
	}
	cfg := election.Config{ID: s.Members[0], Members: s.Members, Quorum: q, Timing: s.Timing.WithDefaults(), Rand: dummyRand}
	return cfg.Validate()
}

// dummyRand satisfies Config.Validate's non-nil check; ClusterSpec.Validate
// builds no machine.
var dummyRand = rand.New(rand.NewPCG(0, 0))

// Live reports whether id runs and is not paused.
func (s State) Live(id election.NodeID) bool { return s.Up[id] && !s.Paused[id] }

// CommonLeader is the leader the most live members view (ties go to the
// higher ID, as Bully would); None when no live member views one.
func (s State) CommonLeader(members []election.NodeID) election.NodeID {
	votes := map[election.NodeID]int{}
	best, bestVotes := election.None, 0
	for _, m := range members {
		if !s.Live(m) {
			continue
		}
		l := s.Views[m].Leader
		if l == election.None {
			continue
		}
		votes[l]++
		if votes[l] > bestVotes || (votes[l] == bestVotes && l > best) {
			best, bestVotes = l, votes[l]
		}
	}
	return best
}

// Reachable reports whether a message from a reaches b now.
func (s State) Reachable(a, b election.NodeID) bool {
	return a == b || !s.Cut[[2]election.NodeID{a, b}]
}

// Backend runs one cluster.
type Backend interface {
	// Name is "docker" or "sim".
	Name() string
	// Start brings up every member and begins recording into sink. It
	// returns once every node has booted (not once a leader exists).
	Start(ctx context.Context, spec ClusterSpec, sink history.Sink) error
	// Apply injects a resolved fault; it returns once the fault is in
	// effect. The backend records the fault's invoke and ok/fail records
	// itself, so their times are the backend's clock.
	Apply(ctx context.Context, f Fault, target string) error
	// Await returns true as soon as cond holds on the current State, or
	// false once d has passed on the backend's clock (virtual time in the
	// simulator). cond is re-evaluated whenever a view changes. A nil
	// cond is a fixed wait: Await returns false once d has passed.
	Await(ctx context.Context, d time.Duration, cond func(State) bool) (bool, error)
	// Now is the backend's clock.
	Now() time.Time
	// State is a snapshot.
	State() State
	// Close stops every node and removes everything Start created. It is
	// safe to call after a failed Start and more than once.
	Close(ctx context.Context) error
}

// Gate is a backend whose nodes can boot without electing. Start with
// ClusterSpec.Gated leaves every node up, reachable and controllable, but
// with its election machine not started — no timer, no message of its own
// — until Open starts them all. The harness plays the faults a scenario
// opens with in between, so they are in force before anyone elects, as in
// the simulator, where every machine starts at time zero and the opening
// faults take effect at that same instant, before any timer can fire.
// Without the gate a container cluster's first election races its
// opening faults: its nodes boot one by one, each electing as soon as its
// own timer fires, while the faults are carried out one step at a time.
//
// A node that restarts after Open starts its machine once what the world
// holds for it (its clock, its one-way cuts) is back in place; before
// Open it stays gated.
type Gate interface {
	Backend
	// Open starts the election machine of every node that runs; it
	// returns once each has started. Calling it again does nothing.
	Open(ctx context.Context) error
}

// Describe is what every node believes, compactly:
// "1→4 2→4 3→4 4→4* 5:down" (* marks role leader).
func (s State) Describe(members []election.NodeID) string {
	parts := make([]string, 0, len(members))
	for _, m := range members {
		if !s.Live(m) {
			parts = append(parts, fmt.Sprintf("%d:%s", m, s.Status(m)))
			continue
		}
		v, ok := s.Views[m]
		switch {
		case !ok:
			parts = append(parts, fmt.Sprintf("%d→?", m))
		case v.Leader == election.None:
			parts = append(parts, fmt.Sprintf("%d→none", m))
		default:
			star := ""
			if v.Role == election.Leader {
				star = "*"
			}
			parts = append(parts, fmt.Sprintf("%d→%d%s", m, v.Leader, star))
		}
	}
	return strings.Join(parts, " ")
}

// Status is what id's process is doing, in words: live, paused or down.
func (s State) Status(id election.NodeID) string {
	switch {
	case !s.Up[id]:
		return "down"
	case s.Paused[id]:
		return "paused"
	}
	return "live"
}

// Steady is the state of a cluster at rest: every member up and viewing
// leader (None: every member undecided), nothing cut. Tests start from it.
func Steady(members []election.NodeID, leader election.NodeID) State {
	s := NewState()
	for _, m := range members {
		s.Up[m] = true
		s.Views[m] = ViewOf(m, leader)
	}
	return s
}

// ViewOf is the view node has when it believes in leader: it leads if it
// is leader, follows otherwise, and is undecided when leader is None.
func ViewOf(node, leader election.NodeID) election.View {
	role := election.Follower
	switch {
	case leader == election.None:
		role = election.Undecided
	case node == leader:
		role = election.Leader
	}
	return election.View{Leader: leader, Role: role}
}
