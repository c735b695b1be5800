package chaostest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// fakeWorld is a backend reduced to what chaos.Carry asks of one: it
// records what Carry did, so that the shared apply sequence is tested once
// here, and each backend's hooks by Run against a real cluster.
type fakeWorld struct {
	state      chaos.State
	recs       []history.Record
	refuse     error
	reconcile  error
	reconciled []chaos.Fault
	// sawApplied: when Reconcile ran, the model already held the fault.
	sawApplied bool
}

func (w *fakeWorld) Name() string             { return "fake" }
func (w *fakeWorld) Now() time.Time           { return history.SimOrigin }
func (w *fakeWorld) Record(r history.Record)  { w.recs = append(w.recs, r) }
func (w *fakeWorld) Refuse(chaos.Fault) error { return w.refuse }
func (w *fakeWorld) phases() []history.FaultPhase {
	var out []history.FaultPhase
	for _, r := range w.recs {
		out = append(out, r.Fault.Phase)
	}
	return out
}

func (w *fakeWorld) LockModel() (*chaos.State, []election.NodeID) { return &w.state, Members }
func (w *fakeWorld) UnlockModel(chaos.Fault, bool)                {}

func (w *fakeWorld) Reconcile(_ context.Context, f chaos.Fault) error {
	w.reconciled = append(w.reconciled, f)
	w.sawApplied = len(f.Nodes) > 0 && !w.state.Up[f.Nodes[0]]
	return w.reconcile
}

func newFake() *fakeWorld { return &fakeWorld{state: chaos.Steady(Members, 5)} }

func TestCarryRecordsInvokeThenOKAndReconcilesTheAppliedModel(t *testing.T) {
	w := newFake()
	if err := chaos.Carry(context.Background(), w, kill(5, 9), "leader"); err == nil || !strings.Contains(err.Error(), "fake: kill leader: kill: node 9 is not a member") {
		t.Fatalf("a stranger: error %v", err)
	}
	if len(w.reconciled) != 0 || !w.state.Up[5] {
		t.Fatalf("a fault Decide refused changed the model (up %v) or was reconciled (%v)", w.state.Up, w.reconciled)
	}
	w.recs = nil
	if err := chaos.Carry(context.Background(), w, kill(5), "leader"); err != nil {
		t.Fatal(err)
	}
	if got := w.phases(); len(got) != 2 || got[0] != history.FaultInvoke || got[1] != history.FaultOK {
		t.Fatalf("phases %v, want invoke then ok", got)
	}
	if len(w.reconciled) != 1 || !w.sawApplied {
		t.Fatalf("reconciled %v (model applied before: %v), want the kill once, after State.Apply", w.reconciled, w.sawApplied)
	}
	if err := chaos.Carry(context.Background(), w, kill(5), "5"); err != nil {
		t.Fatal(err)
	}
	if note := w.recs[len(w.recs)-1].Fault.Note; note != "no-op: node 5 is already down" {
		t.Errorf("ok record's note %q, want Decide's", note)
	}
}

func TestCarryRefusedOrFailedRecordsFailAndTheError(t *testing.T) {
	w := newFake()
	w.refuse = chaos.Unsupported(chaos.Kill, "fake")
	err := chaos.Carry(context.Background(), w, kill(5), "5")
	var un *chaos.UnsupportedError
	if !errors.As(err, &un) || !w.state.Up[5] || len(w.reconciled) != 0 {
		t.Fatalf("refused: error %v, node 5 up %v, reconciled %v; want Unsupported and nothing changed", err, w.state.Up[5], w.reconciled)
	}
	if r := w.recs[len(w.recs)-1].Fault; r.Phase != history.FaultFail || !strings.Contains(r.Error, "unsupported on fake") {
		t.Fatalf("last record %+v, want fail with the error", r)
	}
	w = newFake()
	w.reconcile = errors.New("engine gone")
	if err := chaos.Carry(context.Background(), w, kill(4), "4"); err == nil || !strings.Contains(err.Error(), "engine gone") {
		t.Fatalf("a failed hook: error %v", err)
	}
	if got := w.phases(); len(got) != 2 || got[1] != history.FaultFail {
		t.Fatalf("phases %v, want invoke then fail", got)
	}
}
