package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/ringleader-dev/ringleader/node"
)

func init() {
	commands["node"] = command{summary: "run one election node (the container entrypoint)", run: runNode}
}

// runNode: exit 0 after a graceful stop (SIGTERM, SIGINT), 2 for a bad flag
// or variable, 1 when the node cannot start.
func runNode(args []string) int {
	// One P per node unless GOMAXPROCS says otherwise. A node is a few
	// goroutines that mostly wait; with a P per core, the runtime wakes
	// another thread, often on another CPU, whenever one becomes ready
	// while another runs, and sixty-four nodes on two cores spent their
	// start doing that: they booted in a median 27.5 s with one P against
	// 35.4 s, and Bully's kill failover did not move (docs/performance.md,
	// "How many containers").
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// The node's flags are its package's; its help is printed here, with
	// the docs' spelling of flags, and its mistakes in the CLI's shape.
	var help bytes.Buffer
	cfg, err := node.ParseArgs(args, os.Getenv, &help)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(helpOut, strings.ReplaceAll(help.String(), "\n  -", "\n  --"))
		return 0
	}
	if err != nil {
		return usageError("node", "%v", dashes(strings.TrimPrefix(err.Error(), "flags: ")))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := node.Run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader node: %v\n", err)
		return 1
	}
	return 0
}
