//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/reaper"
)

func init() {
	commands["clean"] = command{
		summary: "remove every container, network and image a ringleader run left (or one run's with --run); live runs stay",
		run:     runClean,
	}
}

func runClean(args []string) int {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader clean [--run ID] [--force] [--engines A,B,...]\n\n"+
			"Removes what carries the label %s=%s, %d at a time: containers (with their\n"+
			"volumes), networks, volumes and, without --run, the built node images and the\n"+
			"temporary directories of image builds whose process is gone. With --run only that\n"+
			"run's containers, volumes and network (label %s=ID; the compose cluster's run is\n"+
			"\"compose\").\n\n"+
			"A run a live process owns is left, with the images its containers use, and named\n"+
			"with the reason: its owner (label %s: host, PID and start time) still\n"+
			"runs, or runs on a machine this one cannot check, or (runs of older builds) its\n"+
			"reaper is still attached. --force removes those too.\n\n"+
			"With --engines (or RINGLEADER_ENGINES) every engine named is cleaned, the first last;\n"+
			"each must answer before any is touched.\n\n"+
			"Exits 0 when nothing but live runs is left, 1 naming what else stays, 2 for bad\n"+
			"flags.\n\n",
			docker.LabelProject, docker.Project, reaper.Parallel, docker.LabelRun, docker.LabelOwner)
		printFlags(fs.Output(), fs)
	}
	run := fs.String("run", "", "remove only this run's containers and network")
	force := fs.Bool("force", false, "remove runs a live process owns, and the images they use, too")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	engines := fs.String("engines", os.Getenv(engine.EnginesEnv), "clean every one of these Docker engines, `A,B,...` (hosts or contexts; a run across engines left something on each); default $"+engine.EnginesEnv)
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if fs.NArg() > 0 {
		return usageError("clean", "unexpected argument %q (valid: --run ID, --force, --timeout D)", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *engines != "" {
		return cleanEngines(ctx, *engines, *run, *force)
	}
	if _, err := docker.Connect(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader clean: %v\n", err)
		return 1
	}
	var (
		c   docker.Cleaned
		err error
	)
	if *run != "" {
		c, err = docker.CleanRun(ctx, *run, *force)
	} else {
		c, err = docker.CleanAll(ctx, *force)
	}
	for _, l := range c.Lines() {
		fmt.Println("removed", l)
	}
	if *run == "" {
		for _, d := range docker.RemoveStaleBuildDirs() {
			fmt.Println("removed build directory", d)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(c.LiveRuns)) {
		fmt.Printf("left run %s: %s (--force removes it)\n", r, c.LiveRuns[r])
	}
	for _, k := range c.Kept {
		if strings.HasPrefix(k, "image ") {
			fmt.Println("left", k)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader clean: %v\n", err)
	}
	// Done means nothing is left, not that the time ran out: look.
	lctx, lcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer lcancel()
	left, lerr := docker.Leftovers(lctx, *run, c.LiveRuns)
	switch {
	case lerr != nil:
		fmt.Fprintf(os.Stderr, "ringleader clean: cannot tell what is left: %v\n", lerr)
		return 1
	case len(left) > 0:
		fmt.Fprintf(os.Stderr, "ringleader clean: still there (%d): %s\n", len(left), strings.Join(left, ", "))
		return 1
	case err != nil:
		return 1
	}
	if len(c.Lines()) == 0 && len(c.LiveRuns) == 0 {
		fmt.Println("nothing to remove")
	}
	return 0
}

// cleanEngines is clean on every engine of list, the first last: a run's
// overlay network lives on the first and goes once no other engine has a
// container on it. Every engine named must answer, before any is touched.
func cleanEngines(ctx context.Context, list, run string, force bool) int {
	es, err := engine.ConnectList(ctx, list)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader clean: --engines: %v\n", err)
		return 1
	}
	status, nothing := 0, true
	live := map[string]map[string]string{}
	for _, e := range slices.Backward(es) {
		c, err := docker.CleanOn(ctx, e, run, force)
		for _, l := range c.Lines() {
			fmt.Printf("removed %s on %s\n", l, e.Host)
			nothing = false
		}
		for _, r := range slices.Sorted(maps.Keys(c.LiveRuns)) {
			fmt.Printf("left run %s on %s: %s (--force removes it)\n", r, e.Host, c.LiveRuns[r])
			nothing = false
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ringleader clean: %s: %v\n", e.Host, err)
			status = 1
		}
		live[e.Host] = c.LiveRuns
	}
	// What is left is asked once every engine is swept: a worker lists
	// the run's overlay until the manager, swept last, removed it.
	for _, e := range es {
		lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		left, lerr := docker.LeftoversOn(lctx, e, run, live[e.Host])
		lcancel()
		switch {
		case lerr != nil:
			fmt.Fprintf(os.Stderr, "ringleader clean: %s: cannot tell what is left: %v\n", e.Host, lerr)
			status = 1
		case len(left) > 0:
			fmt.Fprintf(os.Stderr, "ringleader clean: %s: still there (%d): %s\n", e.Host, len(left), strings.Join(left, ", "))
			status = 1
		}
	}
	if nothing && status == 0 {
		fmt.Println("nothing to remove")
	}
	return status
}
