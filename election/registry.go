package election

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Property names a guarantee an algorithm claims; the conformance suite and
// the explorer run exactly the checkers an algorithm claims.
type Property string

const (
	// Agreement: once stable, every node in a connected component views
	// the same leader.
	Agreement Property = "agreement"
	// HighestWins: once stable, the leader is the highest live ID the
	// node can reach (Bully, and every ring algorithm here on a full ring).
	HighestWins Property = "bully-max"
	// NoSplitBrain: no two nodes ever hold role=leader at overlapping
	// instants (only with a quorum).
	NoSplitBrain Property = "no-split-brain"
	// EpochSafety: at most one leader per epoch.
	EpochSafety Property = "epoch-safety"
	// Liveness: a leader within a bound after the last fault.
	Liveness Property = "liveness"
)

// Formula is a published message count for one fault-free election.
type Formula struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Exact is true when the count must equal Value; false when Value is
	// an upper bound.
	Exact bool `json:"exact"`
}

// Algorithm describes one registered algorithm.
type Algorithm struct {
	// Name is the registry key, as used in scenarios and flags.
	Name string
	// Title is the human name with its citation.
	Title string
	// Topology is "complete", "ring" or "bidirectional-ring".
	Topology string
	// New builds a machine; it must validate cfg and return an error
	// naming what is wrong.
	New func(cfg Config) (Machine, error)
	// ElectionTypes are the message types counted as election messages;
	// AnnounceTypes the leader announcement (COORDINATOR and the like).
	// Anything else (heartbeats, acknowledgements) is maintenance.
	ElectionTypes []string
	AnnounceTypes []string
	// Formula returns the published count of election messages for a
	// fault-free run where every node starts at once with the given ring
	// arrangement (Members order). nil when there is none.
	Formula func(ids []NodeID) Formula
	// Claims are the properties the algorithm guarantees in the given
	// quorum mode.
	Claims func(q QuorumMode) []Property
	// Quorums are the quorum modes the algorithm runs in, and
	// DefaultQuorum the one it runs in when none is given. Register fills
	// them when left empty: Quorums [NoQuorum], DefaultQuorum Quorums[0].
	Quorums       []QuorumMode
	DefaultQuorum QuorumMode
	// QuorumWhy says, for people, why the algorithm runs in no other
	// modes (quoted when a mode is refused); empty when there is nothing
	// to say.
	QuorumWhy string
	// Options are the settings the algorithm takes, with their defaults;
	// Config.Options carries their values to New, resolved by Resolve.
	Options []OptionSpec
	// Seeded promises a fully seeded machine: given the same Config
	// (Config.Rand included) and the same events, it returns the same
	// effects, so the simulator replays its runs from the seed and the
	// explorer's shrunk schedules reproduce. An algorithm that draws
	// randomness anywhere but Config.Rand (a library with its own source,
	// a foreign program) leaves it false.
	Seeded bool
	// OneAtATime is true for an algorithm whose machines in one process
	// step one at a time, whatever the number of goroutines: raft, whose
	// library draws from one process-wide source that every call holds a
	// lock around (election/raft, determinism.go). The explorer runs
	// such an algorithm in one process per worker unless told otherwise
	// (sim explore --processes).
	OneAtATime bool
	// SimOnly is true for algorithms that need synchrony a real network
	// cannot honestly give (the variable-time ring).
	SimOnly bool
	// External is true for an algorithm whose machines live outside this
	// process and can fail by themselves (Crasher): a program. A run of
	// one is always judged for such failures (check.NoProgramFailure):
	// they are findings about the program, not faults anyone injected.
	External bool
}

// ResolveQuorum is the one place a quorum mode that was not given
// (QuorumDefault) becomes the algorithm's default. A mode the algorithm
// does not run in is refused, naming the ones it does and why.
func (a Algorithm) ResolveQuorum(q QuorumMode) (QuorumMode, error) {
	if q == QuorumDefault {
		return a.DefaultQuorum, nil
	}
	if slices.Contains(a.Quorums, q) {
		return q, nil
	}
	why := ""
	if a.QuorumWhy != "" {
		why = ": " + a.QuorumWhy
	}
	return q, fmt.Errorf("algorithm %s does not run with quorum %s%s (it runs with %s)", a.Name, q.Text(), why, quorumList(a.Quorums))
}

// Resolve fills what a run did not give: the default quorum mode and the
// default of every option, checking both against what the algorithm takes.
// Every runtime resolves through it, so a run records what it ran.
func (a Algorithm) Resolve(q QuorumMode, opts Options) (QuorumMode, Options, error) {
	q, err := a.ResolveQuorum(q)
	if err != nil {
		return q, nil, err
	}
	opts, err = a.ResolveOptions(opts)
	return q, opts, err
}

// QuorumModes is the supported modes as people read them, the default
// marked: "none (default), majority".
func (a Algorithm) QuorumModes() string {
	var parts []string
	for _, q := range a.Quorums {
		if q == a.DefaultQuorum {
			parts = append(parts, q.Text()+" (default)")
		} else {
			parts = append(parts, q.Text())
		}
	}
	return strings.Join(parts, ", ")
}

func quorumList(qs []QuorumMode) string {
	var parts []string
	for _, q := range qs {
		parts = append(parts, q.Text())
	}
	return strings.Join(parts, " or ")
}

// Claim reports whether a claims p in mode q.
func (a Algorithm) Claim(q QuorumMode, p Property) bool {
	if a.Claims == nil {
		return false
	}
	return slices.Contains(a.Claims(q), p)
}

// IsElection, IsAnnounce classify a message type for counting.
func (a Algorithm) IsElection(t string) bool { return slices.Contains(a.ElectionTypes, t) }
func (a Algorithm) IsAnnounce(t string) bool { return slices.Contains(a.AnnounceTypes, t) }

var (
	registryMu sync.RWMutex
	registry   = map[string]Algorithm{}
)

// Register adds an algorithm; it panics on a duplicate or incomplete entry,
// which is a programming error found at init. It fills the quorum modes
// left empty (see Algorithm.Quorums).
func Register(a Algorithm) {
	if a.Name == "" || a.New == nil || a.Claims == nil {
		panic(fmt.Sprintf("election.Register: %q lacks a name, constructor or claims", a.Name))
	}
	if err := a.complete(); err != nil {
		panic("election.Register: " + a.Name + ": " + err.Error())
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[a.Name]; dup {
		panic("election.Register: duplicate algorithm " + a.Name)
	}
	registry[a.Name] = a
}

// complete fills the defaults of a registration and checks it holds
// together: known quorum modes, a default among them, options with
// distinct names and defaults of their kind.
func (a *Algorithm) complete() error {
	if len(a.Quorums) == 0 {
		a.Quorums = []QuorumMode{NoQuorum}
	}
	for _, q := range a.Quorums {
		if q != NoQuorum && q != Majority {
			return fmt.Errorf("quorum mode %q is not none or majority", q)
		}
	}
	if a.DefaultQuorum == QuorumDefault {
		a.DefaultQuorum = a.Quorums[0]
	}
	if !slices.Contains(a.Quorums, a.DefaultQuorum) {
		return fmt.Errorf("default quorum %s is not among its modes %s", a.DefaultQuorum.Text(), quorumList(a.Quorums))
	}
	seen := map[string]bool{}
	for i, o := range a.Options {
		if err := o.check(); err != nil {
			return err
		}
		if seen[o.Name] {
			return fmt.Errorf("option %s declared twice", o.Name)
		}
		seen[o.Name] = true
		a.Options[i].Default, _ = o.Parse(o.Default) // canonical text
	}
	return nil
}

// Lookup finds an algorithm by name; the error lists the valid names.
func Lookup(name string) (Algorithm, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	a, ok := registry[name]
	if !ok {
		return Algorithm{}, fmt.Errorf("unknown algorithm %q (known: %s)", name, strings.Join(namesLocked(), ", "))
	}
	return a, nil
}

// Algorithms returns every registered algorithm, sorted by name.
func Algorithms() []Algorithm {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Algorithm, 0, len(registry))
	for _, n := range namesLocked() {
		out = append(out, registry[n])
	}
	return out
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New looks up name and builds a machine for cfg, resolving its quorum
// mode and options (Algorithm.Resolve).
func New(name string, cfg Config) (Machine, error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if cfg.Quorum, cfg.Options, err = a.Resolve(cfg.Quorum, cfg.Options); err != nil {
		return nil, err
	}
	cfg.Timing = cfg.Timing.WithDefaults()
	cfg, err = cfg.WithRing()
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a.New(cfg)
}
