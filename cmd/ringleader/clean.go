//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos/docker"
	"github.com/ringleader-dev/ringleader/chaos/docker/reaper"
)

func init() {
	commands["clean"] = command{
		summary: "remove every container, network and image a ringleader run left (or one run's with --run)",
		run:     runClean,
	}
}

func runClean(args []string) int {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader clean [--run ID]\n\n"+
			"Removes what carries the label %s=%s, %d at a time: containers (with their\n"+
			"volumes), networks, volumes and, without --run, the built node images and the\n"+
			"temporary directories of image builds whose process is gone. With --run only that\n"+
			"run's containers, volumes and network (label %s=ID; the compose cluster's run is\n"+
			"\"compose\"). Exits 1 and names what is left when something stays.\n\n",
			docker.LabelProject, docker.Project, reaper.Parallel, docker.LabelRun)
		fs.PrintDefaults()
	}
	run := fs.String("run", "", "remove only this run's containers and network")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "ringleader clean: unexpected argument %q (valid: --run ID, --timeout D)\n", fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var (
		rm  docker.Removed
		err error
	)
	if *run != "" {
		rm, err = docker.CleanRun(ctx, *run)
	} else {
		rm, err = docker.CleanAll(ctx)
	}
	for _, l := range rm.Lines() {
		fmt.Println("removed", l)
	}
	if *run == "" {
		for _, d := range docker.RemoveStaleBuildDirs() {
			fmt.Println("removed build directory", d)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader clean: %v\n", err)
	}
	// Done means nothing is left, not that the time ran out: look.
	lctx, lcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer lcancel()
	left, lerr := docker.Leftovers(lctx, *run)
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
	if len(rm.Lines()) == 0 {
		fmt.Println("nothing to remove")
	}
	return 0
}
