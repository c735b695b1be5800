//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ringleader-dev/ringleader/internal/rig"
)

func init() {
	commands["rig"] = command{
		summary:     "start or remove a second Docker engine on this machine, joined in a swarm: ringleader rig up|down|status",
		run:         runRig,
		subcommands: []string{"up", "down", "status"},
	}
}

func runRig(args []string) int {
	fs := flag.NewFlagSet("rig", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader rig up [--image IMAGE,...] | down | status\n\n"+
			"up makes a second Docker engine on this machine (root only): network namespace %s,\n"+
			"veth %s %s <-> %s %s, a dockerd on unix://%s, and a swarm of the first\n"+
			"engine (manager) and the second (worker), with the images named copied across.\n"+
			"It refuses when the first engine is already in a swarm: ringleader never joins or\n"+
			"leaves a swarm it did not make. It prints the engines for --engines.\n\n"+
			"down removes exactly what up made, as its state file (%s/state.json) records;\n"+
			"an interrupted up removes what it made before it exits.\n\n",
			rig.Netns, rig.HostVeth, rig.HostAddr, rig.NsVeth, rig.NsAddr, rig.Socket, rig.Dir())
		printFlags(fs.Output(), fs)
	}
	images := fs.String("image", "", "images to copy into the second engine, comma-separated")
	if len(args) == 0 {
		return usageError("rig", "missing subcommand (valid: up, down, status)")
	}
	sub, rest := args[0], args[1:]
	if sub == "-h" || sub == "--help" {
		rest, sub = args, "help"
	}
	if status, done := parseFlags(fs, rest); done {
		return status
	}
	if fs.NArg() > 0 {
		return usageError("rig", "unexpected argument %q", fs.Arg(0))
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	switch sub {
	case "up":
		return rigUp(splitList(*images), logf)
	case "down":
		return rigDown(logf)
	case "status":
		st, err := rig.Load(rig.Dir())
		if err != nil {
			fmt.Fprintf(os.Stderr, "ringleader rig: %v\n", err)
			return 1
		}
		fmt.Printf("RINGLEADER_ENGINES=%s\n", strings.Join(st.Engines(), ","))
		return 0
	}
	if *images != "" {
		return usageError("rig", "--image goes with up")
	}
	return usageError("rig", "unknown subcommand %q (valid: up, down, status)", sub)
}

// rigUp makes the rig; a signal meanwhile makes it remove what it made.
func rigUp(images []string, logf func(string, ...any)) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	st, err := rig.Up(ctx, rig.Config{Images: images, Log: logf})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader rig up: %v\n", err)
		return 1
	}
	fmt.Printf("RINGLEADER_ENGINES=%s\n", strings.Join(st.Engines(), ","))
	return 0
}

// rigDown removes the rig; signals meanwhile are held off so that it
// finishes.
func rigDown(logf func(string, ...any)) int {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if err := rig.Down(context.Background(), rig.Dir(), logf); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader %v\n", err)
		return 1
	}
	return 0
}

// splitList is a comma-separated flag's values, without empty ones.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
