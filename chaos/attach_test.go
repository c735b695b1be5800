package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/history"
)

func TestShapeMismatchSaysHow(t *testing.T) {
	base := ClusterSpec{Algorithm: "bully", Members: []election.NodeID{1, 2, 3}, Timing: election.Timing{Heartbeat: 100 * time.Millisecond}}
	if why := ShapeMismatch(base, base); why != "" {
		t.Fatalf("identical: %s", why)
	}
	// Not given is the algorithm's default: bully's is none.
	none := base
	none.Quorum = election.NoQuorum
	if why := ShapeMismatch(none, base); why != "" {
		t.Fatalf("quorum none against quorum left out (bully's default): %s", why)
	}
	opts := base
	opts.Options = election.Options{"prevote": "false"}
	if why := ShapeMismatch(base, opts); !strings.Contains(why, `its options are "", the scenario's "prevote=false"`) {
		t.Errorf("options differ, but: %q", why)
	}
	other := base
	other.Quorum, other.Members, other.Algorithm = election.Majority, []election.NodeID{1, 2, 3, 4}, "ring"
	why := ShapeMismatch(base, other)
	for _, w := range []string{"runs bully, the scenario wants ring", "quorum", "[1,2,3,4]"} {
		if !strings.Contains(why, w) {
			t.Errorf("%q does not say %q", why, w)
		}
	}
	// A cluster of programs is named by its program.
	prog := base
	prog.Algorithm, prog.Program = "program-x", []string{"/program/x", "--fast"}
	if why := ShapeMismatch(prog, base); !strings.Contains(why, `runs the program "/program/x --fast" (program-x), the scenario wants bully`) {
		t.Errorf("a program against bully: %q", why)
	}
}

// placedAttacher is an Attacher whose running cluster spans two engines.
type placedAttacher struct {
	Attacher
	spec ClusterSpec
	p    Placement
}

func (a placedAttacher) Name() string { return "fake" }
func (a placedAttacher) Attach(context.Context, string, history.Sink) (ClusterSpec, error) {
	return a.spec, nil
}
func (a placedAttacher) Placement() ([]string, Placement) { return []string{"e1", "e2"}, a.p }

// TestAttachedSaysAndChecksThePlacement: run --attach on a cluster across
// engines reports its placement (results and reports say which engine
// holds each node), and a scenario whose cluster.placement differs from
// the running cluster's is refused, saying both; the same groups in
// another order are the same placement.
func TestAttachedSaysAndChecksThePlacement(t *testing.T) {
	spec := ClusterSpec{Algorithm: "bully", Members: []election.NodeID{1, 2, 3}}
	a := Attached{Attacher: placedAttacher{spec: spec, p: Placement{{1, 3}, {2}}}, Run: "r"}
	if hosts, p := a.Placement(); len(hosts) != 2 || p.String() != "[1,3] | [2]" {
		t.Errorf("Attached.Placement = %v, %v", hosts, p)
	}
	want := spec
	want.Placement = Placement{{3, 1}, {2}}
	if err := a.Start(context.Background(), want, nil); err != nil {
		t.Errorf("the same placement, in another order: %v", err)
	}
	want.Placement = Placement{{1}, {2, 3}}
	err := a.Start(context.Background(), want, nil)
	if err == nil || !strings.Contains(err.Error(), "its nodes are placed [1,3] | [2], the scenario's cluster.placement says [1] | [2,3]") {
		t.Errorf("another placement: %v", err)
	}
	one := Attached{Attacher: placedAttacher{spec: spec}, Run: "r"}
	if err := one.Start(context.Background(), want, nil); err == nil || !strings.Contains(err.Error(), "placed on one engine") {
		t.Errorf("a placement against a cluster on one engine: %v", err)
	}
}
