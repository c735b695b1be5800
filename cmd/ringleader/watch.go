//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ringleader-dev/ringleader/docker/watch"
)

func init() {
	commands["watch"] = command{summary: "a live view of every node of a running cluster, from the container logs (a real server's members: from their probes)", run: runWatch}
}

// runWatch: exit 0 on Ctrl-C, SIGHUP or a closed output, 2 for a bad flag,
// 1 when the cluster cannot be read.
func runWatch(args []string) int {
	fs := flag.NewFlagSet("ringleader watch", flag.ContinueOnError)
	run := fs.String("run", worlds[liveWorld].defaultRun, "run label of the cluster: compose (make up), or a harness run's label")
	asJSON := fs.Bool("json", false, "one JSON record per change, for tools")
	httpAddr := fs.String("http", "", "also serve a live page of the lanes on this loopback address, e.g. 127.0.0.1:8090")
	engines := enginesFlag(fs, "watch a cluster that spans these Docker engines, showing which engine holds each node")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader watch [flags]\n\n"+
			"Shows every node of a running cluster as it goes: the leader it views, its\n"+
			"epoch and role, messages sent and received a second, the faults that can be\n"+
			"seen (down, paused, no network, drops) and an ALARM while two or more nodes\n"+
			"hold role leader. It reads the containers' logs and states from the Docker\n"+
			"engine, never the cluster's network, so it sees through every fault and\n"+
			"changes nothing it watches. A real server's members (docs/systems.md) write\n"+
			"no event lines: those it asks who leads, over their probe, every 200 ms.\n"+
			"With --engines (or RINGLEADER_ENGINES) it finds the nodes on every engine\n"+
			"named and shows which engine holds each.\n"+
			"On a terminal the view is redrawn in place;\n"+
			"otherwise it prints one line per change. See docs/watch.md.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if fs.NArg() > 0 {
		return usageError("watch", "unexpected argument %q (flags only)", fs.Arg(0))
	}
	if *httpAddr != "" {
		if err := watch.CheckLoopback(*httpAddr); err != nil {
			return usageError("watch", "--http: %v", err)
		}
	}
	out := watch.Lines
	switch {
	case *asJSON:
		out = watch.JSON
	case isTerminal(os.Stdout):
		out = watch.Screen
	}
	// A closed pipe must end the watch quietly: with SIGPIPE ignored a
	// write fails with EPIPE instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	es, err := connectEngines(ctx, *engines)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader watch: --engines: %v\n", err)
		return 1
	}
	srcs, closeEngines, err := worlds[liveWorld].watch(ctx, es)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader watch: %v\n", err)
		return 1
	}
	defer closeEngines()
	err = watch.Run(ctx, watch.Options{Run: *run, Output: out, Out: os.Stdout, HTTP: *httpAddr, Engines: srcs,
		Served: func(url string) { fmt.Fprintf(os.Stderr, "watch: live page on %s\n", url) }})
	switch {
	case err == nil, watch.OutputClosed(err):
		return 0
	default:
		fmt.Fprintf(os.Stderr, "ringleader %v\n", err)
		return 1
	}
}

// isTerminalWriter is isTerminal for a writer that may not be a file.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// isTerminal reports whether f is a terminal (it has terminal settings).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
