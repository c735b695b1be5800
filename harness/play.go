package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Player plays scenario steps on a started backend, one at a time. It is
// the one path by which a fault schedule reaches a backend, whoever wrote
// it: Run plays a scenario file's steps with it, and the explorer plays the
// steps it draws (and shrinks) with it on the simulator, so a schedule means
// the same thing in both.
type Player struct {
	b       chaos.Backend
	members []election.NodeID
	quorum  election.QuorumMode
	timing  election.Timing
	// rng makes every random target choice (one, minority, ...).
	rng         *rand.Rand
	checkpoints []time.Time
}

// NewPlayer plays on b, a backend already started with cluster c; seed
// drives the random target choices.
func NewPlayer(b chaos.Backend, c scenario.Cluster, seed int64) *Player {
	return &Player{
		b: b, members: c.IDs, quorum: c.Quorum, timing: c.Timing.WithDefaults(),
		rng: rand.New(rand.NewPCG(uint64(seed), 0x5ce7a110)),
	}
}

// Checkpoints are the instants at which the cluster was expected settled:
// the end of each passed stable wait, and each passed expectation about
// every live node's leader. agreement and bully-max are judged there.
func (p *Player) Checkpoints() []time.Time { return p.checkpoints }

// Play runs one step and fills sr (its resolved targets, the expectation's
// outcome) unless sr is nil. The error is for a step that could not be carried out (a
// target that cannot be resolved, a fault the backend refused, a backend
// error); a failed expectation is not an error, it is in sr.Expect.
func (p *Player) Play(ctx context.Context, st scenario.Step, sr *StepResult) error {
	record := sr != nil
	if !record {
		sr = &StepResult{} // the waits and expectations write to one
	}
	switch st.Op {
	case scenario.OpWait:
		if st.Stable {
			return p.waitStable(ctx, st, sr)
		}
		// A fixed wait: nothing can end it early.
		_, err := p.b.Await(ctx, st.Duration, nil)
		return err
	case scenario.OpExpect:
		return p.expect(ctx, st, sr)
	}
	if st.Fault == nil {
		return fmt.Errorf("step %s has no fault", st.Op)
	}
	// A checkpoint judges the state at its instant. In virtual time a
	// fault could land on that very instant and be judged as part of the
	// settled state; a millisecond keeps them apart.
	if n := len(p.checkpoints); n > 0 && !p.b.Now().After(p.checkpoints[n-1]) {
		if _, err := p.b.Await(ctx, time.Millisecond, nil); err != nil {
			return err
		}
	}
	f, err := p.Resolve(*st.Fault)
	if err != nil {
		return err
	}
	if record { // the explorer plays thousands of faults a second and describes few
		sr.Resolved = ResolvedText(f)
	}
	if err := p.b.Apply(ctx, f, st.Fault.TargetText()); err != nil {
		return fmt.Errorf("%s: %w", st.Op, err)
	}
	return nil
}

// Resolve resolves f against the backend's state now, with the player's
// random source: what Play would apply.
func (p *Player) Resolve(f chaos.Spec) (chaos.Fault, error) {
	return f.Resolve(p.peek(), p.members, p.rng)
}

// peeker is a backend that lends its live state to a caller that only
// reads it before the backend moves on (the simulator's Peek).
type peeker interface{ Peek() chaos.State }

// peek is the backend's state for a read at once: lent when the backend
// can, else a copy. Resolving a target only reads the state, and the
// explorer resolves thousands of faults a second on the simulator, where
// the copy was a tenth of everything allocated.
func (p *Player) peek() chaos.State {
	if b, ok := p.b.(peeker); ok {
		return b.Peek()
	}
	return p.b.State()
}

// ResolvedText says what a resolved fault touches, as a step's result
// shows it: "node 3", "nodes {1,2}", "{1,2}|{3,4,5}", "2 links cut"; empty
// for a fault of the whole cluster.
func ResolvedText(f chaos.Fault) string {
	switch {
	case len(f.Groups) > 0:
		var b []byte
		for i, g := range f.Groups {
			if i > 0 {
				b = append(b, '|')
			}
			b = appendIDs(b, g)
		}
		return string(b)
	case len(f.Links) > 0:
		return strconv.Itoa(len(f.Links)) + " links cut"
	case len(f.Nodes) == 1:
		return "node " + strconv.Itoa(int(f.Nodes[0]))
	case len(f.Nodes) > 1:
		return string(appendIDs([]byte("nodes "), f.Nodes))
	}
	return ""
}

// settle is how long a stable state must last before wait: stable accepts
// it: two heartbeats, so that a view recorded a moment before a node's
// election message arrived does not pass for agreement.
func (p *Player) settle() time.Duration { return 2 * p.timing.Heartbeat }

func (p *Player) waitStable(ctx context.Context, st scenario.Step, sr *StepResult) error {
	stable := func(s chaos.State) bool { return Stable(s, p.members, p.quorum) }
	t0 := p.b.Now()
	deadline := t0.Add(st.Within)
	er := &ExpectResult{Step: sr.Index, Line: st.Line, Expect: "stable", Within: ms(st.Within)}
	sr.Expect = er
	for {
		left := deadline.Sub(p.b.Now())
		if left <= 0 {
			break
		}
		ok, err := p.b.Await(ctx, left, stable)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		at := p.b.Now()
		broke, err := p.b.Await(ctx, p.settle(), func(s chaos.State) bool { return !stable(s) })
		if err != nil {
			return err
		}
		if !broke {
			er.Pass, er.At, er.After = true, at, ms(at.Sub(t0))
			er.Seen = p.b.State().Describe(p.members)
			p.checkpoints = append(p.checkpoints, p.b.Now())
			return nil
		}
	}
	er.At = p.b.Now()
	er.After = ms(er.At.Sub(t0))
	er.Seen = "not stable within " + st.Within.String() + ": " + p.b.State().Describe(p.members)
	return nil
}

func (p *Player) expect(ctx context.Context, st scenario.Step, sr *StepResult) error {
	e := st.Expect
	er := &ExpectResult{Step: sr.Index, Line: st.Line, Expect: e.String(), Within: ms(e.Within)}
	sr.Expect = er
	t0 := p.b.Now()
	ok, err := p.b.Await(ctx, e.Within, func(s chaos.State) bool { return Holds(e, s, p.members) })
	if err != nil {
		return err
	}
	s := p.b.State()
	er.At = p.b.Now()
	er.Pass, er.After = ok, ms(er.At.Sub(t0))
	if ok && e.For > 0 {
		// It held; now it must keep holding for e.For.
		broke, err := p.b.Await(ctx, e.For, func(s chaos.State) bool { return !Holds(e, s, p.members) })
		if err != nil {
			return err
		}
		if broke {
			s = p.b.State()
			er.Pass = false
			er.Seen = fmt.Sprintf("held after %s but broke %s later: %s", millis.Float(er.After), millis.Of(p.b.Now().Sub(er.At)), explain(e, s, p.members))
			return nil
		}
		s = p.b.State()
	}
	if ok {
		er.Seen = s.Describe(p.members)
		// An expectation about every live node is a moment the cluster
		// is meant to be settled: agreement and bully-max judge it.
		if (e.On == scenario.OnAllLive || e.On == scenario.OnAll) && (e.Kind == scenario.ExpectLeader || e.Kind == scenario.ExpectHighest || e.Kind == scenario.ExpectAny) {
			p.checkpoints = append(p.checkpoints, p.b.Now())
		}
	} else {
		er.Seen = explain(e, s, p.members)
	}
	return nil
}
