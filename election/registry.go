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
	// Quorum says whether the algorithm supports Majority mode.
	Quorum bool
	// SimOnly is true for algorithms that need synchrony a real network
	// cannot honestly give (the variable-time ring).
	SimOnly bool
}

// CheckQuorum reports whether a can run in mode q: every algorithm runs
// without a quorum, only some with a majority.
func (a Algorithm) CheckQuorum(q QuorumMode) error {
	if q == Majority && !a.Quorum {
		return fmt.Errorf("algorithm %s has no quorum mode (use quorum none, or an algorithm that has one)", a.Name)
	}
	return nil
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
// which is a programming error found at init.
func Register(a Algorithm) {
	if a.Name == "" || a.New == nil || a.Claims == nil {
		panic(fmt.Sprintf("election.Register: %q lacks a name, constructor or claims", a.Name))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[a.Name]; dup {
		panic("election.Register: duplicate algorithm " + a.Name)
	}
	registry[a.Name] = a
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

// New looks up name and builds a machine for cfg, checking the quorum mode
// against what the algorithm supports.
func New(name string, cfg Config) (Machine, error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if err := a.CheckQuorum(cfg.Quorum); err != nil {
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
