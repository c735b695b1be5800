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
	// LockModel takes the backend's lock and returns its world model and
	// membership; Carry decides and applies the fault on them and calls
	// UnlockModel with the fault it applied (ok false: none), which the
	// backend may note before it unlocks (the container backend marks its
	// nodes busy until Reconcile returns). Two calls rather than a
	// closure: the explorer applies thousands of faults a second, and a
	// closure through an interface escapes to the heap.
	LockModel() (*State, []election.NodeID)
	UnlockModel(applied Fault, ok bool)
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
	s, members := w.LockModel()
	out, err := Decide(f, *s, members)
	if err != nil {
		w.UnlockModel(Fault{}, false)
		return Outcome{}, err
	}
	s.Apply(out.Fault, members)
	w.UnlockModel(out.Fault, true)
	return out, w.Reconcile(ctx, out.Fault)
}
