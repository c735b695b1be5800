package main

import (
	"fmt"
	"strings"
)

// The completion scripts ask the binary itself what to offer
// (`ringleader __complete WORDS...`), so they never go stale: a command's
// flags are the ones its flag set defines, collected by running it only as
// far as parseFlags (cli.go).

const bashCompletion = `# bash completion for ringleader: eval "$(ringleader completion bash)"
_ringleader() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	COMPREPLY=($(compgen -W "$(ringleader __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _ringleader ringleader
`

const zshCompletion = `#compdef ringleader
# zsh completion for ringleader: eval "$(ringleader completion zsh)", or save
# as _ringleader in a directory of $fpath.
_ringleader() {
	local -a offers
	offers=(${(f)"$(ringleader __complete ${words[2,CURRENT-1]} 2>/dev/null)"})
	compadd -a offers
	_files
}
compdef _ringleader ringleader
`

func init() {
	// Hidden: not listed by usage (the summary is empty and it starts
	// with underscores), called by the scripts.
	commands["__complete"] = command{run: runComplete}
}

// runCompletion prints the script for a shell.
func runCompletion(args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(helpOut, "Usage: ringleader completion bash|zsh\n\n"+
			"Prints a script that completes commands, subcommands and flags:\n"+
			"  eval \"$(ringleader completion bash)\"   # in ~/.bashrc\n"+
			"  eval \"$(ringleader completion zsh)\"    # in ~/.zshrc, after compinit\n\n"+
			"Exit status: 0, or 2 for a shell it does not know.\n")
		return 0
	}
	if len(args) != 1 {
		return usageError("completion", "want one shell: bash or zsh")
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(helpOut, bashCompletion)
	case "zsh":
		fmt.Fprint(helpOut, zshCompletion)
	default:
		return usageError("completion", "unknown shell %q (valid: bash, zsh)", args[0])
	}
	return 0
}

// runComplete prints, one a line, the words that may follow args.
func runComplete(args []string) int {
	for _, w := range completions(args) {
		fmt.Fprintln(helpOut, w)
	}
	return 0
}

// completions: commands first; then a command's subcommands; then its
// flags; help completes command names, completion the shells.
func completions(args []string) []string {
	if len(args) == 0 {
		return visibleCommands()
	}
	c, ok := commands[args[0]]
	switch {
	case !ok:
		return nil
	case args[0] == "help":
		if len(args) == 1 {
			return visibleCommands()
		}
		if sc, ok := commands[args[1]]; ok && len(args) == 2 {
			return sc.subcommands
		}
		return nil
	case args[0] == "completion":
		return []string{"bash", "zsh"}
	case c.subcommands != nil:
		if len(args) == 1 {
			return c.subcommands
		}
		return flagsOf(c, args[1:2])
	}
	return flagsOf(c, nil)
}

func visibleCommands() []string {
	var out []string
	for _, n := range sortedCommands() {
		if !strings.HasPrefix(n, "__") {
			out = append(out, n)
		}
	}
	return out
}
