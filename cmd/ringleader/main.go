// Command ringleader is the testbed's one binary: the election node (the
// container entrypoint), the simulator, the scenario runner and the
// netfilter helper the docker backend runs inside node namespaces. Each
// subcommand lives in its own file and registers itself in commands; the
// work itself is done by packages, so this stays thin. cli.go holds the
// convention every subcommand follows (help, usage errors, exit 2).
package main

import (
	"fmt"
	"io"
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
	// subcommands, when the command has any (sim), for help and
	// completion.
	subcommands []string
}

var commands = map[string]command{}

func init() {
	commands["help"] = command{summary: "print a command's help: ringleader help COMMAND [SUBCOMMAND]", run: runHelp}
	commands["completion"] = command{summary: "print a shell completion script: ringleader completion bash|zsh", run: runCompletion}
}

func sortedCommands() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "ringleader: a chaos testbed for leader election\n\nUsage: ringleader <command> [flags]\n\nCommands:\n")
	for _, n := range visibleCommands() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'ringleader help <command>' (or 'ringleader <command> -h') for a command's flags.\n"+
		"Every command exits 2 for a mistake of usage, after one line naming it.\n")
}

// runHelp prints the help of a command (and subcommand) on stdout, or the
// list of commands.
func runHelp(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(helpOut)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		return usageError("help", "unknown command %q (known: %s)", args[0], strings.Join(visibleCommands(), ", "))
	}
	if len(args) > 1 && c.subcommands == nil {
		return usageError("help", "%s has no subcommands (got %q)", args[0], args[1])
	}
	return c.run(append(args[1:len(args):len(args)], "-h"))
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" {
		name = "help"
	}
	c, ok := commands[name]
	if !ok {
		os.Exit(usageError("ringleader", "unknown command %q (known: %s)", os.Args[1], strings.Join(visibleCommands(), ", ")))
	}
	os.Exit(c.run(os.Args[2:]))
}
