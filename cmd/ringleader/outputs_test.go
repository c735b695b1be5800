//go:build !nodeimage

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ringleader-dev/ringleader/scenario"
)

// badOutputs are paths no command may write, each with what its refusal
// says: made afresh in a temporary directory.
func badOutputs(t *testing.T) (dir string, paths map[string]string) {
	t.Helper()
	dir = t.TempDir()
	target := filepath.Join(dir, "target")
	must(t, os.WriteFile(target, []byte("keep me\n"), 0o644))
	must(t, os.Symlink(target, filepath.Join(dir, "link")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(t, os.Mkdir(filepath.Join(dir, "ro"), 0o555))
	return dir, map[string]string{
		"/dev/null":                       "is a character device",
		filepath.Join(dir, "fifo"):        "is a named pipe (FIFO)",
		filepath.Join(dir, "link"):        "is a symbolic link (to " + target + ")",
		filepath.Join(dir, "dir"):         "is a directory",
		filepath.Join(dir, "nope", "out"): "directory " + filepath.Join(dir, "nope") + " does not exist",
		filepath.Join(dir, "ro", "out"):   "directory " + filepath.Join(dir, "ro") + " is not writable",
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is every name under dir with its mode and contents, to show a
// refused command left it as it was.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// Every file output is refused, exit 2, before any work, naming the flag,
// the path and what is wrong, and leaves the path as it was.
func TestFileOutputsAreRefusedBeforeAnythingRuns(t *testing.T) {
	dir, paths := badOutputs(t)
	store := t.TempDir()
	for path, says := range paths {
		for _, args := range [][]string{
			{"run", "--backend", "sim", "--store", store, "--junit", path, "../../scenarios/bully-leader-crash.yaml"},
			{"sim", "explore", "--algorithm", "bully", "--schedules", "1", "--history", path},
		} {
			before := snapshot(t, dir)
			r := ringleader(t, args...)
			r.wantCode(t, 2, args...)
			flag := args[len(args)-2]
			if args[0] == "run" {
				flag = "--junit"
			}
			wantContains(t, "stderr", r.stderr, flag+" "+path+": "+says)
			if strings.Contains(r.stderr, ".tmp-") || r.stdout != "" {
				t.Errorf("%v: stdout %q, stderr %q: want only the refusal", args, r.stdout, r.stderr)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("%v changed %s:\nbefore:\n%s\nafter:\n%s", args, dir, before, after)
			}
		}
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("the store holds %d entries: a refused run ran", len(entries))
	}
}

// Directory outputs (run --store, sim explore --save) refuse a file, a
// device and what cannot be made.
func TestDirectoryOutputsAreRefusedBeforeAnythingRuns(t *testing.T) {
	dir, _ := badOutputs(t)
	for path, says := range map[string]string{
		filepath.Join(dir, "target"):         "is a regular file, not a directory",
		"/dev/null":                          "is a character device, not a directory",
		filepath.Join(dir, "ro"):             "the directory is not writable",
		filepath.Join(dir, "nope", "store"):  "directory " + filepath.Join(dir, "nope") + " does not exist",
		filepath.Join(dir, "link", "nested"): filepath.Join(dir, "link") + " is a regular file, not a directory",
	} {
		for _, args := range [][]string{
			{"run", "--backend", "sim", "--store", path, "../../scenarios/bully-leader-crash.yaml"},
			{"sim", "explore", "--algorithm", "bully", "--n", "3", "--schedules", "200", "--shrink", "--save", path},
		} {
			before := snapshot(t, dir)
			r := ringleader(t, args...)
			r.wantCode(t, 2, args...)
			wantContains(t, "stderr", r.stderr, path+": "+says)
			if after := snapshot(t, dir); after != before {
				t.Errorf("%v changed %s", args, dir)
			}
		}
	}
}

// A JUnit file in the store the run is about to make is fine.
func TestJUnitMayGoInTheStoreTheRunMakes(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	junit := filepath.Join(store, "junit.xml")
	args := []string{"run", "--backend", "sim", "--seed", "1", "--store", store, "--junit", junit, "../../scenarios/bully-leader-crash.yaml"}
	ringleader(t, args...).wantCode(t, 0, args...)
	if fi, err := os.Stat(junit); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v", junit, err)
	}
}

// What --save could not hold is found before exploring: more nodes than
// a scenario file allows.
func TestExploreSaveRefusesMoreNodesThanAScenarioHoldsBeforeExploring(t *testing.T) {
	over := scenario.MaxNodes + 1
	args := []string{"sim", "explore", "--algorithm", "bully", "--n", strconv.Itoa(over), "--schedules", "100000", "--shrink", "--save", t.TempDir()}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, fmt.Sprintf("cluster.nodes: %d nodes: at most %d", over, scenario.MaxNodes))
	if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("it explored first: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// A shrunk schedule that cannot be written at the last moment (a
// directory where its file goes) is reported, exit 1, and the summary is
// printed all the same.
func TestExploreSummaryIsPrintedWhenSavingFails(t *testing.T) {
	args := func(dir string) []string {
		return []string{"sim", "explore", "--algorithm", "bully", "--n", "5", "--schedules", "30", "--seed", "11", "--shrink", "--shrink-max", "1", "--save", dir}
	}
	first := t.TempDir()
	ringleader(t, args(first)...).wantCode(t, 0, args(first)...)
	saved, _ := filepath.Glob(filepath.Join(first, "*.yaml"))
	if len(saved) != 1 {
		t.Fatalf("saved %v; want one file", saved)
	}
	dir := t.TempDir()
	blocked := filepath.Join(dir, filepath.Base(saved[0]))
	must(t, os.Mkdir(blocked, 0o755))
	r := ringleader(t, args(dir)...)
	r.wantCode(t, 1, args(dir)...)
	wantContains(t, "stderr", r.stderr, blocked+": is a directory")
	wantContains(t, "stdout", r.stdout, "claimed checkers:", "\nshrunk:\n")
}

// A history that stops being writable (here: a file-size limit of one
// block, which the kernel enforces as EFBIG, as a full disk gives ENOSPC)
// ends the command with one line naming the file and exit 1, not a panic.
func TestExploreHistoryThatCannotBeWrittenIsAnErrorNotAPanic(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history.jsonl")
	cmd := exec.Command("sh", "-c", `ulimit -f 1 && exec "$0" "$@"`, binary,
		"sim", "explore", "--algorithm", "bully", "--n", "5", "--schedules", "1", "--seed", "1", "--history", hist)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, out)
	}
	if strings.Contains(string(out), "panic") || strings.Contains(string(out), "goroutine") ||
		!strings.HasPrefix(string(out), "ringleader sim explore: ") || !strings.Contains(string(out), hist+": file too large") {
		t.Errorf("output:\n%s\nwant one line naming %s and the error", out, hist)
	}
}

// A scenario's directory in the store is checked too: a file in its place
// is found before the run, not when the run directory is made.
func TestRunRefusesAStoreWhoseScenarioDirectoryIsAFile(t *testing.T) {
	store := t.TempDir()
	blocked := filepath.Join(store, "bully-leader-crash")
	must(t, os.WriteFile(blocked, []byte("keep\n"), 0o644))
	args := []string{"run", "--backend", "sim", "--store", store, "../../scenarios/bully-leader-crash.yaml"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, "--store "+blocked+": is a regular file, not a directory")
	if b, _ := os.ReadFile(blocked); string(b) != "keep\n" {
		t.Errorf("%s now holds %q", blocked, b)
	}
}
