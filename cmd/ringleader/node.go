package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ringleader-dev/ringleader/node"
)

func init() {
	commands["node"] = command{summary: "run one election node (the container entrypoint)", run: runNode}
}

// runNode: exit 0 after a graceful stop (SIGTERM, SIGINT), 2 for a bad flag
// or variable, 1 when the node cannot start.
func runNode(args []string) int {
	cfg, err := node.ParseArgs(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader node: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := node.Run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader node: %v\n", err)
		return 1
	}
	return 0
}
