package docker

import (
	"context"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestGatedClusterElectsOnlyOnceOpened: a gated cluster's nodes boot and
// take faults but elect nobody until Open. Node 3, started first, would
// have led long before the last container was up; gated, nobody views a
// leader. A node paused across Open starts when it resumes, and one
// restarted after Open (its container keeps RINGLEADER_GATED) is started
// by the backend too, or it would never view a leader again.
func TestGatedClusterElectsOnlyOnceOpened(t *testing.T) {
	dockertest.Parallel(t)
	b, _ := startSpec(t, func(run string) chaos.ClusterSpec {
		s := spec(run, 3)
		s.Gated = true
		return s
	})
	apply(t, b, chaos.Fault{Op: chaos.Pause, Nodes: ids(2)})
	st := b.State()
	for _, id := range ids(1, 2, 3) {
		if l := st.Views[id].Leader; l != election.None {
			t.Fatalf("before Open, node %d views leader %d: %s", id, l, st.Describe(b.spec.Members))
		}
	}
	if err := b.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	await(t, b, "opened -> 1 and 3 see leader 3", allSee(ids(1, 3), 3))
	apply(t, b, chaos.Fault{Op: chaos.Resume, Nodes: ids(2)})
	await(t, b, "resume 2 -> all see leader 3", allSee(ids(1, 2, 3), 3))
	apply(t, b, chaos.Fault{Op: chaos.Kill, Nodes: ids(3)})
	await(t, b, "kill 3 -> 1 and 2 see leader 2", allSee(ids(1, 2), 2))
	apply(t, b, chaos.Fault{Op: chaos.Restart, Nodes: ids(3)})
	await(t, b, "restart 3 -> all see leader 3", allSee(ids(1, 2, 3), 3))
	if err := b.Open(context.Background()); err != nil {
		t.Fatalf("a second Open: %v", err)
	}
}
