//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

func init() {
	commands["up"] = command{summary: "start a real server's cluster (etcd, nats-jetstream, a system file), or an algorithm's across Docker engines, and leave it running", run: runUp}
}

// runUp: exit 0 once the cluster runs and has a leader, 2 for a bad flag or
// system, 1 when the engine, a build or the start fails (whatever started
// is then removed).
func runUp(args []string) int {
	fs := flag.NewFlagSet("ringleader up", flag.ContinueOnError)
	name := fs.String("system", "", "the system: etcd, nats-jetstream or a system file (docs/systems.md)")
	algorithm := fs.String("algorithm", "", "instead of a system, an election algorithm's nodes (bully, ...), as make up starts them on one engine")
	quorum := fs.String("quorum", "", "with --algorithm: the quorum mode (none, majority; default the algorithm's)")
	engines := enginesFlag(fs, "with --algorithm: spread the nodes round-robin over these Docker engines")
	nodes := fs.Int("nodes", 5, "how many members")
	opts := fs.String("options", "", "the system's options, NAME=VALUE,... (the others stay the server's defaults)")
	run := fs.String("run", docker.ComposeRun, "the cluster's run label; compose is the one make down removes and fault, watch and run --attach default to")
	image := fs.String("image", defaultImage, "the node image the netfilter helpers run from")
	build := fs.Bool("build", true, "build the node image from this source tree first")
	verbose := fs.Bool("v", false, "print the builds' and the start's progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader up --system NAME [flags]\n       ringleader up --algorithm NAME --engines A,B,... [flags]\n\n"+
			"Starts a real server's cluster (docs/systems.md) as the docker backend starts a\n"+
			"scenario's, labelled with the run (default compose) and owned by nobody, waits for\n"+
			"its members to agree on a leader, prints them and leaves the cluster running for\n"+
			"`ringleader fault`, `watch`, `run --attach` and `make down` (ringleader clean --run compose).\n"+
			"With --algorithm it starts that election algorithm's nodes instead, and with\n"+
			"--engines (or RINGLEADER_ENGINES) across those Docker engines (docs/engines.md):\n"+
			"fault, watch and run --attach reach it with the same --engines, and\n"+
			"`ringleader clean --engines A,B,... --run compose` removes it.\n\n"+
			"Examples:\n"+
			"  ringleader up --system etcd\n"+
			"  ringleader up --system etcd --nodes 3 --options election_ms=500,heartbeat_ms=50\n"+
			"  ringleader up --algorithm bully --quorum majority --engines unix:///var/run/docker.sock,unix:///var/run/ringleader-h2.sock\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if (*name == "") == (*algorithm == "") {
		return usageError("up", "name either --system (built in: %s, or a system file) or --algorithm (%s)", strings.Join(system.Builtins(), ", "), algorithmNames())
	}
	if *nodes < 1 || *nodes > 64 {
		return usageError("up", "--nodes %d: want 1 to 64", *nodes)
	}
	if *engines != "" {
		if _, err := engine.ParseList(*engines); err != nil {
			return usageError("up", "--engines: %v", err)
		}
	}
	spec, what, err := upSpec(*name, *algorithm, *quorum, *opts, *run, *nodes, *engines != "")
	if err != nil {
		return usageError("up", "%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	es, err := connectEngines(ctx, *engines)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader up: --engines: %v\n", err)
		return 1
	}
	if code := upNothingLeft(ctx, es, *run); code != 0 {
		return code
	}
	var progress io.Writer = io.Discard
	if *verbose {
		progress = os.Stderr
	}
	b := docker.New(docker.WithImage(*image), docker.WithBuild(*build), docker.WithReaper(false), docker.WithProgress(progress), docker.WithWarnings(os.Stderr), docker.WithEngines(es))
	across := ""
	if len(es) > 1 {
		across = fmt.Sprintf(" across %d engines", len(es))
	}
	fmt.Fprintf(os.Stderr, "starting %d %s as run %s%s (building what changed first)\n", *nodes, what, *run, across)
	if err := b.Start(ctx, spec, nil); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader up: %v\n", err)
		if cerr := b.Close(context.Background()); cerr != nil {
			fmt.Fprintf(os.Stderr, "ringleader up: %v\n", cerr)
		}
		return 1
	}
	b.Keep()
	defer b.Close(context.Background())
	leads := func(s chaos.State) bool {
		return check1Leader(s, spec.Members) != election.None
	}
	ok, err := b.Await(ctx, 60*time.Second, leads)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader up: %v\n", err)
		return 1
	}
	st := b.State()
	if !ok {
		fmt.Printf("%s: %d %s running, no leader agreed within 60 s: %s\n", *run, *nodes, what, st.Describe(spec.Members))
		return 0
	}
	fmt.Printf("%s: %d %s running, leader %d: %s\n", *run, *nodes, what, check1Leader(st, spec.Members), st.Describe(spec.Members))
	if hosts, p := b.Placement(); len(p) > 1 {
		list := strings.Join(hosts, ",")
		for i, g := range p {
			fmt.Printf("engine %s holds nodes %s\n", hosts[i], chaos.IDList(g))
		}
		fmt.Printf("break it: ringleader fault --engines %s --run %s partition engines; watch it: ringleader watch --engines %s --run %s; remove it: ringleader clean --engines %s --run %s\n", list, *run, list, *run, list, *run)
		return 0
	}
	fmt.Printf("break it: ringleader fault --run %s kill leader; remove it: make down\n", *run)
	return 0
}

// algorithmNames lists the algorithms that run in containers.
func algorithmNames() string {
	var names []string
	for _, a := range election.Algorithms() {
		if !a.SimOnly {
			names = append(names, a.Name)
		}
	}
	return strings.Join(names, ", ")
}

// upSpec is the cluster up starts: a system's members, or an algorithm's
// nodes (quorum and options as the algorithm resolves them); what names
// them for people. A system runs on one engine.
func upSpec(sysName, algName, quorum, opts, run string, nodes int, engines bool) (chaos.ClusterSpec, string, error) {
	given, err := election.ParseOptions(opts)
	if err != nil {
		return chaos.ClusterSpec{}, "", fmt.Errorf("--options: %v", err)
	}
	spec := chaos.ClusterSpec{Name: run, Members: election.FirstIDs(nodes)}
	if sysName != "" {
		if engines {
			return chaos.ClusterSpec{}, "", fmt.Errorf("--engines: a system's cluster runs on one engine (unset %s, or start an --algorithm's nodes)", engine.EnginesEnv)
		}
		if quorum != "" {
			return chaos.ClusterSpec{}, "", fmt.Errorf("--quorum goes with --algorithm; a system is majority")
		}
		sys, err := system.Lookup(sysName, ".")
		if err != nil {
			return chaos.ClusterSpec{}, "", err
		}
		if _, _, err := sys.Algorithm().Resolve(election.Majority, given); err != nil {
			return chaos.ClusterSpec{}, "", fmt.Errorf("--options: %v", err)
		}
		spec.Algorithm, spec.Quorum, spec.System, spec.SystemOptions = sys.Name, election.Majority, sys, given
		return spec, fmt.Sprintf("%s %s members", sys.Name, sys.Version), nil
	}
	alg, err := election.Lookup(algName)
	if err != nil {
		return chaos.ClusterSpec{}, "", fmt.Errorf("--algorithm: %v", err)
	}
	if alg.SimOnly {
		return chaos.ClusterSpec{}, "", fmt.Errorf("--algorithm %s runs in the simulator only (it needs synchrony a real network cannot give)", alg.Name)
	}
	q, err := election.ParseQuorum(quorum)
	if err != nil {
		return chaos.ClusterSpec{}, "", fmt.Errorf("--quorum: %v", err)
	}
	if q, given, err = alg.Resolve(q, given); err != nil {
		return chaos.ClusterSpec{}, "", fmt.Errorf("--quorum, --options: %v", err)
	}
	spec.Algorithm, spec.Quorum, spec.Options = alg.Name, q, given
	return spec, fmt.Sprintf("%s nodes (quorum %s)", alg.Name, q.Text()), nil
}

// upNothingLeft refuses to start a cluster under a run label that
// something on one of the engines (the process's own when es is empty)
// carries already. Status 0 when nothing does.
func upNothingLeft(ctx context.Context, es []engine.Engine, run string) int {
	var (
		left []string
		err  error
	)
	if len(es) == 0 {
		left, err = docker.Leftovers(ctx, run)
	}
	for _, e := range es {
		var l []string
		if l, err = docker.LeftoversOn(ctx, e, run, nil); err != nil {
			break
		}
		left = append(left, l...)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader up: %v\n", err)
		return 1
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "ringleader up: a cluster labelled %s=%s exists already (%s); `make down` (or ringleader clean --run %s, with the same --engines) removes it\n", docker.LabelRun, run, strings.Join(left, ", "), run)
		return 1
	}
	return 0
}

// check1Leader is the leader every member views, when they agree on a live
// one that views itself leading; None otherwise.
func check1Leader(s chaos.State, members []election.NodeID) election.NodeID {
	var l election.NodeID
	for _, m := range members {
		v, ok := s.Views[m]
		if !ok || v.Leader == election.None || (l != election.None && v.Leader != l) {
			return election.None
		}
		l = v.Leader
	}
	if l != election.None && s.Views[l].Role != election.Leader {
		return election.None
	}
	return l
}
