// Command ringleader is the testbed's one binary: the election node (the
// container entrypoint), the simulator, the scenario runner and the
// netfilter helper the docker backend runs inside node namespaces. Each
// subcommand lives in its own file and registers itself in commands; the
// work itself is done by packages, so this stays thin.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	_ "github.com/ringleader-dev/ringleader/election/all" // register every algorithm
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns the process exit status.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

func usage() {
	fmt.Fprintf(os.Stderr, "ringleader: a chaos testbed for leader election\n\nUsage: ringleader <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'ringleader <command> -h' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		known := make([]string, 0, len(commands))
		for n := range commands {
			known = append(known, n)
		}
		sort.Strings(known)
		fmt.Fprintf(os.Stderr, "ringleader: unknown command %q (known: %s)\n", os.Args[1], strings.Join(known, ", "))
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}
