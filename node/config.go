package node

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/sirupsen/logrus"
)

// Peer is one member of the cluster as this node knows it: its ID and the
// address of its embedded NATS server's cluster (route) listener.
type Peer struct {
	ID   election.NodeID
	Host string
	Port int
}

// DefaultClusterPort is a peer's route port when --peers names none.
const DefaultClusterPort = 6222

// Config is everything a node is started from. ParseArgs builds one from
// flags and environment; tests build them directly.
type Config struct {
	ID election.NodeID
	// Peers is the whole membership, this node included, in ring order.
	Peers     []Peer
	Algorithm string
	// Program, when set, is a program's command line (docs/protocol.md)
	// that the node hosts as a child process instead of an algorithm:
	// Start registers it (package program) and sets Algorithm to its
	// registered name. A program that fails ends the node, as a crash.
	Program []string
	// ProgramTimeout bounds each of the program's answers (zero: the
	// program package's default).
	ProgramTimeout time.Duration
	// Quorum and Options are resolved (election.Algorithm.Resolve):
	// ParseArgs fills the algorithm's defaults; a Config built by hand
	// may leave them unset, and Start resolves them.
	Quorum  election.QuorumMode
	Options election.Options
	Timing  election.Timing
	// Cluster names the NATS cluster and namespaces every subject.
	Cluster string
	// Secret is the cluster's shared secret: the embedded NATS server
	// admits client and route connections only with it (see
	// docs/trust.md). Required with the embedded server; with NATSURL it
	// is sent as the node user's password when set.
	Secret string

	// ClientPort and ClusterPort are the embedded server's listeners on
	// ListenHost; -1 picks a free port (tests).
	ClientPort  int
	ClusterPort int
	ListenHost  string
	// NATSURL, when set, replaces the embedded server with an external
	// one (a comma-separated list of URLs is allowed).
	NATSURL string

	// StatusAddr is the status HTTP listener; empty disables it.
	StatusAddr string
	// StateDir holds the machine's Durable state across restarts.
	StateDir string
	// LogLevel: info logs boot, view, drop and stop lines, the summary
	// and the informational lines; debug adds a send or recv line per
	// message (what the harness records); trace adds the embedded NATS
	// server's own log.
	LogLevel logrus.Level
	// Seed seeds the machine's Config.Rand.
	Seed uint64
	// ClockRate, when set and not 1, starts the node's clock at that
	// rate (a restarted container keeps its rate fault); a control
	// request changes it at run time (docs/node.md). 0 means 1.
	ClockRate float64
	// Gated boots the node without starting its election machine: it
	// joins the cluster, answers control requests and queues what peers
	// send it, and starts the machine on a control request {"start":true}
	// (chaos.Gate: the harness puts a scenario's opening faults in place
	// first). A restarted container keeps it, and is started again the
	// same way.
	Gated bool

	// The fields below are for programs and tests that embed a node.

	// Log receives the JSON log lines (default os.Stdout). It is written
	// from several goroutines, one line per Write call.
	Log io.Writer
	// OnView, when set, is called from the node's event loop after every
	// view change (after the view line is logged). It must not block.
	OnView func(election.View)
	// NewMachine, when set, builds the machine instead of the registry
	// entry named by Algorithm.
	NewMachine func(election.Config) (election.Machine, error)
	// PeerWait bounds how long a starting node waits for every peer's
	// inbox to become reachable before it starts its machine anyway
	// (default 2 s); waiting avoids an election among a half-formed mesh.
	PeerWait time.Duration
	// SummaryEvery is how often the node writes its summary line when
	// anything changed since the last one (default DefaultSummaryEvery).
	SummaryEvery time.Duration
}

// Members returns the peer IDs in ring order.
func (c Config) Members() []election.NodeID {
	ids := make([]election.NodeID, len(c.Peers))
	for i, p := range c.Peers {
		ids[i] = p.ID
	}
	return ids
}

// UsageError is a bad flag or environment value; the node command exits 2
// and prints it as one line.
type UsageError struct {
	// Name is the flag (--id) or, when the value came from the
	// environment, the variable (RINGLEADER_ID).
	Name string
	// Problem says what is wrong and what would be valid.
	Problem string
}

func (e *UsageError) Error() string { return e.Name + ": " + e.Problem }

// setting is one flag with its environment variable and default.
type setting struct {
	flag, env, def, usage string
}

var settings = []setting{
	{"id", "RINGLEADER_ID", "", "this node's ID, a positive integer (required)"},
	{"peers", "RINGLEADER_PEERS", "", "every member in ring order, ID=HOST[:CLUSTERPORT],... including this node (required)"},
	{"algorithm", "RINGLEADER_ALGORITHM", "bully", "election algorithm"},
	{"program", "RINGLEADER_PROGRAM", "", "instead of the algorithm: a program's command line (docs/protocol.md), words split at spaces, hosted as a child process"},
	{"program-timeout", "RINGLEADER_PROGRAM_TIMEOUT", "", "with --program: how long the program has to answer one event before the node ends as a crash (default 5s; the first answer of a process at least 20s)"},
	{"quorum", "RINGLEADER_QUORUM", "", "none or majority (default: the algorithm's default)"},
	{"option", "RINGLEADER_OPTIONS", "", "an algorithm option NAME=VALUE (repeatable, or NAME=VALUE,...); the variable holds the whole list"},
	{"heartbeat", "RINGLEADER_HEARTBEAT", "100ms", "leader heartbeat interval"},
	{"suspicion", "RINGLEADER_SUSPICION", "500ms", "silence after which a follower suspects the leader"},
	{"answer", "RINGLEADER_ANSWER", "200ms", "how long to wait for an answer"},
	{"cluster", "RINGLEADER_CLUSTER", "ringleader", "cluster name: NATS cluster name and subject namespace"},
	{"client-port", "RINGLEADER_CLIENT_PORT", "4222", "embedded NATS client port"},
	{"cluster-port", "RINGLEADER_CLUSTER_PORT", "6222", "embedded NATS cluster (route) port"},
	{"listen-host", "RINGLEADER_LISTEN_HOST", "0.0.0.0", "address the embedded NATS server listens on"},
	{"nats-url", "RINGLEADER_NATS_URL", "", "external NATS server URL(s) instead of the embedded server"},
	{"secret-file", "RINGLEADER_SECRET_FILE", "", "file holding the cluster's secret (default: the secret is read from RINGLEADER_SECRET)"},
	{"status-addr", "RINGLEADER_STATUS_ADDR", ":8080", "status HTTP address; empty disables"},
	{"state-dir", "RINGLEADER_STATE_DIR", "/var/lib/ringleader", "directory for durable state"},
	{"log-level", "RINGLEADER_LOG_LEVEL", "info", "info, debug (adds a line per message sent and received) or trace (adds the NATS server's own log)"},
	{"seed", "RINGLEADER_SEED", "", "seed for the machine's randomness (default: from id and time)"},
	{"clock-rate", "RINGLEADER_CLOCK_RATE", "1", "the rate of the clock the election machine reads (a clock fault: 0.5 runs at half speed)"},
	{"gated", "RINGLEADER_GATED", "false", "boot without electing until a control request {\"start\":true} starts the machine (the harness puts a scenario's opening faults in place first)"},
}

// ParseArgs builds a Config from command-line arguments and the environment
// (getenv, usually os.Getenv); a flag wins over its variable. It returns
// flag.ErrHelp after printing usage to out for -h, and a *UsageError naming
// the offending flag or variable for any bad value.
func ParseArgs(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	fs := flag.NewFlagSet("ringleader node", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := make(map[string]*string, len(settings))
	for _, s := range settings {
		def := s.def
		if v, ok := lookup(getenv, s.env); ok {
			def = v
		}
		usage := fmt.Sprintf("%s (env %s)", s.usage, s.env)
		if s.flag == "option" {
			l := &listFlag{joined: def}
			vals[s.flag] = &l.joined
			fs.Var(l, s.flag, usage)
			continue
		}
		vals[s.flag] = fs.String(s.flag, def, usage)
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: ringleader node [flags]\n\nRuns one election node with its embedded NATS server.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(out, "\nEnvironment:\n  %s\n    \tthe cluster's shared secret, %d to %d printable ASCII characters (required\n    \twith the embedded server; every client and route must present it; see docs/trust.md)\n", trust.SecretEnv, trust.MinSecretLen, trust.MaxSecretLen)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, &UsageError{Name: "flags", Problem: err.Error()}
	}
	if fs.NArg() > 0 {
		return Config{}, &UsageError{Name: "arguments", Problem: fmt.Sprintf("unexpected %q: the node takes flags only", fs.Arg(0))}
	}
	onCmdLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCmdLine[f.Name] = true })
	bad := func(name, format string, a ...any) error {
		n := "--" + name
		if !onCmdLine[name] {
			for _, s := range settings {
				if s.flag == name {
					if _, ok := lookup(getenv, s.env); ok {
						n = s.env
					}
				}
			}
		}
		return &UsageError{Name: n, Problem: fmt.Sprintf(format, a...)}
	}
	get := func(name string) string { return strings.TrimSpace(*vals[name]) }

	var c Config
	id, err := strconv.Atoi(get("id"))
	if err != nil || id <= 0 {
		return Config{}, bad("id", "%q is not a positive integer node ID", get("id"))
	}
	c.ID = election.NodeID(id)

	if get("peers") == "" {
		return Config{}, bad("peers", "required: every member as ID=HOST[:CLUSTERPORT], comma-separated, in ring order")
	}
	if c.Peers, err = ParsePeers(get("peers")); err != nil {
		return Config{}, bad("peers", "%v", err)
	}
	if !containsID(c.Peers, c.ID) {
		return Config{}, bad("peers", "does not include this node's ID %d (add %d=HOST)", c.ID, c.ID)
	}

	if p := get("program"); p != "" {
		return parseProgram(c, p, get, getenv, bad)
	}
	c.Algorithm = get("algorithm")
	alg, err := election.Lookup(c.Algorithm)
	if err != nil {
		return Config{}, bad("algorithm", "%v", err)
	}
	if alg.SimOnly {
		return Config{}, bad("algorithm", "%s runs only in the simulator (it needs synchrony a network cannot give)", c.Algorithm)
	}

	if c.Quorum, err = election.ParseQuorum(get("quorum")); err != nil {
		return Config{}, bad("quorum", "%v", err)
	}
	given, err := election.ParseOptions(get("option"))
	if err != nil {
		return Config{}, bad("option", "%v", err)
	}
	if c.Quorum, err = alg.ResolveQuorum(c.Quorum); err != nil {
		return Config{}, bad("quorum", "%v", err)
	}
	if c.Options, err = alg.ResolveOptions(given); err != nil {
		return Config{}, bad("option", "%v", err)
	}

	return parseRest(c, get, getenv, bad)
}

// badFunc makes a UsageError naming a setting as it was given (flag or
// environment variable).
type badFunc func(name, format string, a ...any) error

// parseProgram is ParseArgs for a node that hosts a program: quorum none
// unless given, no options (protocol version 1 declares none).
func parseProgram(c Config, cmdline string, get, getenv func(string) string, bad badFunc) (Config, error) {
	c.Program = strings.Fields(cmdline)
	var err error
	if c.Quorum, err = election.ParseQuorum(get("quorum")); err != nil {
		return Config{}, bad("quorum", "%v", err)
	}
	if c.Quorum == election.QuorumDefault {
		c.Quorum = election.NoQuorum
	}
	if get("option") != "" {
		return Config{}, bad("option", "a program takes no options (docs/protocol.md, version 1)")
	}
	if v := get("program-timeout"); v != "" {
		if c.ProgramTimeout, err = time.ParseDuration(v); err != nil || c.ProgramTimeout <= 0 {
			return Config{}, bad("program-timeout", "%q is not a positive duration (for example 5s)", v)
		}
	}
	return parseRest(c, get, getenv, bad)
}

// parseRest reads the settings after the algorithm's: timing, cluster,
// ports, files and the rest.
func parseRest(c Config, get, getenv func(string) string, bad badFunc) (Config, error) {
	var err error
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"heartbeat", &c.Timing.Heartbeat}, {"suspicion", &c.Timing.Suspicion}, {"answer", &c.Timing.Answer}} {
		v, err := time.ParseDuration(get(d.name))
		if err != nil || v <= 0 {
			return Config{}, bad(d.name, "%q is not a positive duration (for example 250ms)", get(d.name))
		}
		*d.dst = v
	}
	if c.Timing.Suspicion <= c.Timing.Heartbeat {
		return Config{}, bad("suspicion", "%v must be longer than the heartbeat %v, or followers suspect a live leader", c.Timing.Suspicion, c.Timing.Heartbeat)
	}

	c.Cluster = get("cluster")
	if !validToken(c.Cluster) {
		return Config{}, bad("cluster", "%q: want letters, digits, '_' or '-' (it becomes a NATS subject token)", c.Cluster)
	}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"client-port", &c.ClientPort}, {"cluster-port", &c.ClusterPort}} {
		v, err := strconv.Atoi(get(p.name))
		if err != nil || v < 1 || v > 65535 {
			return Config{}, bad(p.name, "%q is not a TCP port (1-65535)", get(p.name))
		}
		*p.dst = v
	}
	c.ListenHost = get("listen-host")
	if c.ListenHost == "" {
		return Config{}, bad("listen-host", "empty: want an address such as 0.0.0.0")
	}
	c.NATSURL = get("nats-url")
	for _, u := range strings.Split(c.NATSURL, ",") {
		if c.NATSURL == "" {
			break
		}
		pu, err := url.Parse(strings.TrimSpace(u))
		if err != nil || pu.Host == "" || (pu.Scheme != "nats" && pu.Scheme != "tls" && pu.Scheme != "ws" && pu.Scheme != "wss") {
			return Config{}, bad("nats-url", "%q: want nats://HOST:PORT (or tls://, ws://, wss://), comma-separated", u)
		}
	}
	if c.Secret, err = trust.ReadSecret(get("secret-file"), getenv); err != nil {
		return Config{}, bad("secret-file", "%v", err)
	}
	if c.Secret == "" && c.NATSURL == "" {
		return Config{}, &UsageError{Name: trust.SecretEnv, Problem: "required: the cluster's shared secret, which its NATS servers demand of every client and route (make up generates one; see docs/trust.md)"}
	}
	if c.Secret != "" {
		if err := trust.CheckSecret(c.Secret); err != nil {
			name := trust.SecretEnv
			if get("secret-file") != "" {
				name = "--secret-file"
			}
			return Config{}, &UsageError{Name: name, Problem: err.Error()}
		}
	}
	c.StatusAddr = get("status-addr")
	if c.StatusAddr != "" {
		if _, port, err := net.SplitHostPort(c.StatusAddr); err != nil || port == "" {
			return Config{}, bad("status-addr", "%q: want [HOST]:PORT such as :8080, or empty to disable", c.StatusAddr)
		}
	}
	c.StateDir = get("state-dir")
	if c.StateDir == "" {
		return Config{}, bad("state-dir", "empty: want a writable directory such as /var/lib/ringleader")
	}
	lvl, err := logrus.ParseLevel(get("log-level"))
	if err != nil || lvl < logrus.InfoLevel {
		return Config{}, bad("log-level", "%q: want info, debug or trace (a quieter level would hide the boot, view, drop and stop lines)", get("log-level"))
	}
	c.LogLevel = lvl
	if s := get("seed"); s != "" {
		if c.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return Config{}, bad("seed", "%q is not an unsigned integer", s)
		}
	} else {
		c.Seed = uint64(time.Now().UnixNano()) ^ uint64(c.ID)<<48
	}
	rate, err := strconv.ParseFloat(get("clock-rate"), 64)
	if err != nil {
		return Config{}, bad("clock-rate", "%q is not a number (1 is real speed, 0.5 half speed)", get("clock-rate"))
	}
	if err := clock.CheckRate(rate); err != nil {
		return Config{}, bad("clock-rate", "%v", err)
	}
	c.ClockRate = rate
	if c.Gated, err = strconv.ParseBool(get("gated")); err != nil {
		return Config{}, bad("gated", "%q: want true or false", get("gated"))
	}
	return c, nil
}

// listFlag is a repeatable flag whose values join with commas; the first
// use on the command line replaces the value the environment gave.
type listFlag struct {
	joined string
	set    bool
}

func (l *listFlag) String() string { return l.joined }

func (l *listFlag) Set(v string) error {
	if !l.set || l.joined == "" {
		l.joined, l.set = v, true
		return nil
	}
	l.joined += "," + v
	return nil
}

func lookup(getenv func(string) string, name string) (string, bool) {
	if getenv == nil {
		return "", false
	}
	v := getenv(name)
	return v, v != ""
}

// ParsePeers parses ID=HOST[:CLUSTERPORT],... keeping the order.
func ParsePeers(s string) ([]Peer, error) {
	var peers []Peer
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		idStr, addr, ok := strings.Cut(item, "=")
		if !ok || addr == "" {
			return nil, fmt.Errorf("%q: want ID=HOST[:CLUSTERPORT]", item)
		}
		id, err := strconv.Atoi(strings.TrimSpace(idStr))
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%q: %q is not a positive integer ID", item, idStr)
		}
		p := Peer{ID: election.NodeID(id), Host: addr, Port: DefaultClusterPort}
		if h, port, err := net.SplitHostPort(addr); err == nil {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%q: port %q is not 1-65535", item, port)
			}
			p.Host, p.Port = h, n
		} else if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "[") {
			return nil, fmt.Errorf("%q: %v", item, err)
		}
		if p.Host == "" {
			return nil, fmt.Errorf("%q: empty host", item)
		}
		if containsID(peers, p.ID) {
			return nil, fmt.Errorf("ID %d appears twice", p.ID)
		}
		peers = append(peers, p)
	}
	return peers, nil
}

// FormatPeers is the inverse of ParsePeers.
func FormatPeers(peers []Peer) string {
	parts := make([]string, len(peers))
	for i, p := range peers {
		parts[i] = fmt.Sprintf("%d=%s", p.ID, net.JoinHostPort(p.Host, strconv.Itoa(p.Port)))
	}
	return strings.Join(parts, ",")
}

func containsID(peers []Peer, id election.NodeID) bool {
	for _, p := range peers {
		if p.ID == id {
			return true
		}
	}
	return false
}

func validToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
