//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/compare"
)

func init() {
	commands["compare"] = command{summary: "run Raft and quorum Bully side by side on the same faults and print the table", run: compareCmd}
}

func compareCmd(args []string) int { return runCompare(args, os.Stdout, os.Stderr) }

// runCompare writes the table of raft (and each of its options off)
// against quorum Bully on the same faults, in the world --backend names:
// docs/raft.md holds the simulator's table (seeded: a test keeps it equal)
// and the containers' (made by this command).
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	backend := fs.String("backend", simWorld, "where the clusters run: "+worldNames())
	n := fs.Int("runs", 3, "runs per cell (run i has seed i)")
	store := fs.String("store", "", "directory of the runs' directories (default: a temporary one, removed after)")
	systems := fs.Bool("systems", false, "raft and quorum Bully beside real etcd and NATS JetStream (docker only): the table of docs/systems.md")
	write := fs.String("write", "", "also write the table into `FILE`'s generated block (docs/systems.md with --systems)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: ringleader compare [--backend "+strings.Join(slices.Sorted(maps.Keys(worlds)), "|")+"] [--runs N] [--store DIR] [--systems [--write docs/systems.md]]\n\n"+
			"Runs raft, raft with pre-vote off, raft with check-quorum off and quorum Bully on the same faults\n"+
			"(a leader killed, a leader paused, a follower cut off and returned, the leader cut off), every\n"+
			"fault --runs times, and prints the markdown table of docs/raft.md: failover p50/p95, leader\n"+
			"changes on a return, a cut-off leader's overlap, election messages of a failover. In containers\n"+
			"a cell takes about ten seconds a run. With --systems (containers only) the rows are raft, quorum Bully,\n"+
			"real etcd on raft's timing and real NATS JetStream (its elections take 4-9 s): the table of docs/systems.md.\n"+
			"Progress goes to stderr.\n"+
			"Exit status: 0 the table was printed, 1 a run failed or could not run, 2 bad flags.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlagsTo(fs, args, stderr); done {
		return status
	}
	w, ok := worlds[*backend]
	if !ok {
		return usageErrorTo(stderr, "compare", "--backend %q: want %s", *backend, worldNames())
	}
	if *systems && !w.real {
		return usageErrorTo(stderr, "compare", "--systems runs real servers, in containers: add --backend %s", liveWorld)
	}
	if *n < 1 {
		return usageErrorTo(stderr, "compare", "--runs %d: want at least 1", *n)
	}
	dir := *store
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ringleader-compare-")
		if err != nil {
			fmt.Fprintf(stderr, "ringleader compare: %v\n", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	o := worldOptions{image: defaultImage, progress: io.Discard, warnings: stderr}
	if code := buildWorld(ctx, w, o, "compare", stderr); code != 0 {
		return 1
	}
	contenders := compare.RaftAndBully
	if *systems {
		contenders = compare.WithSystems
	}
	table, err := compare.Table(ctx, contenders, compare.Options{
		World: w.title, Backend: func() chaos.Backend { return w.start(o) }, Runs: *n, Store: dir, Progress: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "ringleader compare: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, table)
	if *write != "" {
		if err := compare.WriteBlock(*write, compare.SystemsBlock, table); err != nil {
			fmt.Fprintf(stderr, "ringleader compare: %v\n", err)
			return 1
		}
	}
	return 0
}
