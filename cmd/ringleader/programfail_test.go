//go:build !nodeimage

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestAProgramThatFailsMidRunIsAFinding: a program that exits during an
// election, or writes what is not an answer, is a finding, not a fault
// anyone injected: explore (in majority mode), conform (without a
// quorum) and run each report it (which node, which event, the line, the
// program's stderr) and exit 1; conform never passes it.
func TestAProgramThatFailsMidRunIsAFinding(t *testing.T) {
	dockertest.CPUBound(t)
	exits := testProgram(t, "bully-exits-on-election")
	args := []string{"sim", "explore", "--program", exits, "--quorum", "majority", "--n", "5", "--schedules", "4", "--seed", "1"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "explore stdout", r.stdout,
		"  no-program-failure FAIL  failed in 4 schedules",
		"no-program-failure: ", "first: node 3 at +",
		"program exited (exit status 3) while it was to answer event seq ", "(receive ELECTION from ",
		"| node 3: giving up on the election from ")

	for _, c := range []struct{ prog, want string }{
		{"bully-exits-on-election", "program exited (exit status 3)"},
		{"bully-garbles-on-election", "invalid character 'h'"},
	} {
		args := []string{"conform", "--program", testProgram(t, c.prog), "--quorum", "none", "--schedules", "4"}
		r := ringleader(t, args...)
		r.wantCode(t, 1, args...)
		wantContains(t, "conform stdout ("+c.prog+")", r.stdout,
			"  no-program-failure  VIOLATED\n", "FaultFreeElectionAgrees: ", c.want, "violated: no-program-failure", "\nFAIL\n")
	}

	file := filepath.Join(t.TempDir(), "crash.yaml")
	doc := "name: crash\ncluster:\n  program: [" + strings.Join(strings.Fields(exits), ", ") + "]\n  nodes: 5\nsteps:\n  - wait: 2s\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "--backend", "sim", "--store", t.TempDir(), file}
	rr := ringleader(t, run...)
	rr.wantCode(t, 1, run...)
	wantContains(t, "run stderr", rr.stderr,
		"checker no-program-failure: expected pass, got fail: 1 program failure(s); first: node 3 at +",
		"program exited (exit status 3)", "| node 3: giving up on the election from ")
}

// TestConformCatchesQuietNondeterminism: a correct Bully whose timers
// wander by up to a millisecond of wall-clock noise passes every claim,
// and conform still fails it: the fault-free election and the first
// explored schedules, each played twice, differ, and the report names the
// first record that did.
func TestConformCatchesQuietNondeterminism(t *testing.T) {
	args := []string{"conform", "--program", testProgram(t, "bully-jittery"), "--quorum", "none", "--schedules", "4"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "conform stdout", r.stdout,
		"  agreement           holds\n", "  liveness            holds\n",
		"    ReplaysAreDeterministic        FAIL  the fault-free election on ring ",
		"played twice: nondeterministic: two plays of seed 1 first differ at history record ",
		"failed cases: ReplaysAreDeterministic", "\nFAIL\n")

	deterministic := []string{"conform", "--program", testProgram(t, "bully"), "--quorum", "none", "--schedules", "4"}
	rd := ringleader(t, deterministic...)
	rd.wantCode(t, 0, deterministic...)
	wantContains(t, "conform stdout", rd.stdout, "    ReplaysAreDeterministic        pass\n", "\nPASS\n")
}

// TestConformNamesAPeriodicMessageListedAsAnAnnouncement: a program that
// lists its heartbeat among its announce types never lets a fault-free
// run go quiet; conform ends that case after two minutes of virtual time
// (not an hour) and says which type kept coming and what to change.
func TestConformNamesAPeriodicMessageListedAsAnAnnouncement(t *testing.T) {
	args := []string{"conform", "--program", testProgram(t, "bully-announces-heartbeats"), "--quorum", "none", "--schedules", "2"}
	r := ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "conform stdout", r.stdout,
		"FaultFreeElectionAgrees        FAIL  liveness: ring ", "still electing after 2m0s of virtual time; in the last 1m0s it sent HEARTBEAT ",
		"list it in neither election_types nor announce_types")
}
