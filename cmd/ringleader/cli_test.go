package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// helpCases are every command (and sim subcommand) as a person would ask
// for its help.
func helpCases() [][]string {
	var out [][]string
	for _, name := range commandNames {
		out = append(out, []string{name})
	}
	return append(out, []string{"sim", "complexity"}, []string{"sim", "explore"})
}

// TestEveryCommandsHelpGoesToStdoutWithExit0: -h, --help and `ringleader
// help CMD` print the same help on stdout, nothing on stderr, exit 0, and
// spell flags as the docs do (--flag, never -flag at a line's start).
func TestEveryCommandsHelpGoesToStdoutWithExit0(t *testing.T) {
	for _, cmd := range helpCases() {
		var first string
		for _, args := range [][]string{append(cmd[:len(cmd):len(cmd)], "-h"), append(cmd[:len(cmd):len(cmd)], "--help"), append([]string{"help"}, cmd...)} {
			r := ringleader(t, args...)
			r.wantCode(t, 0, args...)
			if r.stderr != "" || !strings.Contains(r.stdout, "Usage") {
				t.Errorf("ringleader %s: stdout %q, stderr %q; want the help on stdout only", strings.Join(args, " "), r.stdout, r.stderr)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
					t.Errorf("ringleader %s: flag spelt with one dash: %q", strings.Join(args, " "), line)
				}
			}
			if first == "" {
				first = r.stdout
			} else if r.stdout != first {
				t.Errorf("ringleader %s: help differs from %s -h", strings.Join(args, " "), strings.Join(cmd, " "))
			}
		}
	}
}

// TestSimSubcommandsSayWhatTheyDoAndTheirExitStatus: like run and fault.
func TestSimSubcommandsSayWhatTheyDoAndTheirExitStatus(t *testing.T) {
	for _, sub := range []string{"complexity", "explore"} {
		r := ringleader(t, "help", "sim", sub)
		wantContains(t, "help sim "+sub, r.stdout, "Usage: ringleader sim "+sub, "Exit status: 0", "2 bad flags", "--algorithm")
	}
}

// TestTheSameMistakeGetsTheSameShapeEverywhere: an unknown flag, a bad
// value and an unexpected argument are one line on stderr naming the
// command and where its help is, with exit 2, in every command that takes
// flags.
func TestTheSameMistakeGetsTheSameShapeEverywhere(t *testing.T) {
	type mistake struct {
		args []string
		want string
	}
	var cases []mistake
	for _, cmd := range [][]string{{"clean"}, {"conform"}, {"fault"}, {"image"}, {"reap"}, {"run"}, {"tap"}, {"up"}, {"watch"}, {"node"}, {"sim", "complexity"}, {"sim", "explore"}, {"netfilter", "delay"}} {
		name := "ringleader " + strings.Join(cmd, " ")
		cases = append(cases, mistake{append(cmd[:len(cmd):len(cmd)], "--no-such-flag"),
			name + ": flag provided but not defined: --no-such-flag (see 'ringleader help " + strings.Join(cmd, " ") + "')"})
	}
	cases = append(cases,
		mistake{[]string{"sim", "explore", "--n", "x"}, `ringleader sim explore: invalid value "x" for flag --n: parse error (see 'ringleader help sim explore')`},
		mistake{[]string{"clean", "--timeout", "soon"}, `ringleader clean: invalid value "soon" for flag --timeout: parse error (see 'ringleader help clean')`},
		mistake{[]string{"clean", "extra"}, `ringleader clean: unexpected argument "extra"`},
		mistake{[]string{"conform", "--schedules", "many"}, `ringleader conform: invalid value "many" for flag --schedules: parse error (see 'ringleader help conform')`},
		mistake{[]string{"watch", "extra"}, `ringleader watch: unexpected argument "extra"`},
		mistake{[]string{"sim", "explore", "extra"}, `ringleader sim explore: unexpected argument "extra" (see 'ringleader help sim explore')`},
		mistake{[]string{"sim", "nosuch"}, `ringleader sim: unknown subcommand "nosuch" (valid: complexity, explore) (see 'ringleader help sim')`},
		mistake{[]string{"help", "nosuch"}, `ringleader help: unknown command "nosuch"`},
		mistake{[]string{"completion", "fish"}, `ringleader completion: unknown shell "fish" (valid: bash, zsh) (see 'ringleader help completion')`},
		mistake{[]string{"run", "--backend", "x"}, `ringleader run: --backend "x": want docker or sim (see 'ringleader help run')`},
		mistake{[]string{"run", "--backend", "sim", "--parallel", "-1"}, `ringleader run: --parallel -1: want a count of runs at once, or 0 for the machine's default (see 'ringleader help run')`},
		mistake{[]string{"run", "--attach", "compose", "--parallel", "2"}, `ringleader run: --attach plays every run on the one running cluster, one at a time; drop --parallel 2 (see 'ringleader help run')`},
		mistake{[]string{"run", "--backend", "sim", "--repeat", "10001", "../../scenarios/bridge.yaml"}, `ringleader run: 10001 runs (1 scenario(s), --repeat or each one's repeat:): a batch holds at most 10000`},
		mistake{[]string{"compare", "--backend", "x"}, `ringleader compare: --backend "x": want docker or sim (see 'ringleader help compare')`},
	)
	for _, c := range cases {
		r := ringleader(t, c.args...)
		r.wantCode(t, 2, c.args...)
		if !strings.HasPrefix(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("ringleader %s: stderr %q, want one line starting %q", strings.Join(c.args, " "), r.stderr, c.want)
		}
	}
}

// TestCompletionScriptsOfferCommandsSubcommandsAndFlags: the scripts load
// in their shells (when the shell is here) and the binary offers the
// words they ask for.
func TestCompletionScriptsOfferCommandsSubcommandsAndFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete"}, []string{"clean", "completion", "help", "run", "sim"}},
		{[]string{"__complete", "sim"}, []string{"complexity", "explore"}},
		{[]string{"__complete", "sim", "explore"}, []string{"--algorithm", "--schedules", "--shrink"}},
		{[]string{"__complete", "clean"}, []string{"--force", "--run", "--timeout"}},
		{[]string{"__complete", "run"}, []string{"--backend", "--junit", "--store"}},
		{[]string{"__complete", "conform"}, []string{"--program", "--algorithm", "--quorum", "--save"}},
		{[]string{"__complete", "help"}, []string{"fault", "watch"}},
		{[]string{"__complete", "completion"}, []string{"bash", "zsh"}},
	} {
		r := ringleader(t, c.args...)
		r.wantCode(t, 0, c.args...)
		got := strings.Fields(r.stdout)
		for _, w := range c.want {
			if !contains(got, w) {
				t.Errorf("ringleader %s offers %v, want %s among them", strings.Join(c.args, " "), got, w)
			}
		}
		if contains(got, "__complete") {
			t.Errorf("ringleader %s offers the hidden __complete", strings.Join(c.args, " "))
		}
	}
	for _, sh := range []string{"bash", "zsh"} {
		r := ringleader(t, "completion", sh)
		r.wantCode(t, 0, "completion", sh)
		if !strings.Contains(r.stdout, "ringleader __complete") {
			t.Errorf("completion %s: the script does not ask the binary:\n%s", sh, r.stdout)
		}
	}
	if _, err := exec.LookPath("bash"); err == nil {
		// Load the script and complete "ringleader sim ex" as bash would.
		script := ringleader(t, "completion", "bash").stdout
		dir := t.TempDir()
		if err := os.Symlink(binary, dir+"/ringleader"); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "-c", script+`
COMP_WORDS=(ringleader sim ex); COMP_CWORD=2; _ringleader; echo "${COMPREPLY[@]}"`)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "explore" {
			t.Errorf("bash completion of 'ringleader sim ex' = %q (%v), want explore", out, err)
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestUpRefusesWhatCannotStartBeforeTouchingTheEngine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up"}, "name either --system (built in: etcd, nats-jetstream"},
		{[]string{"up", "--system", "etcd", "--algorithm", "bully"}, "name either --system"},
		{[]string{"up", "--algorithm", "paxos"}, `--algorithm: unknown algorithm "paxos"`},
		{[]string{"up", "--system", "etcd", "--engines", "unix:///a.sock,unix:///b.sock"}, "a system's cluster runs on one engine"},
		{[]string{"up", "--algorithm", "bully", "--engines", "unix:///a.sock,,unix:///b.sock"}, "--engines: engines"},
		{[]string{"up", "--system", "zookeeper"}, `unknown system "zookeeper"`},
		{[]string{"up", "--system", "etcd", "--options", "election=5"}, "election"},
		{[]string{"up", "--system", "etcd", "--nodes", "0"}, "--nodes 0"},
	} {
		r := ringleader(t, c.args...)
		r.wantCode(t, 2, c.args...)
		wantContains(t, "stderr", r.stderr, c.want)
	}
}
