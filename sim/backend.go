package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Backend is the simulator behind chaos.Backend, so the harness runs the
// same scenario files with --backend sim, and the explorer plays the
// schedules it draws through the same harness code on it. Delay and Loss
// configure the network (zero values: ScenarioNetwork, no loss). Await
// advances virtual time, so a scenario's "wait 10s" costs microseconds.
type Backend struct {
	Delay Dist
	Loss  float64
	// OmitMessages leaves send and recv records out of the history (the
	// explorer's checkers need views and faults only).
	OmitMessages bool
	// MaxMemory is the simulator's memory budget (Options.MaxMemory).
	MaxMemory int64

	sim *Sim
}

var _ chaos.Backend = (*Backend)(nil)

// ScenarioNetwork is the message delay of a scenario run in the simulator
// (ringleader run --backend sim, and every schedule the explorer plays):
// uniform between 0.5 and 5 ms, so that messages from different senders
// interleave differently from seed to seed, as they do between containers.
var ScenarioNetwork = Uniform(500*time.Microsecond, 5*time.Millisecond)

// Name is "sim".
func (b *Backend) Name() string { return "sim" }

// Sim is the running simulator (nil before Start).
func (b *Backend) Sim() *Sim { return b.sim }

// Start builds the cluster and boots every node at virtual time 0.
func (b *Backend) Start(ctx context.Context, spec chaos.ClusterSpec, sink history.Sink) error {
	if b.sim != nil {
		return fmt.Errorf("sim backend: cluster %s already started", spec.Name)
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	s, err := New(Options{
		Algorithm:    spec.Algorithm,
		Members:      spec.Members,
		Quorum:       spec.Quorum,
		Options:      spec.Options,
		Timing:       spec.Timing,
		Seed:         spec.Seed,
		Delay:        b.delay(),
		Loss:         b.Loss,
		OmitMessages: b.OmitMessages,
		MaxMemory:    b.MaxMemory,
	}, sink)
	if err != nil {
		return err
	}
	b.sim = s
	s.state.Placement = spec.Placement
	s.Start()
	return s.Err()
}

// sameSetup reports whether q and opts resolve to the quorum mode and
// options the simulator was built with.
func (s *Sim) sameSetup(q election.QuorumMode, opts election.Options) bool {
	q, opts, err := s.alg.Resolve(q, opts)
	return err == nil && q == s.opts.Quorum && maps.Equal(opts, s.opts.Options)
}

// NewRun plays a new run on this backend: the cluster spec describes, booted
// at virtual time 0 with a fresh history in sink, exactly as Start would
// give a new Backend. When spec has the shape of the cluster already built
// (algorithm, members, quorum, timing) the simulator is Reset rather than
// built anew, keeping its memory: how the explorer runs thousands of
// schedules on one simulator per worker.
func (b *Backend) NewRun(ctx context.Context, spec chaos.ClusterSpec, sink history.Sink) error {
	if s := b.sim; s != nil && s.alg.Name == spec.Algorithm && slices.Equal(s.opts.Members, spec.Members) &&
		s.sameSetup(spec.Quorum, spec.Options) && s.opts.Timing == spec.Timing &&
		s.opts.Delay == b.delay() && s.opts.Loss == b.Loss && s.opts.OmitMessages == b.OmitMessages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.Reset(spec.Seed, sink); err != nil {
			return err
		}
		s.state.Placement = spec.Placement
		s.Start()
		return s.Err()
	}
	if b.sim != nil {
		b.sim.Close()
		b.sim = nil
	}
	return b.Start(ctx, spec, sink)
}

// delay is the message delay: Delay, or ScenarioNetwork when unset.
func (b *Backend) delay() Dist {
	if b.Delay == (Dist{}) {
		return ScenarioNetwork
	}
	return b.Delay
}

func (b *Backend) started() error {
	if b.sim == nil {
		return fmt.Errorf("sim backend: not started")
	}
	return nil
}

// Apply injects f at the current virtual time.
func (b *Backend) Apply(ctx context.Context, f chaos.Fault, target string) error {
	if err := b.started(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.sim.Apply(f, target)
}

// Await runs virtual time until cond holds or d has passed.
func (b *Backend) Await(ctx context.Context, d time.Duration, cond func(chaos.State) bool) (bool, error) {
	if err := b.started(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if cond == nil { // a fixed wait: nothing to look at on the way
		b.sim.RunFor(d)
		return false, b.sim.Err()
	}
	// cond gets a snapshot, not the live state: a harness may keep it.
	ok := b.sim.RunUntil(d, func(chaos.State) bool { return cond(b.sim.State()) })
	return ok, b.sim.Err()
}

// Now is SimOrigin plus virtual time.
func (b *Backend) Now() time.Time {
	if b.sim == nil {
		return history.SimOrigin
	}
	return b.sim.Time()
}

// Peek is the simulated cluster's live state, not a copy: for a caller
// that only reads it before the simulation moves on (the explorer's
// generator, between two steps). It must not be kept or modified.
func (b *Backend) Peek() chaos.State {
	if b.sim == nil {
		return chaos.State{}
	}
	return *b.sim.model()
}

// State is a snapshot of the simulated cluster.
func (b *Backend) State() chaos.State {
	if b.sim == nil {
		return chaos.State{}
	}
	return b.sim.State()
}

// Close releases the machines (a program's processes go back to its
// pool); nothing else to remove: the cluster is memory. It is idempotent.
func (b *Backend) Close(ctx context.Context) error {
	if b.sim != nil {
		b.sim.Close()
	}
	return nil
}
