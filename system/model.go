package system

import (
	"fmt"
	stdmaps "maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// Model is the algorithm that stands for a system in the simulator, and
// how a cluster of that algorithm becomes one of the server: which of the
// server's options take the model's heartbeat and election timeout, which
// model options map to which server options, which the server cannot
// change. A scenario written for the model (one the explorer saved, say)
// then runs against the real server with matching timeouts
// (`ringleader run --system`), and the simulator, which cannot run a
// server, names the model cluster instead.
type Model struct {
	// Algorithm is the model's name (raft); empty: the system has no
	// model, and Note says why and what would come nearest.
	Algorithm string `yaml:"algorithm"`
	// Heartbeat and Election name the server's options, in
	// milliseconds, that take the model's heartbeat and its suspicion
	// (the election timeout).
	Heartbeat string `yaml:"heartbeat"`
	Election  string `yaml:"election"`
	// MinElectionHeartbeats is the least election timeout the server
	// accepts, in heartbeats (etcd refuses to start below 5).
	MinElectionHeartbeats int `yaml:"min_election_heartbeats"`
	// Options maps a model option to the server option that means the
	// same (prevote: prevote).
	Options map[string]string `yaml:"options"`
	// Fixed are model options the server cannot change, at the value it
	// always runs (check_quorum: "true"): a model cluster with another
	// value has no counterpart and is refused.
	Fixed map[string]string `yaml:"fixed"`
	// Unmapped says what of the model has no counterpart on the server,
	// for the note a run prints and docs/systems.md.
	Unmapped []string `yaml:"unmapped"`
	// Note, for a system without a model, says why and what would come
	// nearest.
	Note string `yaml:"note"`
}

// validateModel checks the model's fields against the system's options.
func (s *System) validateModel(bad func(field, format string, args ...any)) {
	m := s.Model
	if m.Algorithm == "" {
		if m.Heartbeat != "" || m.Election != "" || len(m.Options) > 0 || len(m.Fixed) > 0 {
			bad("model.algorithm", "missing; the algorithm the other model fields map from")
		}
		return
	}
	for _, o := range []struct{ field, name string }{{"model.heartbeat", m.Heartbeat}, {"model.election", m.Election}} {
		if opt := s.option(o.name); opt == nil || opt.Kind != election.OptionInt {
			bad(o.field, "%q: want the name of an int option of the system (milliseconds)", o.name)
		}
	}
	for mo, so := range m.Options {
		if s.option(so) == nil {
			bad("model.options."+mo, "%q is not an option of system %s", so, s.Name)
		}
	}
}

func (s *System) option(name string) *Option {
	for i := range s.Options {
		if s.Options[i].Name == name {
			return &s.Options[i]
		}
	}
	return nil
}

// FromModel is the server's options for a cluster of the model algorithm
// with the given (resolved) options and timing: the timing to the
// server's heartbeat and election options, in whole milliseconds, and
// each mapped option passed on. What has no counterpart is an error that
// says so.
func (s *System) FromModel(algorithm string, opts election.Options, t election.Timing) (election.Options, error) {
	m := s.Model
	if m.Algorithm == "" {
		return nil, fmt.Errorf("system %s has no model algorithm: %s", s.Name, s.noModel())
	}
	if algorithm != m.Algorithm {
		return nil, fmt.Errorf("algorithm %s: system %s is modelled by algorithm %s; only a scenario for %s maps to it", algorithm, s.Name, m.Algorithm, m.Algorithm)
	}
	for _, k := range slices.Sorted(stdmaps.Keys(m.Fixed)) {
		if v, ok := opts[k]; ok && v != m.Fixed[k] {
			return nil, fmt.Errorf("option %s: %s: %s always runs with %s: %s, so the model's %s: %s has no counterpart on the server", k, v, s.Title, k, m.Fixed[k], k, v)
		}
	}
	out := election.Options{}
	for _, t := range []struct {
		name string
		d    time.Duration
		what string
	}{{m.Heartbeat, t.Heartbeat, "heartbeat"}, {m.Election, t.Suspicion, "suspicion (the election timeout)"}} {
		if t.d%time.Millisecond != 0 {
			return nil, fmt.Errorf("timing %s %v: %s takes whole milliseconds (%s)", t.what, t.d, s.Name, t.name)
		}
		out[t.name] = strconv.FormatInt(t.d.Milliseconds(), 10)
	}
	if n := m.MinElectionHeartbeats; n > 0 && t.Suspicion < time.Duration(n)*t.Heartbeat {
		return nil, fmt.Errorf("timing: suspicion %v is shorter than %d heartbeats of %v: %s refuses to start with an election timeout under %d heartbeat intervals", t.Suspicion, n, t.Heartbeat, s.Title, n)
	}
	for _, mo := range slices.Sorted(stdmaps.Keys(m.Options)) {
		if v, ok := opts[mo]; ok {
			out[m.Options[mo]] = v
		}
	}
	return out, nil
}

// ModelCluster says, for a scenario on this system with the given
// (resolved) server options, the model cluster that stands for it in the
// simulator, as a scenario's cluster: field would say it; or, for a
// system without a model, why none does.
func (s *System) ModelCluster(nodes int, opts election.Options) string {
	m := s.Model
	if m.Algorithm == "" {
		return "it has no model in the simulator: " + s.noModel()
	}
	ms := func(name string) string {
		v, ok := opts[name]
		if !ok {
			if o := s.option(name); o != nil {
				v = o.Default
			}
		}
		return v + "ms"
	}
	var mopts []string
	for _, k := range slices.Sorted(stdmaps.Keys(m.Fixed)) {
		mopts = append(mopts, k+": "+m.Fixed[k])
	}
	for _, mo := range slices.Sorted(stdmaps.Keys(m.Options)) {
		v, ok := opts[m.Options[mo]]
		if !ok {
			if o := s.option(m.Options[mo]); o != nil {
				v = o.Default
			}
		}
		mopts = append(mopts, mo+": "+v)
	}
	slices.Sort(mopts)
	n := ""
	if nodes > 0 {
		n = fmt.Sprintf(", nodes: %d", nodes)
	}
	return fmt.Sprintf("its model is cluster: {algorithm: %s%s, options: {%s}, timing: {heartbeat: %s, suspicion: %s}}",
		m.Algorithm, n, strings.Join(mopts, ", "), ms(m.Heartbeat), ms(m.Election))
}

// noModel is why the system has no model.
func (s *System) noModel() string {
	if n := strings.TrimSpace(s.Model.Note); n != "" {
		return n
	}
	return "its system file names none (model.algorithm, docs/systems.md)"
}
