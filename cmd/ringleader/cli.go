package main

// The convention every subcommand follows, in one place:
//
//   - `-h` or `--help` (and `ringleader help CMD`) prints the command's help
//     on stdout and exits 0;
//   - a mistake of usage (unknown flag, bad value, missing or unexpected
//     argument) is one line on stderr, "ringleader CMD: what is wrong (see
//     'ringleader help CMD')", and exit 2;
//   - help spells flags as the docs do, with two dashes (the flag package
//     accepts both).
//
// A command joins by registering itself in commands and parsing with
// parseFlags (or parseInterleaved, for flags among file arguments); its
// flags then also complete in the shell (`ringleader completion`).
//
// This stays on the standard flag package: the per-command flag sets keep
// working as they are, the node image (which carries this binary) gains no
// dependency, and the convention is a few functions rather than a
// framework's.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// helpOut is where help goes (stdout; a buffer while completing).
var helpOut io.Writer = os.Stdout

// errOut is where usage errors go.
var errOut io.Writer = os.Stderr

// collect, when set, receives every flag set parsed with parseFlags
// instead of the command running on: how completion learns the flags.
var collect func(*flag.FlagSet)

// parseFlags parses args into fs by the convention. done reports that the
// command should return status now: help printed (0) or a usage error
// reported (2).
func parseFlags(fs *flag.FlagSet, args []string) (status int, done bool) {
	_, status, done = parse(fs, args, false, errOut)
	return status, done
}

// parseFlagsTo is parseFlags reporting mistakes on stderr (commands that
// take their streams as arguments, for tests).
func parseFlagsTo(fs *flag.FlagSet, args []string, stderr io.Writer) (status int, done bool) {
	_, status, done = parse(fs, args, false, stderr)
	return status, done
}

// parseInterleaved is parseFlags for a command whose flags and file
// arguments come in any order (ringleader run scenarios/x.yaml --backend
// sim), which the flag package alone does not allow: it stops at the first
// non-flag. It returns the arguments that are not flags.
func parseInterleaved(fs *flag.FlagSet, args []string) (pos []string, status int, done bool) {
	return parse(fs, args, true, errOut)
}

func parse(fs *flag.FlagSet, args []string, interleaved bool, stderr io.Writer) (pos []string, status int, done bool) {
	if collect != nil {
		collect(fs)
		return nil, 0, true
	}
	// The flag package would print its whole flag list after an error;
	// a mistake gets one line instead, help the whole text.
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	for interleaved && err == nil && fs.NArg() > 0 {
		pos = append(pos, fs.Arg(0))
		err = fs.Parse(fs.Args()[1:])
	}
	if !interleaved {
		pos = fs.Args()
	}
	switch {
	case err == nil:
		return pos, 0, false
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(helpOut)
		fs.Usage()
		return nil, 0, true
	}
	return nil, usageErrorTo(stderr, fs.Name(), "%v", dashes(err.Error())), true
}

// usageError reports a mistake of usage in the one shape and returns 2.
func usageError(cmd, format string, args ...any) int {
	return usageErrorTo(errOut, cmd, format, args...)
}

// usageErrorTo is usageError on w.
func usageErrorTo(w io.Writer, cmd, format string, args ...any) int {
	cmd = commandName(cmd)
	hint := strings.TrimSpace("ringleader help " + strings.TrimPrefix(strings.TrimPrefix(cmd, "ringleader"), " "))
	fmt.Fprintf(w, "%s: %s (see '%s')\n", cmd, fmt.Sprintf(format, args...), hint)
	return 2
}

// commandName is "ringleader NAME" whether or not name has the prefix.
func commandName(name string) string {
	if strings.HasPrefix(name, "ringleader") {
		return name
	}
	return "ringleader " + name
}

// dashes spells "-name" in the flag package's messages as "--name".
func dashes(msg string) string {
	for _, pre := range []string{"not defined: -", "for flag -", "needs an argument: -"} {
		if i := strings.Index(msg, pre); i >= 0 && !strings.HasPrefix(msg[i+len(pre):], "-") {
			msg = msg[:i+len(pre)] + "-" + msg[i+len(pre):]
		}
	}
	return msg
}

// printFlags is flag.PrintDefaults with the docs' spelling (--name).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			if _, isString := f.Value.(interface{ IsBoolFlag() bool }); !isString && name == "string" {
				def = fmt.Sprintf("%q", def)
			}
			line += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintln(w, line)
	})
}

// flagsOf runs command cmd (with sub, for a command that has
// subcommands) only as far as its flag parsing and returns its flags'
// names with their dashes.
func flagsOf(c command, sub []string) []string {
	var names []string
	collect = func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	}
	defer func() { collect = nil }()
	out, eout := helpOut, errOut
	helpOut, errOut = io.Discard, io.Discard
	defer func() { helpOut, errOut = out, eout }()
	c.run(append(sub, "-h"))
	return names
}
