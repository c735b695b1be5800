package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// Error is one problem in a scenario file: where it is and what would be
// valid.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Errors is every problem found in one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// MaxNodes bounds a cluster in a file, for every backend: a guard against
// a typo, not what a machine holds. What a machine holds is the backend's
// to say, from the machine itself, before anything starts: the docker
// backend admits NodesPerCore nodes per engine CPU and refuses more with
// the reason (docker.CheckCapacity), so a typo of 500 starts nothing on
// a 2-core machine; the simulator runs far more.
const MaxNodes = 1024

// MaxRepeat bounds repeat: each run keeps its result in memory until the
// batch ends (harness.MaxRuns, the same bound over a whole batch).
const MaxRepeat = 10_000

// MaxNameLen bounds a scenario's name: it names the store directory, and
// a DNS label (a container's host name) holds 63 characters.
const MaxNameLen = 63

// Load reads and parses one file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, data)
}

// LoadAll expands directories to their *.yaml and *.yml files (sorted) and
// parses every file, returning every error of every file at once so that a
// whole set is fixed in one pass. Two scenarios with the same name are an
// error: their results would share a store directory.
func LoadAll(paths ...string) ([]*Scenario, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		var in []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, _ := filepath.Glob(filepath.Join(p, pat))
			in = append(in, m...)
		}
		if len(in) == 0 {
			return nil, fmt.Errorf("scenario: directory %s holds no *.yaml files", p)
		}
		sort.Strings(in)
		files = append(files, in...)
	}
	var (
		out   []*Scenario
		errs  []error
		names = map[string]string{}
	)
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := names[s.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: name %q is already used by %s; names must be unique (they name the store directory)", f, s.Name, prev))
			continue
		}
		names[s.Name] = f
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// Parse parses and validates one scenario. file names it in errors.
func Parse(file string, data []byte) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, Errors{yamlError(file, err)}
	}
	p := &parser{file: file}
	s := p.scenario(&doc)
	p.oneDocument(dec)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return s, nil
}

// oneDocument reports a second YAML document (after ---): a file is one
// scenario, and a second one would otherwise be silently ignored.
func (p *parser) oneDocument(dec *yaml.Decoder) {
	var next yaml.Node
	err := dec.Decode(&next)
	switch {
	case err == io.EOF:
	case err != nil:
		p.errs = append(p.errs, yamlError(p.file, err))
	case len(next.Content) > 0 && !isNull(next.Content[0]):
		p.errf(next.Content[0], "---", "a second YAML document; a file holds one scenario: put each in its own file")
	}
}

// yamlError turns the YAML library's syntax error ("yaml: line 3: ...")
// into one with the file's name.
func yamlError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line, msg = n, strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return &Error{File: file, Line: line, Field: "yaml", Msg: msg}
}

type parser struct {
	file string
	errs Errors
	// members is the cluster once known; IDs elsewhere are checked
	// against it.
	members []election.NodeID
}

func (p *parser) errf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// fields walks a mapping node, reporting unknown and repeated keys; it
// returns the value node of each known key present.
func (p *parser) fields(n *yaml.Node, field string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "want a mapping with keys %s, got %s", strings.Join(known, ", "), describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		path := join(field, key)
		if !slices.Contains(known, key) {
			p.errf(k, path, "unknown field %q (valid: %s)", key, strings.Join(known, ", "))
			continue
		}
		if _, dup := out[key]; dup {
			p.errf(k, path, "given twice")
			continue
		}
		out[key] = v
	}
	return out
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (p *parser) str(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		p.errf(n, field, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) int(n *yaml.Node, field string, min int) (int, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, field, "want a whole number ≥ %d, got %s", min, describe(n))
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < min {
		p.errf(n, field, "want a whole number ≥ %d, got %s", min, describe(n))
		return 0, false
	}
	return v, true
}

// seed parses a run's seed: a whole number ≥ 0 that fits 63 bits.
func (p *parser) seed(n *yaml.Node, field string) *int64 {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil && v >= 0 {
			return &v
		}
	}
	p.errf(n, field, "want a whole number from 0 to %d, got %s", int64(math.MaxInt64), describe(n))
	return nil
}

func (p *parser) duration(n *yaml.Node, field string) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if d, err := time.ParseDuration(n.Value); err == nil && d > 0 {
			return d, true
		}
	}
	p.errf(n, field, "want a positive duration with a unit, like 500ms or 2s, got %s", describe(n))
	return 0, false
}

// id parses a node ID that must be a member.
func (p *parser) id(n *yaml.Node, field string) (election.NodeID, bool) {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.Atoi(n.Value); err == nil && v > 0 {
			id := election.NodeID(v)
			if p.members != nil && !slices.Contains(p.members, id) {
				p.errf(n, field, "node %d is not in the cluster (members: %s)", v, idList(p.members))
				return 0, false
			}
			return id, true
		}
	}
	p.errf(n, field, "want a node ID (a positive whole number), got %s", describe(n))
	return 0, false
}

// ids parses a list of distinct member IDs.
func (p *parser) ids(n *yaml.Node, field string, minLen int) ([]election.NodeID, bool) {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, field, "want a list of node IDs like [1, 2], got %s", describe(n))
		return nil, false
	}
	if len(n.Content) < minLen {
		p.errf(n, field, "want at least %d node IDs, got %d", minLen, len(n.Content))
		return nil, false
	}
	out := make([]election.NodeID, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		id, good := p.id(c, fmt.Sprintf("%s[%d]", field, i))
		if !good {
			ok = false
			continue
		}
		if slices.Contains(out, id) {
			p.errf(c, field, "node %d is listed twice", id)
			ok = false
			continue
		}
		out = append(out, id)
	}
	return out, ok
}

var nameRE = regexp.MustCompile(fmt.Sprintf(`^[a-z0-9][a-z0-9-]{0,%d}$`, MaxNameLen-1))

func (p *parser) scenario(doc *yaml.Node) *Scenario {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.errf(doc, "scenario", "the file is empty; want a mapping with name, cluster and steps")
		return nil
	}
	root := doc.Content[0]
	f := p.fields(root, "", "name", "description", "cluster", "steps", "repeat", "checkers", "expect_checkers", "liveness_bound", "seed")
	s := &Scenario{File: p.file, Repeat: 1}
	if n, ok := f["name"]; !ok {
		p.errf(root, "name", "missing; want a short name like bully-leader-crash")
	} else if v, ok := p.str(n, "name"); ok {
		if !nameRE.MatchString(v) {
			p.errf(n, "name", "%q: want 1 to %d lower-case letters, digits and dashes, not starting with a dash (it names the store directory and the containers)", v, MaxNameLen)
		}
		s.Name = v
	}
	if n, ok := f["description"]; ok {
		s.Description, _ = p.str(n, "description")
		s.Description = strings.TrimSpace(s.Description)
	}
	if n, ok := f["cluster"]; !ok {
		p.errf(root, "cluster", "missing; want {algorithm: bully, nodes: 5}")
	} else {
		s.Cluster = p.cluster(n)
	}
	if n, ok := f["repeat"]; ok {
		if v, ok := p.int(n, "repeat", 1); ok {
			if v > MaxRepeat {
				p.errf(n, "repeat", "want a whole number from 1 to %d (each run's result is kept until the batch ends), got %d", MaxRepeat, v)
			}
			s.Repeat = v
		}
	}
	if n, ok := f["liveness_bound"]; ok {
		s.LivenessBound, _ = p.duration(n, "liveness_bound")
	}
	if n, ok := f["seed"]; ok {
		s.Seed = p.seed(n, "seed")
	}
	if n, ok := f["checkers"]; ok {
		s.Checkers = p.checkerList(n)
	}
	if n, ok := f["expect_checkers"]; ok {
		s.ExpectCheckers = p.expectCheckers(n)
	}
	if n, ok := f["steps"]; !ok {
		p.errf(root, "steps", "missing; want a list of steps such as - kill: leader")
	} else {
		s.Steps = p.steps(n)
	}
	p.refusedBySystem(s)
	return s
}

func (p *parser) cluster(n *yaml.Node) Cluster {
	f := p.fields(n, "cluster", "algorithm", "program", "image", "program_timeout", "nodes", "ids", "quorum", "options", "timing", "system", "probe_interval", "placement")
	var c Cluster
	var alg election.Algorithm
	algOK := false
	a, hasAlg := f["algorithm"]
	prog, hasProg := f["program"]
	sys, hasSys := f["system"]
	switch {
	case hasSys && (hasAlg || hasProg):
		p.errf(sys, "cluster.system", "a cluster runs a system, an algorithm or a program: give one of them")
	case hasSys:
		if v, ok := p.str(sys, "cluster.system"); ok {
			var err error
			if c.System, err = system.Lookup(v, filepath.Dir(p.file)); err != nil {
				p.errf(sys, "cluster.system", "%v", err)
			} else {
				c.Algorithm = c.System.Name
				alg, algOK = c.System.Algorithm(), true
			}
		}
	case hasAlg && hasProg:
		p.errf(prog, "cluster.program", "both algorithm and program given: a cluster runs one or the other")
	case hasProg:
		c.Program = p.command(prog, "cluster.program")
	case !hasAlg:
		p.errf(n, "cluster.algorithm", "missing; known: %s (or program: [command, args...], docs/protocol.md; or system: %s, docs/systems.md)", algorithmNames(), strings.Join(system.Builtins(), " | "))
	default:
		if v, ok := p.str(a, "cluster.algorithm"); ok {
			c.Algorithm = v
			var err error
			if alg, err = election.Lookup(v); err != nil {
				p.errf(a, "cluster.algorithm", "%v", err)
			} else {
				algOK = true
			}
		}
	}
	nodes := 0
	if v, ok := f["nodes"]; ok {
		if nodes, ok = p.int(v, "cluster.nodes", 1); ok && nodes > MaxNodes {
			p.errf(v, "cluster.nodes", "%d nodes: at most %d", nodes, MaxNodes)
			nodes = 0
		}
	}
	if v, ok := f["ids"]; ok {
		if ids, ok := p.ids(v, "cluster.ids", 1); ok {
			if len(ids) > MaxNodes {
				p.errf(v, "cluster.ids", "%d nodes: at most %d", len(ids), MaxNodes)
			}
			if nodes > 0 && len(ids) != nodes {
				p.errf(v, "cluster.ids", "%d IDs for nodes: %d; give one ID per node", len(ids), nodes)
			}
			c.IDs = ids
		}
	} else if nodes > 0 {
		c.IDs = election.FirstIDs(nodes)
	} else if _, ok := f["nodes"]; !ok {
		p.errf(n, "cluster.nodes", "missing; give nodes: N (IDs 1..N) or ids: [...] in ring order")
	}
	p.members = c.IDs
	if v, ok := f["placement"]; ok {
		c.Placement = p.placement(v, c.IDs)
	}
	if v, ok := f["quorum"]; ok {
		if q, ok := p.str(v, "cluster.quorum"); ok {
			var err error
			if c.Quorum, err = election.ParseQuorum(q); err != nil {
				p.errf(v, "cluster.quorum", "%v", err)
			} else if c.Quorum == election.QuorumDefault {
				p.errf(v, "cluster.quorum", "empty: want none or majority, or leave quorum out for the algorithm's default")
			}
		}
	}
	if hasProg {
		// A program takes no options (protocol v1) and runs without a
		// quorum unless told otherwise.
		if c.Quorum == election.QuorumDefault {
			c.Quorum = election.NoQuorum
		}
		if o, ok := f["options"]; ok {
			p.errf(o, "cluster.options", "a program takes no options (docs/protocol.md, version 1)")
		}
	}
	if im, ok := f["image"]; ok {
		if !hasProg {
			p.errf(im, "cluster.image", "only with a program: the image that holds its runtime on --backend docker")
		} else {
			c.Image, _ = p.str(im, "cluster.image")
		}
	}
	if pt, ok := f["program_timeout"]; ok {
		if !hasProg {
			p.errf(pt, "cluster.program_timeout", "only with a program: how long it has to answer one event")
		} else {
			c.ProgramTimeout, _ = p.duration(pt, "cluster.program_timeout")
		}
	}
	if algOK {
		// The quorum and options a run records are the resolved ones:
		// what was given, else the algorithm's defaults.
		if q, err := alg.ResolveQuorum(c.Quorum); err != nil {
			p.errf(f["quorum"], "cluster.quorum", "%v", err)
		} else {
			c.Quorum = q
		}
		c.Options = p.options(f["options"], alg)
	}
	if hasSys {
		p.systemCluster(&c, f)
		return c
	}
	if v, ok := f["probe_interval"]; ok {
		p.errf(v, "cluster.probe_interval", "only with a system: how often the harness asks each member who leads")
	}
	if v, ok := f["timing"]; ok {
		tf := p.fields(v, "cluster.timing", "heartbeat", "suspicion", "answer")
		for key, dst := range map[string]*time.Duration{"heartbeat": &c.Timing.Heartbeat, "suspicion": &c.Timing.Suspicion, "answer": &c.Timing.Answer} {
			if dn, ok := tf[key]; ok {
				*dst, _ = p.duration(dn, "cluster.timing."+key)
			}
		}
		c.Timing = c.Timing.WithDefaultsFor(len(c.IDs))
		if err := c.Timing.Validate(); err != nil {
			p.errf(v, "cluster.timing", "%v", err)
		}
	}
	c.Timing = c.Timing.WithDefaultsFor(len(c.IDs))
	return c
}

// placement reads cluster.placement: a list of ID lists, one per engine.
func (p *parser) placement(n *yaml.Node, members []election.NodeID) chaos.Placement {
	const field = "cluster.placement"
	if n.Kind != yaml.SequenceNode || len(n.Content) < 2 {
		p.errf(n, field, "want one list of node IDs per engine, at least two, like [[1, 3], [2]], got %s", describe(n))
		return nil
	}
	var pl chaos.Placement
	for i, g := range n.Content {
		ids, ok := p.ids(g, fmt.Sprintf("%s[%d]", field, i), 1)
		if !ok {
			return nil
		}
		pl = append(pl, ids)
	}
	if members == nil {
		return pl // the members' own error is reported
	}
	if err := pl.Validate(members, 0); err != nil {
		p.errf(n, field, "%v", err)
		return nil
	}
	return pl
}

// systemCluster finishes a system's cluster: the options the file gave
// (only those are passed to the server), the timing the server's own
// options make, and the probe's interval.
func (p *parser) systemCluster(c *Cluster, f map[string]*yaml.Node) {
	if v, ok := f["timing"]; ok {
		p.errf(v, "cluster.timing", "a system keeps its own timers; set them with its options (docs/systems.md)")
	}
	if c.System == nil {
		return
	}
	sys := *c.System // the scenario's own copy: its probe interval may differ
	c.System = &sys
	c.SystemOptions = election.Options{}
	if o := f["options"]; o != nil && o.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(o.Content); i += 2 {
			if v, ok := c.Options[o.Content[i].Value]; ok {
				c.SystemOptions[o.Content[i].Value] = v
			}
		}
	}
	hb, el, err := sys.Timings(c.Options)
	if err != nil {
		p.errf(f["options"], "cluster.options", "%v", err)
		hb, el = election.DefaultTiming.Heartbeat, election.DefaultTiming.Suspicion
	}
	c.Timing = election.Timing{Heartbeat: hb, Suspicion: el, Answer: hb}
	if err := c.Timing.Validate(); err != nil {
		p.errf(f["options"], "cluster.options", "%v", err)
	}
	if v, ok := f["probe_interval"]; ok {
		if d, ok := p.duration(v, "cluster.probe_interval"); ok {
			if d < time.Millisecond || d > time.Second {
				p.errf(v, "cluster.probe_interval", "%v: want 1ms to 1s", d)
			}
			sys.Probe.Interval = system.Duration(d)
		}
	}
}

// refusedBySystem reports every step that applies a fault the cluster's
// system cannot take (a clock fault on a Go server), at the step's line,
// before anything starts.
func (p *parser) refusedBySystem(s *Scenario) {
	if s.Cluster.System == nil {
		return
	}
	for i, st := range s.Steps {
		if why := s.Cluster.System.Refusal(string(st.Op)); why != "" && st.Op.IsFault() {
			p.errs = append(p.errs, &Error{File: p.file, Line: st.Line, Field: fmt.Sprintf("steps[%d].%s", i+1, st.Op),
				Msg: fmt.Sprintf("system %s cannot take a %s fault: %s", s.Cluster.System.Name, st.Op, why)})
		}
	}
}

// command reads a program's command line: a non-empty list of strings,
// the command and its arguments.
func (p *parser) command(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, field, "want a list: the command and its arguments, such as [python3, examples/bully-python/bully.py]")
		return nil
	}
	var argv []string
	for i, item := range n.Content {
		if v, ok := p.str(item, fmt.Sprintf("%s[%d]", field, i)); ok {
			if v == "" {
				p.errf(item, fmt.Sprintf("%s[%d]", field, i), "empty")
			}
			argv = append(argv, v)
		}
	}
	return argv
}

// options reads cluster.options, a mapping of the algorithm's option names
// to scalar values, and returns them resolved (defaults filled). n may be
// nil (no options given).
func (p *parser) options(n *yaml.Node, alg election.Algorithm) election.Options {
	given := election.Options{}
	if n != nil && n.Kind != yaml.MappingNode {
		p.errf(n, "cluster.options", "want a mapping of option names to values, got %s (%s)", describe(n), optionHelp(alg))
		n = nil
	}
	bad := false
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := join("cluster.options", k.Value)
		if _, dup := given[k.Value]; dup {
			p.errf(k, field, "given twice")
			continue
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			p.errf(v, field, "want a value, got %s", describe(v))
			bad = true
			continue
		}
		val, err := alg.ParseOption(k.Value, v.Value)
		if err != nil {
			line := v
			if _, unknown := alg.Option(k.Value); unknown != nil {
				line = k
			}
			p.errf(line, field, "%v", err)
			bad = true
			continue
		}
		given[k.Value] = val
	}
	if bad {
		return nil
	}
	out, err := alg.ResolveOptions(given)
	if err != nil { // every value was checked above
		p.errf(n, "cluster.options", "%v", err)
	}
	return out
}

// optionHelp lists an algorithm's options for an error message.
func optionHelp(alg election.Algorithm) string {
	if len(alg.Options) == 0 {
		return "algorithm " + alg.Name + " takes no options"
	}
	var parts []string
	for _, o := range alg.Options {
		parts = append(parts, fmt.Sprintf("%s (%s, default %s)", o.Name, o.Kind, o.Default))
	}
	return "algorithm " + alg.Name + " takes " + strings.Join(parts, ", ")
}

func algorithmNames() string {
	var names []string
	for _, a := range election.Algorithms() {
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return "(none registered)"
	}
	return strings.Join(names, ", ")
}

func (p *parser) checkerList(n *yaml.Node) []check.Name {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "checkers", "want a list of checker names (valid: %s), got %s", check.NamesText(), describe(n))
		return nil
	}
	var out []check.Name
	for i, c := range n.Content {
		field := fmt.Sprintf("checkers[%d]", i)
		v, ok := p.str(c, field)
		if !ok {
			continue
		}
		name, err := check.ParseName(v)
		if err != nil {
			p.errf(c, field, "%v", err)
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func (p *parser) expectCheckers(n *yaml.Node) map[check.Name]bool {
	out := map[check.Name]bool{}
	names := make([]string, len(check.Names))
	for i, c := range check.Names {
		names[i] = string(c)
	}
	f := p.fields(n, "expect_checkers", names...)
	for name, v := range f {
		field := "expect_checkers." + name
		s, ok := p.str(v, field)
		if !ok {
			continue
		}
		switch s {
		case "pass":
			out[check.Name(name)] = true
		case "fail":
			out[check.Name(name)] = false
		default:
			p.errf(v, field, "%q: want pass or fail", s)
		}
	}
	return out
}

func (p *parser) steps(n *yaml.Node) []Step {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errf(n, "steps", "want a non-empty list of steps such as - kill: leader, got %s", describe(n))
		return nil
	}
	out := make([]Step, 0, len(n.Content))
	var fields []string
	for i, sn := range n.Content {
		field := fmt.Sprintf("steps[%d]", i+1)
		if st, ok := p.step(sn, field); ok {
			out = append(out, st)
			fields = append(fields, field+"."+string(st.Op))
		}
	}
	p.checkLifecycle(out, fields)
	return out
}

func opNames() string {
	ops := Ops()
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = string(o)
	}
	return strings.Join(parts, ", ")
}

// step parses one step: a mapping with exactly one operation key (plus
// within: for wait: stable), or the bare word heal.
func (p *parser) step(n *yaml.Node, field string) (Step, bool) {
	st := Step{Line: n.Line}
	if n.Kind == yaml.ScalarNode && n.Value == string(chaos.Heal) {
		return FaultStep(chaos.Spec{Op: chaos.Heal}), true
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, field, "want a step such as - kill: leader (operations: %s), got %s", opNames(), describe(n))
		return st, false
	}
	known := append([]string{"within"}, strings.Split(opNames(), ", ")...)
	before := len(p.errs)
	f := p.fields(n, field, known...)
	var opKeys []string
	for k := range f {
		if k != "within" {
			opKeys = append(opKeys, k)
		}
	}
	sort.Strings(opKeys)
	if len(opKeys) != 1 {
		if len(p.errs) == before {
			if len(opKeys) == 0 {
				p.errf(n, field, "no operation; want exactly one of %s", opNames())
			} else {
				p.errf(n, field, "%d operations (%s) in one step; give each its own - line", len(opKeys), strings.Join(opKeys, ", "))
			}
		}
		return st, false
	}
	st.Op = Op(opKeys[0])
	v := f[opKeys[0]]
	field = join(field, opKeys[0])
	if w, ok := f["within"]; ok && st.Op != OpWait {
		p.errf(w, strings.TrimSuffix(field, "."+opKeys[0])+".within", "within: belongs to wait: stable or inside expect: {...}")
	}
	switch st.Op {
	case OpWait:
		if v.Kind == yaml.ScalarNode && v.Value == "stable" {
			st.Stable, st.Within = true, DefaultStableWithin
			if w, ok := f["within"]; ok {
				st.Within, _ = p.duration(w, strings.TrimSuffix(field, ".wait")+".within")
			}
		} else {
			d, ok := p.duration(v, field)
			if !ok {
				p.errs[len(p.errs)-1].Msg = fmt.Sprintf("want stable or a duration like 2s, got %s", describe(v))
			}
			st.Duration = d
			if w, ok := f["within"]; ok {
				p.errf(w, strings.TrimSuffix(field, ".wait")+".within", "within: applies to wait: stable only; a fixed wait is its own deadline")
			}
		}
	case OpExpect:
		st.Expect = p.expectation(v, field)
	default:
		st.Fault = p.fault(chaos.Op(st.Op), v, field)
		if len(p.errs) == before {
			p.decideStatic(*st.Fault, v, field)
		}
	}
	return st, len(p.errs) == before
}

// decideStatic refuses now what chaos.Decide would refuse when the step
// runs, for a fault that names its nodes outright (no leader, one, halves
// …): resolved against a cluster at rest, where every node is up and
// nothing is cut, Decide's only errors are the ones no state can cure (a
// partition that cuts no link, or cuts a node from itself).
func (p *parser) decideStatic(spec chaos.Spec, v *yaml.Node, field string) {
	if len(p.members) == 0 || !static(spec) {
		return
	}
	rest := chaos.Steady(p.members, election.None)
	f, err := spec.Resolve(rest, p.members, nil)
	if err == nil {
		_, err = chaos.Decide(f, rest, p.members)
	}
	if err != nil {
		// The field names the operation already.
		p.errf(v, field, "%s", strings.TrimPrefix(err.Error(), string(spec.Op)+": "))
	}
}

// static reports whether spec resolves to the same nodes whatever the
// cluster's state: its targets are node IDs, its partition groups or
// links.
func static(spec chaos.Spec) bool {
	switch spec.Op {
	case chaos.Heal:
		return false // nothing to decide that the state does not
	case chaos.Partition:
		pt := spec.Partition
		return pt != nil && (len(pt.Groups) > 0 || len(pt.Cut) > 0 || len(pt.OneWay) > 0 ||
			pt.Shape == chaos.Isolate && pt.Target.Kind == chaos.TargetIDs)
	}
	return spec.Target.Kind == chaos.TargetIDs
}

// fault parses the value of a fault step. A kind that takes targets is
// read from its descriptor (chaos.Kind): a bare target when it carries no
// values, else a mapping of target and its values' keys.
func (p *parser) fault(op chaos.Op, v *yaml.Node, field string) *chaos.Spec {
	f := &chaos.Spec{Op: op}
	k, _ := chaos.KindOf(op)
	switch {
	case op == chaos.Heal:
		if !isNull(v) && !(v.Kind == yaml.MappingNode && len(v.Content) == 0) {
			p.errf(v, field, "heal takes nothing; write - heal or - heal: {}")
		}
	case op == chaos.Partition:
		f.Partition = p.partition(v, field)
	case len(k.Params) == 0:
		f.Target = p.target(v, field, targetHelpFor(k.Targets), k.Targets, string(op))
	default:
		p.params(k, v, field, f)
	}
	return f
}

// params reads a kind's mapping: its target and its values.
func (p *parser) params(k chaos.Kind, v *yaml.Node, field string, f *chaos.Spec) {
	keys := []string{"target"}
	for _, pr := range k.Params {
		keys = append(keys, pr.Key)
	}
	before := len(p.errs)
	vf := p.fields(v, field, keys...)
	if v.Kind != yaml.MappingNode {
		return
	}
	f.Target = p.requiredTarget(v, vf, field, k.Op)
	for _, pr := range k.Params {
		n, ok := vf[pr.Key]
		switch {
		case !ok && pr.Required:
			p.errf(v, field+"."+pr.Key, "missing; want %s", pr.Help)
		case !ok:
		case n.Kind != yaml.ScalarNode || isNull(n):
			p.errf(n, field+"."+pr.Key, "want %s, got %s", pr.Help, describe(n))
		default:
			if err := pr.Parse(n.Value, f); err != nil {
				p.errf(n, field+"."+pr.Key, "%v", err)
			}
		}
	}
	if len(p.errs) == before {
		if err := k.CheckParams(*f); err != nil {
			p.errf(v, field, "%v", err)
		}
	}
}

func (p *parser) requiredTarget(n *yaml.Node, f map[string]*yaml.Node, field string, op chaos.Op) chaos.Target {
	kinds := chaos.TargetsFor(op)
	t, ok := f["target"]
	if !ok {
		p.errf(n, field+".target", "missing; %s", targetHelpFor(kinds))
		return chaos.Target{}
	}
	return p.target(t, field+".target", targetHelpFor(kinds), kinds, string(op))
}

func targetHelpFor(kinds []chaos.TargetKind) string {
	var parts []string
	for _, k := range kinds {
		parts = append(parts, string(k))
	}
	return "valid targets: " + strings.Join(parts, ", ") + ", a node ID or a list of IDs"
}

// target parses a symbolic target, one of kinds, for what (an operation
// or a partition shape, for the error).
func (p *parser) target(n *yaml.Node, field, help string, kinds []chaos.TargetKind, what string) chaos.Target {
	switch {
	case n.Kind == yaml.SequenceNode:
		ids, _ := p.ids(n, field, 1)
		return chaos.IDs(ids...)
	case n.Kind == yaml.ScalarNode && !isNull(n):
		if _, err := strconv.Atoi(n.Value); err == nil {
			id, _ := p.id(n, field)
			return chaos.IDs(id)
		}
		k := chaos.TargetKind(n.Value)
		if k != chaos.TargetIDs && slices.Contains(kinds, k) {
			return chaos.Target{Kind: k}
		}
		p.errf(n, field, "unknown target %q for %s; %s", n.Value, what, help)
	default:
		p.errf(n, field, "want a target; %s; got %s", help, describe(n))
	}
	return chaos.Target{}
}

func (p *parser) partition(n *yaml.Node, field string) *chaos.PartitionSpec {
	f := p.fields(n, field, "groups", "shape", "target", "cut", "one-way")
	pt := &chaos.PartitionSpec{}
	var forms []string
	for _, k := range []string{"groups", "shape", "cut", "one-way"} {
		if _, ok := f[k]; ok {
			forms = append(forms, k)
		}
	}
	if n.Kind == yaml.MappingNode && len(forms) != 1 {
		if len(forms) == 0 {
			p.errf(n, field, "want exactly one of groups: [[1,2,3],[4,5]], shape: %s, cut: [a, b] or one-way: [from, to]", shapeNames("|"))
		} else {
			p.errf(n, field, "%s given together; a partition is exactly one of groups, shape, cut, one-way", strings.Join(forms, " and "))
		}
		return pt
	}
	if t, ok := f["target"]; ok {
		if sh, _ := f["shape"]; sh == nil || chaos.TargetsForShape(chaos.Shape(sh.Value)) == nil {
			p.errf(t, field+".target", "target: applies to shape: isolate and shape: bridge only")
		}
	}
	switch {
	case f["groups"] != nil:
		g := f["groups"]
		if g.Kind != yaml.SequenceNode || len(g.Content) < 2 {
			p.errf(g, field+".groups", "want at least two groups like [[1,2,3],[4,5]], got %s", describe(g))
			return pt
		}
		for i, gn := range g.Content {
			ids, ok := p.ids(gn, fmt.Sprintf("%s.groups[%d]", field, i), 1)
			if ok {
				pt.Groups = append(pt.Groups, ids)
			}
		}
	case f["shape"] != nil:
		sn := f["shape"]
		sh, ok := p.str(sn, field+".shape")
		if !ok {
			return pt
		}
		if !slices.Contains(chaos.Shapes, chaos.Shape(sh)) {
			p.errf(sn, field+".shape", "unknown shape %q (valid: %s)", sh, shapeNames(", "))
			return pt
		}
		pt.Shape = chaos.Shape(sh)
		t, hasT := f["target"]
		kinds := chaos.TargetsForShape(pt.Shape)
		switch pt.Shape {
		case chaos.Isolate:
			if !hasT {
				p.errf(n, field+".target", "missing: isolate whom? %s", targetHelpFor(kinds))
				return pt
			}
			pt.Target = p.target(t, field+".target", targetHelpFor(kinds), kinds, sh)
		case chaos.Bridge:
			if hasT {
				pt.Target = p.target(t, field+".target", targetHelpFor(kinds), kinds, sh)
				if pt.Target.Kind == chaos.TargetIDs && len(pt.Target.IDs) != 1 {
					p.errf(t, field+".target", "a bridge is one node; give one ID")
				}
			}
		}
		if len(p.members) > 0 && len(p.members) < 3 && pt.Shape != chaos.Isolate && pt.Shape != chaos.Engines {
			p.errf(sn, field+".shape", "%s needs at least 3 nodes; the cluster has %d", sh, len(p.members))
		}
	case f["cut"] != nil:
		pt.Cut = p.pair(f["cut"], field+".cut")
	case f["one-way"] != nil:
		pt.OneWay = p.pair(f["one-way"], field+".one-way")
	}
	return pt
}

func shapeNames(sep string) string {
	parts := make([]string, len(chaos.Shapes))
	for i, s := range chaos.Shapes {
		parts[i] = string(s)
	}
	return strings.Join(parts, sep)
}

func (p *parser) pair(n *yaml.Node, field string) []election.NodeID {
	ids, ok := p.ids(n, field, 2)
	if ok && len(ids) != 2 {
		p.errf(n, field, "want exactly two node IDs [a, b], got %d", len(ids))
		return nil
	}
	return ids
}

func (p *parser) expectation(n *yaml.Node, field string) *Expectation {
	f := p.fields(n, field, "leader", "leaders", "on", "within", "for")
	e := &Expectation{On: OnAllLive, Within: DefaultExpectWithin}
	l, hasL := f["leader"]
	ls, hasLs := f["leaders"]
	switch {
	case n.Kind != yaml.MappingNode:
		return e
	case hasL && hasLs:
		p.errf(ls, field+".leaders", "give leader: or leaders:, not both")
	case hasL:
		switch {
		case l.Kind == yaml.ScalarNode && l.Value == string(ExpectNone):
			e.Kind = ExpectNone
		case l.Kind == yaml.ScalarNode && l.Value == string(ExpectHighest):
			e.Kind = ExpectHighest
		case l.Kind == yaml.ScalarNode && l.Value == string(ExpectAny):
			e.Kind = ExpectAny
		default:
			if l.Kind == yaml.ScalarNode {
				if _, err := strconv.Atoi(l.Value); err != nil {
					p.errf(l, field+".leader", "want a node ID, none, highest or any, got %s", describe(l))
					break
				}
			}
			e.Kind = ExpectLeader
			e.Leader, _ = p.id(l, field+".leader")
		}
	case hasLs:
		e.Kind = ExpectLeaders
		e.Leaders, _ = p.ids(ls, field+".leaders", 1)
	default:
		p.errf(n, field, "say what to expect: leader: ID | none | highest, or leaders: [IDs]")
	}
	if on, ok := f["on"]; ok {
		switch {
		case on.Kind == yaml.SequenceNode:
			e.On = OnIDs
			e.OnIDs, _ = p.ids(on, field+".on", 1)
		case on.Kind == yaml.ScalarNode && (on.Value == string(OnAllLive) || on.Value == string(OnAll)):
			e.On = OnKind(on.Value)
		default:
			p.errf(on, field+".on", "want all-live, all or a list of IDs, got %s", describe(on))
		}
	}
	if w, ok := f["within"]; ok {
		e.Within, _ = p.duration(w, field+".within")
	}
	if d, ok := f["for"]; ok {
		e.For, _ = p.duration(d, field+".for")
	}
	return e
}

// ParseStep parses one step written as a scenario file writes it (`kill:
// leader`, `partition: {shape: halves}`, `heal`), checking its IDs against
// members: what a tool that takes a step from elsewhere (the command line)
// needs to mean exactly what a scenario means. source names the step in
// errors.
func ParseStep(source, text string, members []election.NodeID) (Step, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return Step{}, Errors{yamlError(source, err)}
	}
	if len(doc.Content) != 1 {
		return Step{}, Errors{{File: source, Field: "step", Msg: "want one step"}}
	}
	p := &parser{file: source, members: members}
	st, ok := p.step(doc.Content[0], "step")
	if !ok || len(p.errs) > 0 {
		return Step{}, p.errs
	}
	return st, nil
}
