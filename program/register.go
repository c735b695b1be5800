package program

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/cpupin"
)

// Options bound what a program may cost the runtime.
type Options struct {
	// Timeout is how long a program has to answer one event; one that
	// takes longer is treated as crashed. Zero: DefaultTimeout. A new
	// process has at least StartAllowance for its first answer.
	Timeout time.Duration
}

// DefaultTimeout is the answer bound when Options.Timeout is zero: long
// enough for an answer on a loaded machine, short enough that a hung
// program is noticed.
const DefaultTimeout = 5 * time.Second

// StartAllowance is the least time a newly started process has for its
// first answer, whatever Timeout says: that answer also pays for loading
// an interpreter (python3, node, a JVM), which on a busy machine with
// many processes starting at once was seen to take longer than
// DefaultTimeout. Later answers have Timeout.
const StartAllowance = 20 * time.Second

// Program is a command registered as an algorithm: the processes that run
// it, idle between machines, and what its probe start answered.
type Program struct {
	name    string
	argv    []string
	quorum  election.QuorumMode
	timeout time.Duration

	mu       sync.Mutex
	idle     []*process
	launched int
	// live are the processes started and not yet seen ended, idle or
	// playing a machine: CloseAll ends them all.
	live []*process
}

// Launched is how many processes of the program were started so far: one
// per node slot of each simulator that runs it (the explorer has one per
// worker), plus one for each process a failure ended.
func (p *Program) Launched() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.launched
}

// Name is the program's name in the registry (program-bully, ...).
func (p *Program) Name() string { return p.name }

// Timeout is the bound on each of its answers (Options.Timeout).
func (p *Program) Timeout() time.Duration { return p.timeout }

// Command is the command line that runs it.
func (p *Program) Command() []string { return slices.Clone(p.argv) }

var (
	programsMu sync.Mutex
	programs   = map[string]*Program{} // by key(argv, quorum)
)

func key(argv []string, q election.QuorumMode) string {
	return q.Text() + "\x00" + strings.Join(argv, "\x00")
}

// Register makes the command argv an algorithm of the registry, in quorum
// mode q (election.QuorumDefault: none), and returns its name. It starts
// the program once and sends it a probe start (node members[0] of the
// given members, timing and quorum mode), whose answer gives the claims
// and the message classes. Registering the same command and mode again
// returns the same name. The program's processes live until Close.
func Register(argv []string, q election.QuorumMode, members []election.NodeID, timing election.Timing, o Options) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", fmt.Errorf("program: no command")
	}
	if q == election.QuorumDefault {
		q = election.NoQuorum
	}
	if len(members) == 0 {
		members = []election.NodeID{1, 2, 3}
	}
	programsMu.Lock()
	defer programsMu.Unlock()
	if p, ok := programs[key(argv, q)]; ok {
		return p.name, nil
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	p := &Program{name: freeName(argv, q), argv: slices.Clone(argv), quorum: q, timeout: o.Timeout}
	a, err := p.probe(members, timing.WithDefaultsFor(len(members)))
	if err != nil {
		return "", err
	}
	election.Register(election.Algorithm{
		Name:          p.name,
		Title:         "the program " + strings.Join(argv, " ") + " (docs/protocol.md)",
		Topology:      "complete",
		New:           p.newMachine,
		ElectionTypes: a.ElectionTypes,
		AnnounceTypes: a.AnnounceTypes,
		Claims:        func(election.QuorumMode) []election.Property { return slices.Clone(a.Claims) },
		Quorums:       []election.QuorumMode{q},
		DefaultQuorum: q,
		QuorumWhy:     "a program is registered for one quorum mode; register it again for another",
		// A program may well draw only from its seed, but nothing here
		// can hold it to that: the explorer checks that its failing
		// schedules replay (explore.CheckDeterminism).
		Seeded: false,
		// Its failures are findings (check.NoProgramFailure).
		External: true,
	})
	programs[key(argv, q)] = p
	return p.name, nil
}

// Lookup is the registered program of a name, if it is one.
func Lookup(name string) (*Program, bool) {
	programsMu.Lock()
	defer programsMu.Unlock()
	for _, p := range programs {
		if p.name == name {
			return p, true
		}
	}
	return nil, false
}

// freeName is a registry name for argv: "program-" and the last word of
// the command that is not a flag, without its extension (bully.py:
// program-bully), with -majority for that mode, numbered when taken.
func freeName(argv []string, q election.QuorumMode) string {
	word := argv[0]
	for _, a := range slices.Backward(argv) {
		if !strings.HasPrefix(a, "-") {
			word = a
			break
		}
	}
	word = strings.TrimSuffix(filepath.Base(word), filepath.Ext(word))
	base := "program-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, word)
	if q == election.Majority {
		base += "-majority"
	}
	name := base
	for i := 2; ; i++ {
		if _, err := election.Lookup(name); err != nil {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// probe starts the program and sends one start, keeping the process idle
// for the first machine; the answer holds the claims.
func (p *Program) probe(members []election.NodeID, timing election.Timing) (Answer, error) {
	proc, err := p.get()
	if err != nil {
		return Answer{}, fmt.Errorf("program %s: %w", strings.Join(p.argv, " "), err)
	}
	cfg := election.Config{ID: members[0], Members: members, Quorum: p.quorum, Options: election.Options{}, Timing: timing}
	a, err := proc.exchange(election.Event{Kind: election.EventStart}, InitOf(cfg))
	if err != nil {
		return Answer{}, fmt.Errorf("program %s: the probe start: %w", strings.Join(p.argv, " "), err)
	}
	for i, c := range a.Claims {
		if !slices.Contains(knownProperties, c) {
			proc.kill()
			return Answer{}, fmt.Errorf("program %s: the probe start: claims[%d]: %q is not a property (want one of %v)", strings.Join(p.argv, " "), i, c, knownProperties)
		}
	}
	p.put(proc)
	return a, nil
}

var knownProperties = []election.Property{election.Agreement, election.HighestWins, election.NoSplitBrain, election.EpochSafety, election.Liveness}

// newMachine is the Algorithm's New: the next machine of cfg's node slot,
// on an idle process or a new one.
func (p *Program) newMachine(cfg election.Config) (election.Machine, error) {
	proc, err := p.get()
	if err != nil {
		return nil, fmt.Errorf("program %s: node %d: %w", p.name, cfg.ID, err)
	}
	return &machine{prog: p, proc: proc, cfg: cfg}, nil
}

// get takes an idle process that runs where the caller runs, or starts
// one there: a caller pinned to a CPU (the explorer's workers,
// internal/cpupin) keeps its exchanges on that CPU, and a new
// process inherits the caller's CPUs when it is started.
func (p *Program) get() (*process, error) {
	where := cpupin.Current()
	p.mu.Lock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if proc := p.idle[i]; proc.cpus == where {
			p.idle = slices.Delete(p.idle, i, i+1)
			p.mu.Unlock()
			return proc, nil
		}
	}
	p.launched++
	p.mu.Unlock()
	proc, err := launch(p.argv, p.timeout)
	if err != nil {
		return nil, err
	}
	proc.cpus = where
	p.mu.Lock()
	p.live = slices.DeleteFunc(p.live, (*process).ended)
	p.live = append(p.live, proc)
	p.mu.Unlock()
	return proc, nil
}

// put keeps an idle process for the next machine.
func (p *Program) put(proc *process) {
	p.mu.Lock()
	p.idle = append(p.idle, proc)
	p.mu.Unlock()
}

// Close ends the program's idle processes. It stays registered: a later
// machine starts a new process. (A process still playing a machine goes
// idle when released; every process also ends by itself when this one
// exits, as its stdin closes.)
func (p *Program) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, proc := range idle {
		proc.kill()
	}
}

// CloseAll ends every process of every registered program, idle or still
// playing a machine, with the process groups they lead (a command calls
// it before it exits, a test in its cleanup): nothing a program started
// outlives the run.
func CloseAll() {
	programsMu.Lock()
	defer programsMu.Unlock()
	for _, p := range programs {
		p.mu.Lock()
		live := p.live
		p.live, p.idle = nil, nil
		p.mu.Unlock()
		for _, proc := range live {
			proc.kill()
		}
	}
}
