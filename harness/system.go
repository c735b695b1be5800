package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/system"
)

// Measured is the Expected word of a checker whose property the cluster's
// system does not promise: its verdict is shown and expected neither way.
const Measured = "measured"

// systemCheckers are what a system's run judges when the scenario names
// none: every property a server's leader election can be held to.
var systemCheckers = []check.Name{check.Agreement, check.NoSplitBrain, check.EpochSafety, check.Liveness}

// SystemResult says, in a system run's results, which server ran and how
// it was observed.
type SystemResult struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	Image   string `json:"image"`
	// File is the system file a user's own system came from.
	File string `json:"file,omitempty"`
	// Given are the options the scenario gave (passed to the server);
	// Defaults those left to the server, at the default the system
	// documents. Result.Options holds both: what was in force.
	Given    election.Options `json:"given,omitempty"`
	Defaults []string         `json:"defaults,omitempty"`
	Claims   []string         `json:"claims"`
	// ProbeIntervalMillis is the views' resolution: each member was
	// asked who leads this often, and a view is recorded when its
	// answer arrives.
	ProbeIntervalMillis float64 `json:"probe_interval_ms"`
	ProbeTimeoutMillis  float64 `json:"probe_timeout_ms"`
	// Probes counts what the probes met.
	Probes *system.Counters `json:"probes,omitempty"`
}

// systemStatser is a backend that probes a system's members.
type systemStatser interface {
	SystemStats() *system.Counters
}

// memberLogTailer is a backend that can show the end of each member's
// server log.
type memberLogTailer interface {
	MemberLogTails(ctx context.Context, lines int) string
}

// algorithmOf is what a cluster's runs are judged as: its algorithm, or
// its system seen as one.
func algorithmOf(c scenario.Cluster) (election.Algorithm, error) {
	if c.System != nil {
		return c.System.Algorithm(), nil
	}
	return election.Lookup(c.Algorithm)
}

func systemResult(c scenario.Cluster) *SystemResult {
	s := c.System
	if s == nil {
		return nil
	}
	r := &SystemResult{Name: s.Name, Title: s.Title, Version: s.Version, Image: s.Image, Given: c.SystemOptions, Claims: slices.Clone(s.Claims),
		ProbeIntervalMillis: ms(time.Duration(s.Probe.Interval)), ProbeTimeoutMillis: ms(time.Duration(s.Probe.Timeout))}
	if r.Claims == nil {
		r.Claims = []string{}
	}
	if f := s.File(); len(f) > 0 && f[len(f)-1] != ')' {
		r.File = f
	}
	for _, o := range s.Options {
		if _, given := c.SystemOptions[o.Name]; !given {
			r.Defaults = append(r.Defaults, o.Name)
		}
	}
	return r
}

// measuredOnly reports a checker that judges a property sc's system does
// not claim and the scenario states no verdict for.
func measuredOnly(sc *scenario.Scenario, n check.Name) bool {
	if sc.Cluster.System == nil || sc.Cluster.System.Claimed(string(n)) {
		return false
	}
	_, stated := sc.ExpectCheckers[n]
	return !stated
}

// refusedBySystem refuses, before anything starts, a scenario with a step
// whose fault its system cannot take (a scenario file is refused so when
// parsed; one built in code is refused here).
func refusedBySystem(sc *scenario.Scenario) error {
	sys := sc.Cluster.System
	if sys == nil {
		return nil
	}
	for i, st := range sc.Steps {
		if why := sys.Refusal(string(st.Op)); why != "" && st.Op.IsFault() {
			return fmt.Errorf("step %d (%s): system %s cannot take a %s fault: %s", i+1, st, sys.Name, st.Op, why)
		}
	}
	return nil
}
