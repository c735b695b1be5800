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
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

func init() {
	commands["up"] = command{summary: "start a real server's cluster (etcd, nats-jetstream, a system file) and leave it running (SYSTEM= make up)", run: runUp}
}

// runUp: exit 0 once the cluster runs and has a leader, 2 for a bad flag or
// system, 1 when the engine, a build or the start fails (whatever started
// is then removed).
func runUp(args []string) int {
	fs := flag.NewFlagSet("ringleader up", flag.ContinueOnError)
	name := fs.String("system", "", "the system: etcd, nats-jetstream or a system file (required; docs/systems.md)")
	nodes := fs.Int("nodes", 5, "how many members")
	opts := fs.String("options", "", "the system's options, NAME=VALUE,... (the others stay the server's defaults)")
	run := fs.String("run", docker.ComposeRun, "the cluster's run label; compose is the one make down removes and fault, watch and run --attach default to")
	image := fs.String("image", defaultImage, "the node image the netfilter helpers run from")
	build := fs.Bool("build", true, "build the node image from this source tree first")
	verbose := fs.Bool("v", false, "print the builds' and the start's progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader up --system NAME [flags]\n\n"+
			"Starts a real server's cluster (docs/systems.md) as the docker backend starts a\n"+
			"scenario's, labelled with the run (default compose) and owned by nobody, waits for\n"+
			"its members to agree on a leader, prints them and leaves the cluster running for\n"+
			"`ringleader fault`, `run --attach` and `make down` (ringleader clean --run compose).\n\n"+
			"Examples:\n"+
			"  ringleader up --system etcd\n"+
			"  ringleader up --system etcd --nodes 3 --options election_ms=500,heartbeat_ms=50\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if *name == "" {
		return usageError("up", "--system is required (built in: %s, or a system file)", strings.Join(system.Builtins(), ", "))
	}
	sys, err := system.Lookup(*name, ".")
	if err != nil {
		return usageError("up", "%v", err)
	}
	if *nodes < 1 || *nodes > 64 {
		return usageError("up", "--nodes %d: want 1 to 64", *nodes)
	}
	given, err := election.ParseOptions(*opts)
	if err != nil {
		return usageError("up", "--options: %v", err)
	}
	alg := sys.Algorithm()
	if _, _, err := alg.Resolve(election.Majority, given); err != nil {
		return usageError("up", "--options: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if left, err := docker.Leftovers(ctx, *run); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader up: %v\n", err)
		return 1
	} else if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "ringleader up: a cluster labelled %s=%s exists already (%s); `make down` removes it\n", docker.LabelRun, *run, strings.Join(left, ", "))
		return 1
	}
	var progress io.Writer = io.Discard
	if *verbose {
		progress = os.Stderr
	}
	b := docker.New(docker.WithImage(*image), docker.WithBuild(*build), docker.WithReaper(false), docker.WithProgress(progress), docker.WithWarnings(os.Stderr))
	spec := chaos.ClusterSpec{Name: *run, Algorithm: sys.Name, Quorum: election.Majority, System: sys, SystemOptions: given}
	for i := 1; i <= *nodes; i++ {
		spec.Members = append(spec.Members, election.NodeID(i))
	}
	fmt.Fprintf(os.Stderr, "starting %d %s %s members as run %s (building what changed first)\n", *nodes, sys.Name, sys.Version, *run)
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
		fmt.Printf("%s: %d %s members running, no leader agreed within 60 s: %s\n", *run, *nodes, sys.Name, st.Describe(spec.Members))
		return 0
	}
	fmt.Printf("%s: %d %s %s members running, leader %d: %s\n", *run, *nodes, sys.Name, sys.Version, check1Leader(st, spec.Members), st.Describe(spec.Members))
	fmt.Printf("break it: ringleader fault --run %s kill leader; remove it: make down\n", *run)
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
