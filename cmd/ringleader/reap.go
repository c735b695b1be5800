package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/reaper"
)

func init() {
	commands["reap"] = command{
		summary: "watch a run and remove it when the harness goes (the docker backend's reaper container)",
		run:     runReap,
	}
}

const reapUsage = `Usage: ringleader reap --run ID [--deadline D]

Prints READY once the engine answers, then reads standard input. When it
ends (the harness closed it, or died and the engine closed it) every
container, network and volume labelled org.ringleader.run=ID is removed,
containers of role reaper excepted. The docker backend runs it, one per run,
as a container from the node image with the engine's socket mounted and its
standard input attached:

  docker create -i --user 0 --network none --read-only --cap-drop ALL \
    -v /var/run/docker.sock:/var/run/docker.sock --rm <image> reap --run ID

SIGTERM or SIGINT reaps at once.
`

// runReap: 0 when everything of the run is gone, 1 when something stays,
// 2 for bad flags.
func runReap(args []string) int {
	fs := flag.NewFlagSet("reap", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), reapUsage); printFlags(fs.Output(), fs) }
	run := fs.String("run", "", "the run label (org.ringleader.run) to watch")
	deadline := fs.Duration("deadline", 5*time.Minute, "give up sweeping after this long")
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if *run == "" || fs.NArg() > 0 {
		return usageError("reap", "want --run ID and nothing else")
	}
	e, err := engine.Resolve()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader reap: %v\n", err)
		return 1
	}
	cli, err := e.Client()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader reap: %v\n", err)
		return 1
	}
	defer cli.Close()
	// A signal ends the watch as a dropped connection would.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := reaper.Watch(ctx, cli, *run, os.Stdin, os.Stdout, *deadline); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader reap: %v\n", err)
		return 1
	}
	return 0
}
