//go:build !nodeimage

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/scenario"
)

// registerPrograms registers the program of every scenario that names one
// (cluster.program) and sets its cluster's algorithm to the registered
// name, so that everything after runs it as any algorithm. In containers
// a program must be one static executable (it is copied into the node
// image). Status 2 when one cannot run.
func registerPrograms(scs []*scenario.Scenario, backend string, stderr io.Writer) int {
	for _, sc := range scs {
		c := &sc.Cluster
		if len(c.Program) == 0 {
			continue
		}
		if backend != "sim" && c.Image == "" {
			// In containers without an image of its own the program
			// goes into the node image, which is empty but for the
			// node: one static executable.
			if _, err := program.CheckStatic(c.Program); err != nil {
				fmt.Fprintf(stderr, "ringleader run: %s: cluster.program on --backend %s: %v (an interpreted program needs cluster.image, an image that holds its runtime)\n", sc.File, backend, err)
				return 2
			}
		}
		name, err := program.Register(c.Program, c.Quorum, c.IDs, c.Timing, program.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "ringleader run: %s: cluster.program: %v\n", sc.File, err)
			return 2
		}
		c.Algorithm = name
	}
	return 0
}

// attachPrograms is registerPrograms for run --attach: the program of a
// scenario that names one runs in the attached cluster's nodes, not here.
// The cluster's nodes said at boot what the program claims (w.describe);
// a scenario's program must be the one they host, as it runs there
// (w.programCommand), and its cluster's algorithm becomes the name the
// program is registered under from their word. Status 2 when the
// scenario's program could not run in that world at all, 1 when the
// cluster cannot be read or hosts something else.
func attachPrograms(ctx context.Context, scs []*scenario.Scenario, w world, run string, stderr io.Writer) int {
	var (
		spec chaos.ClusterSpec
		read bool
	)
	for _, sc := range scs {
		c := &sc.Cluster
		if len(c.Program) == 0 {
			continue
		}
		want, err := w.programCommand(c.Program, c.Image)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader run: %s: cluster.program: %v\n", sc.File, err)
			return 2
		}
		if !read {
			if spec, err = w.describe(ctx, run); err != nil {
				fmt.Fprintf(stderr, "ringleader run: --attach %s: %v\n", run, err)
				return 1
			}
			read = true
		}
		got := strings.Join(spec.Program, " ")
		switch {
		case got == "":
			fmt.Fprintf(stderr, "ringleader run: %s: the running cluster %s runs the algorithm %s, not the scenario's program (PROGRAM=%q make up starts a compose cluster of it)\n",
				sc.File, run, spec.Algorithm, strings.Join(c.Program, " "))
			return 1
		case got != want:
			fmt.Fprintf(stderr, "ringleader run: %s: the running cluster %s hosts the program %q; the scenario's program would run there as %q\n", sc.File, run, got, want)
			return 1
		}
		c.Algorithm = spec.Algorithm
	}
	return 0
}

// programFlag reads --program "command args": the words of a command line,
// split at spaces (a program whose arguments hold spaces is named through
// a script of its own).
func programFlag(cmdline string, q election.QuorumMode, n int, stderr io.Writer, sub string) (string, int) {
	argv := strings.Fields(cmdline)
	if len(argv) == 0 {
		return "", badFlag(stderr, sub, fmt.Errorf("--program %q: want a command line, such as --program \"python3 examples/bully-python/bully.py\"", cmdline))
	}
	members := election.FirstIDs(max(n, 1))
	name, err := program.Register(argv, q, members, election.Timing{}, program.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim %s: --program: %v\n", sub, err)
		return "", 2
	}
	return name, 0
}
