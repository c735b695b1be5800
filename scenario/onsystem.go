package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// OnSystem is sc, written for a system's model algorithm (a raft
// scenario, one the explorer saved, say), made to run against the real
// server: the same members, steps, checkers and verdicts, on a cluster of
// sys whose options are the model's timing and options mapped
// (system.FromModel). What has no counterpart on the server — another
// algorithm, an option the server cannot change, a timing it refuses, a
// fault it cannot take — is an error naming the file and, for a step, its
// line, before anything starts.
func OnSystem(sc *Scenario, sys *system.System) (*Scenario, error) {
	c := sc.Cluster
	switch {
	case c.System != nil:
		return nil, fmt.Errorf("%s: already runs system %s; --system maps a scenario written for an algorithm", sc.File, c.System.Name)
	case len(c.Program) > 0:
		return nil, fmt.Errorf("%s: runs a program; --system maps a scenario written for an algorithm (%s)", sc.File, sys.ModelCluster(0, nil))
	}
	given, err := sys.FromModel(c.Algorithm, c.Options, c.Timing.WithDefaultsFor(len(c.IDs)))
	if err != nil {
		return nil, fmt.Errorf("%s: cluster: cannot run on system %s: %w", sc.File, sys.Name, err)
	}
	opts, err := sys.Algorithm().ResolveOptions(given)
	if err != nil {
		return nil, fmt.Errorf("%s: cluster: system %s: %w", sc.File, sys.Name, err)
	}
	hb, el, err := sys.Timings(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: cluster: %w", sc.File, err)
	}
	own := *sys
	out := *sc
	out.Cluster = Cluster{
		Algorithm: sys.Name, IDs: c.IDs, Quorum: election.Majority, Options: opts,
		Timing: election.Timing{Heartbeat: hb, Suspicion: el, Answer: hb},
		System: &own, SystemOptions: given,
	}
	var errs Errors
	for i, st := range sc.Steps {
		if why := sys.Refusal(string(st.Op)); why != "" && st.Op.IsFault() {
			errs = append(errs, &Error{File: sc.File, Line: st.Line, Field: fmt.Sprintf("steps[%d].%s", i+1, st.Op),
				Msg: fmt.Sprintf("system %s cannot take a %s fault: %s", sys.Name, st.Op, why)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &out, nil
}

// Mapping says in one line how OnSystem mapped sc's cluster: the model's
// timing and options, the server's options they became, and what of the
// model has no counterpart.
func Mapping(model, onSystem *Scenario) string {
	m, s := model.Cluster, onSystem.Cluster
	t := m.Timing.WithDefaultsFor(len(m.IDs))
	var given []string
	for _, o := range s.System.Options {
		if v, ok := s.SystemOptions[o.Name]; ok {
			given = append(given, o.Name+"="+v)
		}
	}
	line := fmt.Sprintf("%s {heartbeat %v, suspicion %v, %s} -> %s %s {%s}", m.Algorithm, t.Heartbeat, t.Suspicion, optionsText(m.Options), s.System.Name, s.System.Version, strings.Join(given, ", "))
	if u := s.System.Model.Unmapped; len(u) > 0 {
		line += "; not mapped: " + strings.Join(u, "; ")
	}
	return line
}

func optionsText(o election.Options) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(o)) {
		out = append(out, k+" "+o[k])
	}
	return strings.Join(out, ", ")
}
