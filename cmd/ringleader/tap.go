package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ringleader-dev/ringleader/tap"
	"github.com/ringleader-dev/ringleader/trust"
)

func init() {
	commands["tap"] = command{summary: "print a cluster's messages as they pass (read-only; needs the cluster's secret)", run: runTap}
}

// runTap: exit 0 on Ctrl-C, 2 for a bad flag, 1 when it cannot connect.
func runTap(args []string) int {
	fs := flag.NewFlagSet("ringleader tap", flag.ContinueOnError)
	server := fs.String("server", "nats://node1:4222", "a node's NATS client URL (run the tap on the cluster's network: make tap does)")
	cluster := fs.String("cluster", "compose", "cluster name: the compose cluster's is compose, a harness run's is its run label")
	secretFile := fs.String("secret-file", "", "file holding the cluster's secret (default: $"+trust.SecretEnv+")")
	asJSON := fs.Bool("json", false, "one JSON object per message")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader tap [flags]\n\n"+
			"Logs in to one node's NATS server as the read-only observer and prints every\n"+
			"message on the cluster's subjects. It can publish nothing, and the nodes'\n"+
			"failure detection does not depend on who subscribes, so attaching it changes\n"+
			"no election. The secret comes from $%s or --secret-file, never a flag.\n\nFlags:\n", trust.SecretEnv)
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	secret, err := trust.ReadSecret(*secretFile, os.Getenv)
	if err != nil {
		return usageError("tap", "--secret-file: %v", err)
	}
	if secret == "" {
		return usageError("tap", "%s: required: the cluster's secret (the compose cluster's is in .ringleader/compose.secret; see docs/trust.md)", trust.SecretEnv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = tap.Run(ctx, tap.Options{Server: *server, Cluster: *cluster, Secret: secret, JSON: *asJSON, Out: os.Stdout,
		Ready: func() {
			fmt.Fprintf(os.Stderr, "tap: watching %s on %s as %s\n", trust.Subjects(*cluster), *server, trust.ObserverUser)
		}})
	switch {
	case err == nil, tap.OutputClosed(err):
		return 0
	default:
		fmt.Fprintf(os.Stderr, "ringleader %v\n", err)
		return 1
	}
}
