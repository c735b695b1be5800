//go:build !nodeimage

package main

import (
	"fmt"
	"io"
	"strings"

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
			// In containers the program goes into the node image,
			// which is empty but for the node: one static executable.
			if _, err := program.CheckStatic(c.Program); err != nil {
				fmt.Fprintf(stderr, "ringleader run: %s: cluster.program on --backend %s: %v (an interpreted program runs on --backend sim only, for now)\n", sc.File, backend, err)
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

// programFlag reads --program "command args": the words of a command line,
// split at spaces (a program whose arguments hold spaces is named through
// a script of its own).
func programFlag(cmdline string, q election.QuorumMode, n int, stderr io.Writer, sub string) (string, int) {
	argv := strings.Fields(cmdline)
	if len(argv) == 0 {
		return "", badFlag(stderr, sub, fmt.Errorf("--program %q: want a command line, such as --program \"python3 examples/bully-python/bully.py\"", cmdline))
	}
	members := make([]election.NodeID, max(n, 1))
	for i := range members {
		members[i] = election.NodeID(i + 1)
	}
	name, err := program.Register(argv, q, members, election.Timing{}, program.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim %s: --program: %v\n", sub, err)
		return "", 2
	}
	return name, 0
}
