//go:build !nodeimage

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/scenario"
)

// programTimeoutFlag declares --program-timeout, the bound on each of a
// program's answers (program.Options.Timeout).
func programTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("program-timeout", program.DefaultTimeout,
		fmt.Sprintf("how long a program has to answer one event before it is treated as crashed (a new process has at least %v for its first answer, an interpreter's start)", program.StartAllowance))
}

// checkProgramTimeout refuses a bound that is not positive.
func checkProgramTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--program-timeout %v: must be positive", d)
	}
	return nil
}

// registerPrograms registers the program of every scenario that names one
// (cluster.program) and sets its cluster's algorithm to the registered
// name, so that everything after runs it as any algorithm. In containers
// a program must be one static executable (it is copied into the node
// image, w.imaged). Status 2 when one cannot run.
// timeout bounds each answer; a scenario's cluster.program_timeout takes
// its place unless timeoutSet (--program-timeout was given).
func registerPrograms(scs []*scenario.Scenario, w world, backend string, timeout time.Duration, timeoutSet bool, stderr io.Writer) int {
	for _, sc := range scs {
		c := &sc.Cluster
		if len(c.Program) == 0 {
			continue
		}
		if w.imaged && c.Image == "" {
			// In containers without an image of its own the program
			// goes into the node image, which is empty but for the
			// node: one static executable.
			if _, err := program.CheckStatic(c.Program); err != nil {
				if hint := notBuilt(err, c.Program); hint != "" {
					fmt.Fprintf(stderr, "ringleader run: %s: cluster.program: %v%s\n", sc.File, err, hint)
					return 2
				}
				fmt.Fprintf(stderr, "ringleader run: %s: cluster.program on --backend %s: %v (an interpreted program needs cluster.image, an image that holds its runtime)\n", sc.File, backend, err)
				return 2
			}
		}
		if timeoutSet || c.ProgramTimeout == 0 {
			// What the nodes run with, wherever they run.
			c.ProgramTimeout = timeout
		}
		name, err := program.Register(c.Program, c.Quorum, c.IDs, c.Timing, program.Options{Timeout: c.ProgramTimeout})
		if err != nil {
			fmt.Fprintf(stderr, "ringleader run: %s: cluster.program: %v%s\n", sc.File, err, notBuilt(err, c.Program))
			return 2
		}
		c.Algorithm = name
	}
	return 0
}

// notBuilt is a hint for a program whose file is not there: where a
// relative path is looked for, and how the shipped examples' programs are
// built; empty for any other failure.
func notBuilt(err error, argv []string) string {
	if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	where := ""
	if !filepath.IsAbs(argv[0]) && strings.ContainsRune(argv[0], filepath.Separator) {
		wd, _ := os.Getwd()
		where = fmt.Sprintf(" (a relative path is looked for from the directory ringleader runs in, %s)", wd)
	}
	return fmt.Sprintf("\n  %s is not there%s: build it first, as the scenario's description says; `make examples` builds the programs of the shipped examples", argv[0], where)
}

// attachPrograms is registerPrograms for run --attach: the program of a
// scenario that names one runs in the attached cluster's nodes, not here.
// The cluster's nodes said at boot what the program claims (w.describe);
// a scenario's program must be the one they host, as it runs there
// (w.programCommand), and its cluster's algorithm becomes the name the
// program is registered under from their word. Status 2 when the
// scenario's program could not run in that world at all, 1 when the
// cluster cannot be read or hosts something else.
func attachPrograms(ctx context.Context, scs []*scenario.Scenario, w world, run, engines string, stderr io.Writer) int {
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
			es, err := connectEngines(ctx, engines)
			if err != nil {
				fmt.Fprintf(stderr, "ringleader run: --engines: %v\n", err)
				return 1
			}
			if spec, err = w.describe(ctx, run, es); err != nil {
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
func programFlag(cmdline string, q election.QuorumMode, n int, timeout time.Duration, stderr io.Writer, sub string) (string, int) {
	argv := strings.Fields(cmdline)
	if len(argv) == 0 {
		return "", badFlag(stderr, sub, fmt.Errorf("--program %q: want a command line, such as --program \"python3 examples/bully-python/bully.py\"", cmdline))
	}
	members := election.FirstIDs(max(n, 1))
	name, err := program.Register(argv, q, members, election.Timing{}, program.Options{Timeout: timeout})
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim %s: --program: %v\n", sub, err)
		return "", 2
	}
	return name, 0
}
