//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/ringleader-dev/ringleader/chaos/docker"
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
			"Removes what carries the label %s=%s: containers (with their volumes), networks,\n"+
			"volumes and, without --run, the built node images. With --run only that run's\n"+
			"containers and network (label %s=ID; the compose cluster's run is \"compose\").\n\n",
			docker.LabelProject, docker.Project, docker.LabelRun)
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
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader clean: %v\n", err)
		return 1
	}
	if len(rm.Lines()) == 0 {
		fmt.Println("nothing to remove")
	}
	return 0
}
