// Package system describes a real server that elects a leader — etcd, NATS
// JetStream, or a user's own — as data the harness reads: the image its
// members run, the command line of member i with the peer list filled in,
// the directory its state lives in across restarts, the options it takes,
// and a probe, one HTTP request whose JSON answer says who the member is,
// whom it believes leads and in which term. The container backend starts
// such a cluster and turns the probe's answers into the same view records
// the election nodes write, so the same checkers judge it
// (docs/systems.md).
//
// The built-in systems are written in the same form (etcd.yaml,
// nats-jetstream.yaml beside this file); Load reads a user's.
package system

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ringleader-dev/ringleader/election"
)

// System is one kind of server cluster.
type System struct {
	// Name names the system in scenarios (cluster: {system: etcd}),
	// results and reports.
	Name string `yaml:"name"`
	// Title is the human name; Version the server's pinned version,
	// written into every result.
	Title   string `yaml:"title"`
	Version string `yaml:"version"`
	// Image is the image every member runs.
	Image string `yaml:"image"`
	// Build, when set, says how ringleader builds Image from source
	// (nothing is pulled); without it the image must exist on the
	// engine.
	Build *Build `yaml:"build"`
	// Command is member i's command line, entrypoint first, with the
	// placeholders of Expand filled in; empty: the image's own.
	Command []string `yaml:"command"`
	// Env is member i's environment, values expanded alike.
	Env map[string]string `yaml:"env"`
	// Peer is one member's entry in {peers} (joined by PeerSeparator,
	// default ","), e.g. "m{id}=http://{addr}:2380".
	Peer          string `yaml:"peer"`
	PeerSeparator string `yaml:"peer_separator"`
	// DataDir is where the server keeps its state inside the container:
	// a volume of the member's own, kept across kill and restart.
	DataDir string `yaml:"data_dir"`
	// User is the user the server runs as (default 65532:65532).
	User string `yaml:"user"`
	// MemoryMiB bounds each member's memory (default 512).
	MemoryMiB int `yaml:"memory_mib"`
	// Options are the settings a scenario may give; one left out is the
	// server's own default, which Default documents.
	Options []Option `yaml:"options"`
	// Timing says which options (or fixed durations) are the server's
	// heartbeat and election timeout: the harness's stable waits and
	// the failover measure are judged against them.
	Timing Timing `yaml:"timing"`
	Probe  Probe  `yaml:"probe"`
	// Claims are the checkers whose properties the server's
	// documentation promises; the others are measured and shown, not
	// expected.
	Claims []string `yaml:"claims"`
	// Refuse names the fault operations the server cannot take, each
	// with why; a scenario using one is refused before anything starts.
	Refuse map[string]string `yaml:"refuse"`
	// Sources says where the claims and defaults come from.
	Sources []string `yaml:"sources"`
	// Model is the algorithm that stands for the server in the
	// simulator and how its clusters map to the server's (model.go).
	Model Model `yaml:"model"`

	file string // where it was read from
}

// Build is how ringleader builds a system's image: a static Go binary
// (CGO_ENABLED=0) in a FROM-scratch image, nothing pulled.
type Build struct {
	// Module is a directory, relative to the repository root, holding a
	// Go module of its own whose main package is the server (etcd's
	// dependency tree then stays out of ringleader's go.mod).
	Module string `yaml:"module"`
	// Package is a main package built from ringleader's own module
	// instead (the NATS server, which go.mod already requires).
	Package string `yaml:"package"`
	// Binary is the executable's path in the image.
	Binary string `yaml:"binary"`
}

// Option is one setting a system takes.
type Option struct {
	Name    string              `yaml:"name"`
	Kind    election.OptionKind `yaml:"kind"`
	Default string              `yaml:"default"`
	Help    string              `yaml:"help"`
	// Args are added to the command line when the option is given,
	// {value} replaced by its value.
	Args []string `yaml:"args"`
}

// Timing names the server's heartbeat and election timeout: each is an
// option's name (an int of milliseconds, or a duration) or a fixed
// duration such as "1s".
type Timing struct {
	Heartbeat string `yaml:"heartbeat"`
	Election  string `yaml:"election"`
}

// Probe is the request that asks one member who leads.
type Probe struct {
	// Method (GET or POST), Port and Path (with placeholders) of the
	// request, made to the member's address on the run's network;
	// Body is sent with POST.
	Method string `yaml:"method"`
	Port   int    `yaml:"port"`
	Path   string `yaml:"path"`
	Body   string `yaml:"body"`
	// ID, Leader, Term and Role are where in the JSON answer the
	// member's own ID, its leader's, its term and its role are: keys
	// joined by dots ("$SYS._meta_.leader"), or a JSON pointer for keys
	// holding dots ("/raft.status/lead"). Role
	// is optional: without it a member leads when its leader is itself.
	ID     string `yaml:"id"`
	Leader string `yaml:"leader"`
	Term   string `yaml:"term"`
	Role   string `yaml:"role"`
	// Roles maps the server's role words to leader, follower or
	// candidate (a word not listed reads as follower).
	Roles map[string]string `yaml:"roles"`
	// NoLeader are the leader values that mean "no leader" ("0", "").
	NoLeader []string `yaml:"no_leader"`
	// Interval is how often each member is asked (default 20ms), and
	// Timeout how long an answer may take (default 2s) before the member
	// counts as unknown.
	Interval Duration `yaml:"interval"`
	Timeout  Duration `yaml:"timeout"`
}

// Duration is a time.Duration written as "20ms".
type Duration time.Duration

// UnmarshalYAML reads "20ms".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return fmt.Errorf("line %d: %s: want a positive duration like 20ms, got %q", n.Line, "interval/timeout", n.Value)
	}
	*d = Duration(v)
	return nil
}

// Defaults of a probe.
const (
	DefaultInterval = 20 * time.Millisecond
	// DefaultTimeout is patience, not a bound a test measures: until it
	// runs out the member keeps its last view, after it the member is
	// unknown, and an expectation that must hold on it breaks. A loaded
	// machine once kept an etcd member's /debug/vars answer past 500 ms,
	// and a run whose every member was right failed for it.
	DefaultTimeout = 2 * time.Second
	// MaxAnswer bounds a probe's answer: a longer one is refused.
	MaxAnswer = 64 << 10
	// DefaultMemoryMiB bounds a member's memory.
	DefaultMemoryMiB = 512
)

//go:embed *.yaml
var builtinFS embed.FS

// Builtins lists the built-in systems' names, sorted.
func Builtins() []string {
	ents, _ := builtinFS.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Lookup returns a built-in system, or reads the file name names (a path
// ending in .yaml or .yml, relative to dir unless absolute).
func Lookup(name, dir string) (*System, error) {
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		return Load(p)
	}
	b, err := builtinFS.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown system %q (built in: %s; or a file such as mysystem.yaml, docs/systems.md)", name, strings.Join(Builtins(), ", "))
	}
	return Parse(name+".yaml (built in)", b)
}

// Load reads a system file.
func Load(path string) (*System, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	return Parse(path, b)
}

// Parse reads a system from YAML; file names it in errors. Unknown fields
// are refused, and Validate's errors name the field.
func Parse(file string, b []byte) (*System, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s System
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	s.file = file
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

// File is where the system was read from.
func (s *System) File() string { return s.file }

// Validate checks a system completely and fills its defaults.
func (s *System) Validate() error {
	var errs []string
	bad := func(field, format string, args ...any) {
		errs = append(errs, field+": "+fmt.Sprintf(format, args...))
	}
	if !nameOK(s.Name) {
		bad("name", "%q: want lower-case letters, digits and dashes", s.Name)
	}
	if s.Image == "" {
		bad("image", "missing; the image every member runs")
	}
	if s.Version == "" {
		bad("version", "missing; the server's version, written into every result")
	}
	if b := s.Build; b != nil {
		if (b.Module == "") == (b.Package == "") {
			bad("build", "give module (a directory with its own go.mod) or package (a main package of ringleader's module), one of them")
		}
		if !strings.HasPrefix(b.Binary, "/") {
			bad("build.binary", "%q: want the executable's absolute path in the image", b.Binary)
		}
	}
	if s.PeerSeparator == "" {
		s.PeerSeparator = ","
	}
	if s.User == "" {
		s.User = "65532:65532"
	}
	if s.MemoryMiB == 0 {
		s.MemoryMiB = DefaultMemoryMiB
	}
	if s.MemoryMiB < 16 {
		bad("memory_mib", "%d: at least 16", s.MemoryMiB)
	}
	if s.DataDir != "" && !strings.HasPrefix(s.DataDir, "/") {
		bad("data_dir", "%q: want an absolute path", s.DataDir)
	}
	for _, arg := range append(slices.Clone(s.Command), s.Peer) {
		if err := checkTemplate(arg, false); err != nil {
			bad("command", "%v", err)
		}
	}
	seen := map[string]bool{}
	for i, o := range s.Options {
		field := fmt.Sprintf("options[%d]", i)
		spec := election.OptionSpec{Name: o.Name, Kind: o.Kind, Default: o.Default}
		if o.Name == "" || seen[o.Name] {
			bad(field+".name", "%q: empty or given twice", o.Name)
		}
		seen[o.Name] = true
		if _, err := spec.Parse(o.Default); err != nil {
			bad(field+".default", "%v", err)
		}
		if len(o.Args) == 0 {
			bad(field+".args", "missing; the arguments that set it, with {value}")
		}
		for _, a := range o.Args {
			if err := checkTemplate(a, true); err != nil {
				bad(field+".args", "%v", err)
			}
		}
	}
	for _, t := range []struct{ field, v string }{{"timing.heartbeat", s.Timing.Heartbeat}, {"timing.election", s.Timing.Election}} {
		if _, err := s.duration(t.v, nil); err != nil {
			bad(t.field, "%v", err)
		}
	}
	p := &s.Probe
	p.Method = strings.ToUpper(p.Method)
	if p.Method == "" {
		p.Method = "GET"
	}
	if p.Method != "GET" && p.Method != "POST" {
		bad("probe.method", "%q: want GET or POST", p.Method)
	}
	if p.Port < 1 || p.Port > 65535 {
		bad("probe.port", "%d: want the port the member answers on", p.Port)
	}
	if !strings.HasPrefix(p.Path, "/") {
		bad("probe.path", "%q: want a path starting with /", p.Path)
	}
	if p.ID == "" {
		bad("probe.id", "missing; where the member's own ID is in the answer (the leader IDs are mapped to members through it)")
	}
	if p.Leader == "" {
		bad("probe.leader", "missing; where the member's leader is in the answer")
	}
	for word, role := range p.Roles {
		switch election.Role(role) {
		case election.Leader, election.Follower, election.Candidate:
		default:
			bad("probe.roles."+word, "%q: want leader, follower or candidate", role)
		}
	}
	if p.Interval == 0 {
		p.Interval = Duration(DefaultInterval)
	}
	if p.Timeout == 0 {
		p.Timeout = Duration(DefaultTimeout)
	}
	for _, c := range s.Claims {
		switch election.Property(c) {
		case election.Agreement, election.NoSplitBrain, election.EpochSafety, election.Liveness:
		default:
			bad("claims", "%q: want agreement, no-split-brain, epoch-safety or liveness", c)
		}
	}
	s.validateModel(bad)
	for op := range s.Refuse {
		if strings.TrimSpace(s.Refuse[op]) == "" {
			bad("refuse."+op, "say why")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func nameOK(s string) bool {
	if s == "" || len(s) > 40 || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// placeholders are the words Expand fills.
var placeholders = []string{"id", "name", "addr", "peers", "cluster", "data"}

// checkTemplate refuses an unknown {placeholder}; {value} only in an
// option's arguments.
func checkTemplate(s string, option bool) error {
	for rest := s; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("%q: unclosed {", s)
		}
		w := rest[i+1 : i+j]
		if !slices.Contains(placeholders, w) && !(option && w == "value") {
			return fmt.Errorf("%q: unknown placeholder {%s} (valid: {%s}%s)", s, w, strings.Join(placeholders, "}, {"), map[bool]string{true: ", {value}"}[option])
		}
		rest = rest[i+j+1:]
	}
}

// Member is what a member's command line is made of.
type Member struct {
	ID election.NodeID
	// Name is the member's name on the run's network (node<ID>).
	Name string
	Addr string
}

// Vars are the placeholders of member m of a cluster.
func (s *System) Vars(m Member, all []Member, cluster string) map[string]string {
	peers := make([]string, len(all))
	for i, p := range all {
		peers[i] = Expand(s.Peer, map[string]string{"id": strconv.Itoa(int(p.ID)), "name": p.Name, "addr": p.Addr, "cluster": cluster, "data": s.DataDir})
	}
	return map[string]string{
		"id": strconv.Itoa(int(m.ID)), "name": m.Name, "addr": m.Addr,
		"peers": strings.Join(peers, s.PeerSeparator), "cluster": cluster, "data": s.DataDir,
	}
}

// Expand fills s's {placeholders} from vars; one vars lacks stays as is.
func Expand(s string, vars map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if v, ok := vars[s[i+1:i+j]]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}

// Command is member m's command line: Command expanded, then the
// arguments of every option given (in the system's order). An option not
// given adds nothing: the server's default stands.
func (s *System) CommandLine(m Member, all []Member, cluster string, given election.Options) []string {
	vars := s.Vars(m, all, cluster)
	var out []string
	for _, a := range s.Command {
		out = append(out, Expand(a, vars))
	}
	for _, o := range s.Options {
		v, ok := given[o.Name]
		if !ok {
			continue
		}
		ov := maps(vars, "value", v)
		for _, a := range o.Args {
			out = append(out, Expand(a, ov))
		}
	}
	return out
}

// Environment is member m's environment, KEY=VALUE, sorted.
func (s *System) Environment(m Member, all []Member, cluster string) []string {
	vars := s.Vars(m, all, cluster)
	var out []string
	for k, v := range s.Env {
		out = append(out, k+"="+Expand(v, vars))
	}
	sort.Strings(out)
	return out
}

func maps(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// Algorithm is the system as the checkers and the scenario parser see an
// algorithm: its name, its options, the properties its documentation
// claims, majority quorum. It builds no machine: a system runs only as
// its own servers, in containers.
func (s *System) Algorithm() election.Algorithm {
	var opts []election.OptionSpec
	for _, o := range s.Options {
		d, _ := election.OptionSpec{Name: o.Name, Kind: o.Kind}.Parse(o.Default)
		opts = append(opts, election.OptionSpec{Name: o.Name, Kind: o.Kind, Default: d, Help: o.Help})
	}
	claims := make([]election.Property, len(s.Claims))
	for i, c := range s.Claims {
		claims[i] = election.Property(c)
	}
	name, model := s.Name, s.ModelCluster(0, nil)
	return election.Algorithm{
		Name: s.Name, Title: s.Title + " " + s.Version, Topology: "complete",
		New: func(election.Config) (election.Machine, error) {
			return nil, fmt.Errorf("system %s runs only as its own servers in containers (--backend docker); %s", name, model)
		},
		Claims:        func(election.QuorumMode) []election.Property { return claims },
		Quorums:       []election.QuorumMode{election.Majority},
		DefaultQuorum: election.Majority,
		QuorumWhy:     "a " + s.Name + " cluster needs a majority of its members to elect",
		Options:       opts,
	}
}

// Claimed reports whether the system's documentation promises property p.
func (s *System) Claimed(p string) bool { return slices.Contains(s.Claims, p) }

// Timings are the server's heartbeat and election timeout with the given
// options (the rest at their defaults).
func (s *System) Timings(opts election.Options) (heartbeat, election time.Duration, err error) {
	if heartbeat, err = s.duration(s.Timing.Heartbeat, opts); err != nil {
		return 0, 0, fmt.Errorf("system %s: timing.heartbeat: %w", s.Name, err)
	}
	if election, err = s.duration(s.Timing.Election, opts); err != nil {
		return 0, 0, fmt.Errorf("system %s: timing.election: %w", s.Name, err)
	}
	return heartbeat, election, nil
}

// duration reads a timing entry: an option's value (its default when opts
// lacks it) in milliseconds or as a duration, else a fixed duration.
func (s *System) duration(v string, opts election.Options) (time.Duration, error) {
	for _, o := range s.Options {
		if o.Name != v {
			continue
		}
		val, ok := opts[o.Name]
		if !ok {
			val = o.Default
		}
		switch o.Kind {
		case election.OptionInt:
			ms, err := strconv.Atoi(val)
			if err != nil || ms <= 0 {
				return 0, fmt.Errorf("option %s = %q is not a positive number of milliseconds", o.Name, val)
			}
			return time.Duration(ms) * time.Millisecond, nil
		case election.OptionDuration:
			return time.ParseDuration(val)
		}
		return 0, fmt.Errorf("option %s is a %s, not milliseconds or a duration", o.Name, o.Kind)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is neither an option's name nor a positive duration", v)
	}
	return d, nil
}

// Refusal says why the system cannot take fault op; empty when it can.
func (s *System) Refusal(op string) string { return s.Refuse[op] }
