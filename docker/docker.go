// Package docker is the chaos backend that runs every election node in its
// own container (testcontainers-go on the local Docker engine) and injects
// real faults: signals, the cgroup freezer, and nftables rules installed
// inside node network namespaces by short-lived helper containers running
// `ringleader netfilter`. It follows every node's JSON log across restarts
// and turns the lines into history records; container logs are the
// out-of-band channel that survives the partitions it makes.
package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/netfilter"
	"github.com/ringleader-dev/ringleader/docker/reaper"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/history/logrecord"
)

// Labels every container, network, volume and image of the project carries,
// so that clean-up by label (the run's reaper, Close, `ringleader clean`)
// finds whatever a run left.
const (
	LabelProject = reaper.LabelProject
	LabelRun     = reaper.LabelRun
	LabelRole    = reaper.LabelRole
	Project      = reaper.Project

	RoleNode      = "node"
	RoleNetfilter = "netfilter"
	RoleNetwork   = "network"
	RoleReaper    = reaper.RoleReaper
)

// stateDir is where the image's VOLUME for a node's durable state sits
// (docker/Dockerfile).
const stateDir = "/var/lib/ringleader"

// DefaultImage is the node image tag of the node contract.
const DefaultImage = "ringleader-node:dev"

// configureTestcontainers sets testcontainers' two settings this project
// needs, unless the user set them: the machines have no registry, so the
// reaper (an image testcontainers would pull) must stay off; and because
// /.dockerenv exists, testcontainers believes it runs in a container and
// would dial the default gateway for published ports, an address that is
// not ours. testcontainers reads both lazily on its first call, so they are
// set when a backend is built or a client made, before any such call, and
// not on import: importing the package changes nothing.
var configureTestcontainers = sync.OnceFunc(func() {
	setDefaultEnv("TESTCONTAINERS_RYUK_DISABLED", "true")
	setDefaultEnv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
})

func setDefaultEnv(k, v string) {
	if _, ok := os.LookupEnv(k); !ok {
		os.Setenv(k, v)
	}
}

// Option configures a Backend.
type Option func(*config)

type config struct {
	image    string
	imageSet bool // WithImage was given
	build    bool
	progress io.Writer
	parallel int
	// startParallel caps the node containers Start starts at once.
	startParallel int
	// bootTimeout bounds how long Start and restart wait for boot lines.
	bootTimeout time.Duration
	reaper      bool
	warn        io.Writer
	// engines a run spans (engines.go); none or one: the one engine.
	engines []engine.Engine
	// direct: act on a node's process from this process where the
	// kernel lets it (direct_linux.go), rather than through the engine.
	direct bool
}

// WithImage sets the node image tag (default DefaultImage).
func WithImage(tag string) Option { return func(c *config) { c.image, c.imageSet = tag, true } }

// WithBuild says whether Start builds the image from this source tree
// first (default true; built at most once per process and tag). Pass false
// when the image is fresh already, e.g. after `make images`.
func WithBuild(build bool) Option { return func(c *config) { c.build = build } }

// WithProgress writes what the backend does (image build, containers
// started, fault latencies) to w, one line per step (default: nowhere).
func WithProgress(w io.Writer) Option { return func(c *config) { c.progress = w } }

// WithParallel caps how many containers start at once: nodes (default
// startParallel) and helpers (default 3: the machines have 2 cores shared
// with everything else).
func WithParallel(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.parallel, c.startParallel = n, n
		}
	}
}

// startParallel is how many node containers Start starts at once by
// default. A start is mostly the engine's own work (runc, the network
// namespace and its hook, the mounts), done in parallel as far as the
// machine's cores allow: 64 nodes started 3 at a time took 143 s on this
// 2-core machine, 16 at a time 81 s under a load four times higher
// (docs/performance.md, "How many containers").
const startParallel = 16

// WithDirect says whether the backend acts on a node's process from this
// process where the kernel lets it (default true): a kill's SIGKILL sent
// to the process, a fault's netfilter rules written into its network
// namespace. That needs the engine's processes in sight, on this machine
// and as root (or the node's user); with false, or out of sight, a kill
// goes through the engine's API and rules through a helper container
// joining the namespace, which take tens to hundreds of milliseconds more.
func WithDirect(on bool) Option { return func(c *config) { c.direct = on } }

// WithBootTimeout bounds how long Start and a restart wait for nodes to log
// event=boot (default 60 s).
func WithBootTimeout(d time.Duration) Option { return func(c *config) { c.bootTimeout = d } }

// Backend runs one cluster in containers. Create it with New; it is used
// for one run: Start once, then Apply/Await, then Close.
type Backend struct {
	cfg config

	applyMu sync.Mutex // serialises Apply
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	spec    chaos.ClusterSpec
	// nodeImage is what the nodes run: the node image, or the image
	// built from it with the run's program (program.go); programLine
	// is then the program's command line inside it.
	nodeImage   string
	programLine string
	sink        history.Sink
	run         string
	cli         *testcontainers.DockerClient
	netID       string
	netName     string
	nodes       map[election.NodeID]*node
	// world is the world model: every view, and what the faults in force
	// have done. chaos.State.Apply is the only code that changes its
	// fault part; the hooks (faults.go) then make the containers and
	// their namespaces match it.
	world chaos.State
	// applied is what each node's namespace holds now (absent: nothing):
	// what the rules were reconciled to, not what the world wants.
	applied map[election.NodeID]netfilter.Rules
	// delays are the running delay helpers, by the node whose namespace
	// each serves (delay.go).
	delays map[election.NodeID]delayHelper
	// ctl is what each node's process was last sent over the control
	// channel (nodectl.go).
	ctl map[election.NodeID]nodeControl
	// opened is set by Open: the nodes of a gated run (spec.Gated) may
	// start their machines (nodectl.go).
	opened  bool
	helpers map[string]int // helper container IDs not yet removed, with their engine (engines.go)
	// others are the engines of a run that spans several, beyond the
	// first (b.cli's); a node's eng indexes the run's engines, 0 the
	// first (engines.go).
	others []*remote
	// secret is the run's cluster secret, made by Start and handed to
	// every node in its environment (docs/trust.md).
	secret string
	// attached: the cluster was adopted by Attach, not started; Close
	// leaves it running. replaying: Attach is reading the logs back and
	// records nothing. recordFrom: when an attached history began; a
	// view logged before it but read after stands from that instant.
	attached, replaying bool
	recordFrom          time.Time
	closed              bool
	started             bool

	followers sync.WaitGroup
	// life ends when Close begins: it stops the followers and cancels
	// a Start or Apply still in flight, which Close waits for (ops)
	// before it removes anything, so nothing is created behind it.
	life   context.Context
	cancel context.CancelFunc
	ops    sync.WaitGroup
	bg     sync.WaitGroup // helper removals in the background
	reaper *watcher       // the run's reaper (reaper.go); nil without one
	// interrupted is when a Start or Apply was cancelled (an interrupt,
	// or Close) before it finished (noteInterrupted).
	interrupted time.Time
	// sysIDs maps a system's server IDs to members, learnt from each
	// member's own answers (system.go).
	sysIDs map[string]election.NodeID
}

// noteInterrupted records that an operation ended by its context
// (ctx done) with err. Cancelling abandons a request, not the engine's
// work on it: a network or container create sent just before may complete
// after Close has swept, so Close then settles (finishClose).
func (b *Backend) noteInterrupted(ctx context.Context, err error) {
	if err == nil || ctx.Err() == nil {
		return
	}
	b.mu.Lock()
	b.interrupted = time.Now()
	b.mu.Unlock()
}

// takeRunLocked makes b the backend of run, recording into sink, with
// nothing known yet; b.mu must be held.
func (b *Backend) takeRunLocked(run string, sink history.Sink) {
	b.started, b.run, b.sink = true, run, sink
	b.nodes = map[election.NodeID]*node{}
	b.world = chaos.NewState()
	b.delays = map[election.NodeID]delayHelper{}
	b.applied = map[election.NodeID]netfilter.Rules{}
	b.ctl = map[election.NodeID]nodeControl{}
	b.helpers = map[string]int{}
}

// begin registers an operation (Start, Apply) that Close must wait for and
// returns ctx cancelled also when Close begins; ok is false once closed.
func (b *Backend) begin(ctx context.Context) (context.Context, func(), bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ctx, func() {}, false
	}
	b.ops.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(b.life, cancel)
	return ctx, func() { stop(); cancel(); b.ops.Done() }, true
}

// node is one member's container and what its log follower knows.
type node struct {
	id        election.NodeID
	name      string
	cid       string                          // the container's ID
	container *testcontainers.DockerContainer // nil when attached: not ours to remove
	ip        string
	// pid is the node's process as the host sees it, while it runs
	// unpaused in a cluster this backend started (refreshIPs; 0 when
	// unknown): what a kill signals directly (killDirect).
	pid int
	// netPid is the node's process as the host sees it while its
	// container runs, paused or not (refreshIPs; 0 when unknown): whose
	// network namespace netfilter changes from here (netnsDirect).
	netPid int
	// rec reads the node's log into history records (package logrecord).
	rec *logrecord.Node
	// lastTS is the docker timestamp of the newest line read, where a
	// re-attached follower resumes (rec absorbs the overlap).
	lastTS time.Time
	// started is signalled after a restart so the follower re-attaches.
	started chan struct{}
	// busy is set while a lifecycle fault on the node is carried out,
	// and gen counts the starts and ends of those: a follower that saw
	// the container stopped marks the node down only when no fault on it
	// was in flight meanwhile (the world changes before the container
	// does, so a restart's node is up in the world before it runs).
	busy bool
	gen  int
	// said is what the node's log says its process holds of the control
	// channel's changes (its clock, its drop set), for saidBoot: what an
	// attach reads back (nodectl.go).
	said     nodeControl
	saidBoot string
	saidAt   time.Time
	// probe is what the harness knows of a system member's answers
	// (system.go); nil for an election node.
	probe *probeState
	// eng is the engine that holds the node: 0 the first, i the run's
	// i-th (engines.go). owned: the run started its container without
	// testcontainers (container is nil), and Close removes it.
	eng   int
	owned bool
}

// newNode is the book-keeping of node id's container cid.
func newNode(id election.NodeID, name, cid string, c *testcontainers.DockerContainer) *node {
	return &node{id: id, name: name, cid: cid, container: c, rec: logrecord.NewNode(id), started: make(chan struct{}, 1)}
}

// New returns a docker backend.
func New(opts ...Option) *Backend {
	configureTestcontainers()
	cfg := config{image: DefaultImage, build: true, progress: io.Discard, parallel: 3, startParallel: startParallel, bootTimeout: 60 * time.Second, reaper: true, warn: os.Stderr, direct: true}
	for _, o := range opts {
		o(&cfg)
	}
	life, cancel := context.WithCancel(context.Background())
	return &Backend{cfg: cfg, changed: make(chan struct{}), life: life, cancel: cancel}
}

var _ chaos.Backend = (*Backend)(nil)

// Name is "docker".
func (b *Backend) Name() string { return "docker" }

// Now is the wall clock: node log times are wall times on the same host.
func (b *Backend) Now() time.Time { return time.Now() }

func (b *Backend) logf(format string, args ...any) {
	fmt.Fprintf(b.cfg.progress, "docker: "+format+"\n", args...)
}

// runName is what docker accepts in container names, and short enough to
// keep them readable.
var runName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)

// notifyLocked wakes every Await; b.mu must be held.
func (b *Backend) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// State is a snapshot.
func (b *Backend) State() chaos.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked()
}

func (b *Backend) stateLocked() chaos.State { return b.world.Clone() }

// Await returns true as soon as cond holds, re-evaluating it whenever a
// record arrives or a fault changes the state, or false after d.
func (b *Backend) Await(ctx context.Context, d time.Duration, cond func(chaos.State) bool) (bool, error) {
	if cond == nil { // a fixed wait
		cond = func(chaos.State) bool { return false }
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		b.mu.Lock()
		st, ch := b.stateLocked(), b.changed
		b.mu.Unlock()
		if cond(st) {
			return true, nil
		}
		select {
		case <-ch:
		case <-t.C:
			return cond(b.State()), nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// Gaps reports how many log sequence gaps the followers noticed (lines
// the engine lost); each also went into the history as a mark.
func (b *Backend) Gaps() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	gaps := 0
	for _, n := range b.nodes {
		gaps += n.rec.Gaps
	}
	return gaps
}

// Run is the run ID (the cluster name) whose label everything carries.
func (b *Backend) Run() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.run
}

// NewClient returns a client of the engine the environment names (see
// package engine: DOCKER_HOST, the Docker context, else the default
// socket), the one the harness uses (ringleader watch reads logs and events
// with it); its error names that engine and says why it did not answer.
// Close it when done.
func NewClient(ctx context.Context) (*testcontainers.DockerClient, error) { return newClient(ctx) }

// newClient returns the Docker client testcontainers itself uses (it
// negotiates the engine's API version), pinned to the resolved engine:
// testcontainers has fallbacks of its own (an engine that does not answer
// at DOCKER_HOST makes it try the default socket), so the engine is
// pinged first, pinned, and the client testcontainers built is checked to
// dial it. Its providers, which GenericContainer and the networks use,
// share that one resolution (testcontainers caches it per process).
func newClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	configureTestcontainers()
	quietTestcontainers()
	e, err := Connect(ctx)
	if err != nil {
		return nil, err
	}
	e.Pin()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: testcontainers cannot use the engine at %s: %w", e, err)
	}
	if got := cli.DaemonHost(); got != e.Host {
		cli.Close()
		return nil, fmt.Errorf("docker: testcontainers chose the engine at %s, not %s (is tc.host set in ~/.testcontainers.properties?)", got, e)
	}
	return cli, nil
}

var quietOnce sync.Once

// quietTestcontainers stops testcontainers printing its banner and every
// container step on the process's standard error; the backend reports its
// own progress instead.
func quietTestcontainers() {
	quietOnce.Do(func() {
		if os.Getenv("RINGLEADER_TESTCONTAINERS_LOG") == "" {
			tclog.SetDefault(tclog.NewNoopLogger())
		}
	})
}

// runFilter selects what carries the project label, and the run label
// when run is not empty.
func runFilter(run string) client.Filters { return reaper.Filter(run) }

// labels are what every container, volume and network of a run carries:
// the project, the run, the role, and this process as the run's owner.
//
// The compose cluster is nobody's (compose labels its containers so, and
// `ringleader up` starts a system's compose cluster alike): it outlives
// the process that made it, and `make down` removes it.
func labels(run, role string) map[string]string {
	l := map[string]string{LabelProject: Project, LabelRun: run, LabelRole: role}
	if run != ComposeRun {
		l[LabelOwner] = self().String()
	}
	return l
}
