//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ringleader-dev/ringleader/docker"
)

func init() {
	commands["image"] = command{summary: "build the node image that hosts a program (make up runs it for PROGRAM=)", run: runImage}
}

// runImage: exit 0 once the image exists, 2 for a bad flag or a program
// the image cannot hold (said before anything is built), 1 when the
// engine or a build fails.
func runImage(args []string) int {
	fs := flag.NewFlagSet("ringleader image", flag.ContinueOnError)
	prog := fs.String("program", "", "the program's command line, words split at spaces (required), e.g. \"./my-election --fast\"")
	runtime := fs.String("program-image", "", "an image that holds the program's runtime (an interpreter); empty: the program is one static executable")
	node := fs.String("image", defaultImage, "the node image the program's image is made from")
	build := fs.Bool("build", true, "build the node image from this source tree first")
	run := fs.String("run", "", "also label the image "+docker.LabelRun+"=`LABEL` (make up gives compose, which make down removes)")
	verbose := fs.Bool("v", false, "print the builds' output on stderr")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader image --program \"COMMAND ARGS\" [flags]\n\n"+
			"Builds the node image whose nodes host a program (docs/protocol.md), with the\n"+
			"code `ringleader run --backend docker` uses for a scenario's cluster.program:\n"+
			"a static executable goes into the FROM-scratch node image at /program/NAME; with\n"+
			"--program-image the node goes into that image instead, with the program's files\n"+
			"(the arguments that name files) at /program/. Nothing is pulled. An unchanged\n"+
			"program and node image are built once (the tag holds a digest of both).\n\n"+
			"Prints, as shell assignments, the image's tag and the command line its nodes\n"+
			"run, the two variables docker-compose.yml reads:\n\n"+
			"  NODE_IMAGE='ringleader-node:dev-program-…'\n"+
			"  RINGLEADER_PROGRAM='/program/my-election --fast'\n\n"+
			"Examples:\n"+
			"  ringleader image --program ./bully-go\n"+
			"  ringleader image --program \"python3 examples/bully-python/bully.py\" --program-image ringleader-python:bookworm\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if fs.NArg() > 0 {
		return usageError("image", "unexpected argument %q (the program's arguments go inside --program \"COMMAND ARGS\")", fs.Arg(0))
	}
	argv := strings.Fields(*prog)
	if len(argv) == 0 {
		return usageError("image", "--program: required: the program's command line, e.g. --program ./my-election")
	}
	// Refused before anything is built: the same check a run makes.
	if _, err := docker.ProgramCommand(argv, *runtime); err != nil {
		return usageError("image", "--program: %v (an interpreted program needs --program-image, an image that holds its runtime; PROGRAM_IMAGE= with make up)", err)
	}
	var labels map[string]string
	if *run != "" {
		labels = map[string]string{docker.LabelRun: *run}
	}
	progress := io.Discard
	if *verbose {
		progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	p := docker.ProgramImage{Node: *node, BuildNode: *build, Command: argv, Runtime: *runtime, Labels: labels}
	tag, line, err := p.Build(ctx, progress)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader image: %v\n", err)
		return 1
	}
	fmt.Printf("NODE_IMAGE=%s\nRINGLEADER_PROGRAM=%s\n", shellQuote(tag), shellQuote(line))
	return 0
}

// shellQuote is s as one word of a POSIX shell: in single quotes, with
// each single quote of s closed, escaped with a backslash and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
