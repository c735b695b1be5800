package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// A World is what a backend gives Carry, the one apply sequence every
// backend shares: its clock and history, its world model under its own
// lock, what it cannot do, and its reconcile hook — how it makes the
// cluster match the model once a fault has changed it.
type World interface {
	// Name is the backend's ("sim", "docker"), for errors.
	Name() string
	// Now is the backend's clock: the fault records carry it.
	Now() time.Time
	// Record appends r to the run's history.
	Record(r history.Record)
	// Refuse returns why f cannot be carried out here, before anything
	// changes: a kind the backend has no hook for (Unsupported), or a
	// state it cannot act in (not started). nil: go on.
	Refuse(f Fault) error
	// Model runs change on the world model and the membership, under the
	// backend's lock. change returns the fault it applied (nil: none); the
	// backend may note it under the same lock (the container backend
	// marks its nodes busy until Reconcile returns).
	Model(change func(s *State, members []election.NodeID) *Fault)
	// Reconcile makes the world match the model, which already holds f
	// (an Outcome's fault): the backend's only part of a fault.
	Reconcile(ctx context.Context, f Fault) error
}

// Carry applies f to w and records it, as every backend does: the invoke
// record; then Refuse, Decide against the model, State.Apply, and the
// backend's Reconcile; then the ok record (with the outcome's note: what
// was already so) or the fail record with the error, which it returns.
// target is the scenario's text for the records. The world model changes
// only when Decide accepts f and Refuse did not refuse it.
func Carry(ctx context.Context, w World, f Fault, target string) error {
	w.Record(f.Record(w.Now(), target, history.FaultInvoke, "", nil))
	out, err := carry(ctx, w, f)
	if err != nil {
		err = fmt.Errorf("%s: %s %s: %w", w.Name(), f.Op, target, err)
		w.Record(f.Record(w.Now(), target, history.FaultFail, "", err))
		return err
	}
	w.Record(f.Record(w.Now(), target, history.FaultOK, out.Note, nil))
	return nil
}

func carry(ctx context.Context, w World, f Fault) (Outcome, error) {
	if err := w.Refuse(f); err != nil {
		return Outcome{}, err
	}
	var (
		out Outcome
		err error
	)
	w.Model(func(s *State, members []election.NodeID) *Fault {
		if out, err = Decide(f, *s, members); err != nil {
			return nil
		}
		s.Apply(out.Fault, members)
		return &out.Fault
	})
	if err != nil {
		return Outcome{}, err
	}
	return out, w.Reconcile(ctx, out.Fault)
}
