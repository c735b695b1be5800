package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Attacher is a backend that can adopt a cluster that is already running
// instead of starting one: `ringleader fault`, `ringleader run --attach`
// reach a running cluster through it, whatever world it runs in.
type Attacher interface {
	Backend
	// Attach adopts the running cluster labelled run and returns its
	// shape. It reads back what is in force — the nodes' processes,
	// the network faults — into its State, through State.Apply, and
	// records into sink (nil: nowhere) from the moment it attaches:
	// what every node views then, and everything after, as after Start.
	// Close then detaches and leaves the cluster, and the faults in
	// force, as they are.
	Attach(ctx context.Context, run string, sink history.Sink) (ClusterSpec, error)
}

// Attached is the backend of a run that plays a scenario on a cluster that
// is already running (`ringleader run --attach`): its Start adopts the
// cluster labelled Run instead of starting one, after checking that it is
// the cluster the scenario describes, and its Close leaves it running.
// The history starts when it attaches, with what every node views then.
type Attached struct {
	Attacher
	Run string
}

// Start adopts the running cluster and refuses it, saying why, when its
// shape is not spec's: another algorithm, quorum mode, membership or
// timing would make the scenario's deadlines and checkers mean something
// else.
func (a Attached) Start(ctx context.Context, spec ClusterSpec, sink history.Sink) error {
	got, err := a.Attach(ctx, a.Run, sink)
	if err != nil {
		return err
	}
	if why := ShapeMismatch(got, spec); why != "" {
		return fmt.Errorf("%s: the running cluster %s is not the scenario's: %s", a.Name(), a.Run, why)
	}
	if _, running := a.Placement(); spec.Placement != nil && !samePlacement(running, spec.Placement) {
		return fmt.Errorf("%s: the running cluster %s is not the scenario's: its nodes are placed %s, the scenario's cluster.placement says %s", a.Name(), a.Run, placementText(running), spec.Placement)
	}
	return nil
}

// Placement is the attached cluster's, when it spans engines (Placed):
// results and reports then say which engine holds each node, as for a
// cluster the run started.
func (a Attached) Placement() ([]string, Placement) {
	if p, ok := a.Attacher.(Placed); ok {
		return p.Placement()
	}
	return nil, nil
}

// samePlacement: every engine holds the same nodes in both, in any order.
func samePlacement(a, b Placement) bool {
	return slices.EqualFunc(a, b, func(x, y []election.NodeID) bool {
		return slices.Equal(slices.Sorted(slices.Values(x)), slices.Sorted(slices.Values(y)))
	})
}

func placementText(p Placement) string {
	if len(p) == 0 {
		return "on one engine"
	}
	return p.String()
}

// resolved is s with its quorum mode and options resolved to its
// algorithm's defaults where left out, so that "not given" and the default
// compare equal; s as it is when it names no known algorithm or asks for
// what the algorithm does not take (the comparison then shows it).
func resolved(s ClusterSpec) ClusterSpec {
	if a, err := election.Lookup(s.Algorithm); err == nil {
		if q, o, err := a.Resolve(s.Quorum, s.Options); err == nil {
			s.Quorum, s.Options = q, o
		}
	}
	return s
}

// ShapeMismatch says how a running cluster differs from the cluster a
// scenario wants, or "" when they match. Names and seeds do not matter.
func ShapeMismatch(running, want ClusterSpec) string {
	running, want = resolved(running), resolved(want)
	var diffs []string
	if running.Algorithm != want.Algorithm {
		diffs = append(diffs, fmt.Sprintf("it runs %s, the scenario wants %s", runsText(running), runsText(want)))
	}
	if running.Quorum != want.Quorum {
		diffs = append(diffs, fmt.Sprintf("its quorum is %s, the scenario's %s (QUORUM=%s make up starts one that matches)", running.Quorum, want.Quorum, want.Quorum))
	}
	if !maps.Equal(running.Options, want.Options) {
		diffs = append(diffs, fmt.Sprintf("its options are %q, the scenario's %q (OPTIONS=%q make up starts one that matches)", running.Options.String(), want.Options.String(), want.Options.String()))
	}
	if !slices.Equal(running.Members, want.Members) {
		diffs = append(diffs, fmt.Sprintf("its members are %s, the scenario's %s", IDList(running.Members), IDList(want.Members)))
	}
	if rt, wt := running.Timing.WithDefaults(), want.Timing.WithDefaults(); rt != wt {
		diffs = append(diffs, fmt.Sprintf("its timing is heartbeat %v, suspicion %v, answer %v; the scenario's %v, %v, %v", rt.Heartbeat, rt.Suspicion, rt.Answer, wt.Heartbeat, wt.Suspicion, wt.Answer))
	}
	return strings.Join(diffs, "; ")
}

// runsText names what a cluster runs: its algorithm, or its program's
// command line and the name it is registered under.
func runsText(s ClusterSpec) string {
	if len(s.Program) > 0 {
		return fmt.Sprintf("the program %q (%s)", strings.Join(s.Program, " "), s.Algorithm)
	}
	return s.Algorithm
}
