//go:build !nodeimage

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
)

// TestASavedCounterexampleMeansWhatItSays: a program that ignores the
// majority it is started in splits its brain; explore --quorum majority
// finds it, shrinks it and saves it under a name that fits however long
// the program's name. The saved file carries the whole cluster the
// explorer ran (the program, its image, the nodes, the quorum mode, the
// options, the timing) and the seed it failed on; run on it reproduces
// the failure, and the same file pointed at a correct program does not.
// The replay command printed carries the quorum mode too: as printed, it
// fails again.
func TestASavedCounterexampleMeansWhatItSays(t *testing.T) {
	dir := t.TempDir()
	buggy := testProgram(t, "bully-ignores-quorum")
	args := []string{"sim", "explore", "--program", buggy, "--quorum", "majority", "--n", "5", "--schedules", "40", "--seed", "3",
		"--shrink", "--shrink-max", "1", "--save", dir, "--image", "ringleader-test:runtime", "--json"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	var res exploreResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if len(res.Shrunk) != 1 || res.Shrunk[0].File == "" {
		t.Fatalf("shrunk %+v, want one schedule saved\nstderr:\n%s", res.Shrunk, r.stderr)
	}
	sh := res.Shrunk[0]
	name := strings.TrimSuffix(filepath.Base(sh.File), ".yaml")
	if len(name) > scenario.MaxNameLen || !strings.HasPrefix(name, "program-bully-ignores-quorum") {
		t.Errorf("saved as %s: want a name of at most %d characters that starts with the program's", sh.File, scenario.MaxNameLen)
	}

	sc, err := scenario.Load(sh.File)
	if err != nil {
		t.Fatal(err)
	}
	want := scenario.Cluster{
		Program: strings.Fields(buggy), Image: "ringleader-test:runtime", IDs: []election.NodeID{1, 2, 3, 4, 5},
		Quorum: election.Majority, Options: election.Options{}, Timing: election.Timing{}.WithDefaults(),
	}
	got := sc.Cluster
	if got.Options == nil {
		got.Options = election.Options{}
	}
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"program", got.Program, want.Program}, {"image", got.Image, want.Image}, {"ids", got.IDs, want.IDs},
		{"quorum", got.Quorum, want.Quorum}, {"options", got.Options, want.Options}, {"timing", got.Timing, want.Timing},
		{"algorithm (set when run)", got.Algorithm, ""},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("saved cluster.%s = %v, want %v", f.field, f.got, f.want)
		}
	}
	if sc.Seed == nil || *sc.Seed != sh.Seed {
		t.Errorf("saved seed %v, want the schedule's seed %d", sc.Seed, sh.Seed)
	}

	run := []string{"run", "--backend", "sim", "--store", t.TempDir(), sh.File}
	rr := ringleader(t, run...)
	rr.wantCode(t, 0, run...)
	wantContains(t, "run stdout", rr.stdout, "fail (expected)", "PASS")

	// The same schedule against Bully as it is: no split brain, so the
	// file's expected failure does not come, and run says so.
	text, err := os.ReadFile(sh.File)
	if err != nil {
		t.Fatal(err)
	}
	correct := filepath.Join(t.TempDir(), "correct.yaml")
	fixed := strings.Replace(string(text), "bully-ignores-quorum]", "bully]", 1)
	if fixed == string(text) {
		t.Fatalf("the saved file does not name the program as expected:\n%s", text)
	}
	if err := os.WriteFile(correct, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	run = []string{"run", "--backend", "sim", "--store", t.TempDir(), correct}
	rc := ringleader(t, run...)
	rc.wantCode(t, 1, run...)
	wantContains(t, "run stdout against the correct program", rc.stdout, "FAIL")

	// The replay command as explore printed it fails the same way.
	replay := res.Replay[0]
	wantContains(t, "replay command", replay, "--quorum majority")
	rp := ringleader(t, replayArgs(t, replay)...)
	rp.wantCode(t, 1, replay)
	wantContains(t, "replay stdout", rp.stdout, "no-split-brain: ")
}

// replayArgs splits a printed replay command into the binary's arguments:
// words, with the program's command line in single quotes as one.
func replayArgs(t *testing.T, cmd string) []string {
	t.Helper()
	rest, ok := strings.CutPrefix(cmd, "ringleader ")
	if !ok {
		t.Fatalf("replay command %q does not start with ringleader", cmd)
	}
	var args []string
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		if strings.HasPrefix(rest, "'") {
			end := strings.Index(rest[1:], "'")
			args = append(args, rest[1:1+end])
			rest = rest[2+end:]
			continue
		}
		word, tail, _ := strings.Cut(rest, " ")
		args = append(args, word)
		rest = tail
	}
	return args
}
