package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/internal/keptstore"
	"github.com/ringleader-dev/ringleader/scenario"
)

// bullyGo builds examples/bully-go, the project's Bully as a program.
func bullyGo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bully-go")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/bully-go").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/bully-go: %v\n%s", err, out)
	}
	return bin
}

func TestSimExploreRunsAProgram(t *testing.T) {
	bin := bullyGo(t)
	args := []string{"sim", "explore", "--program", bin, "--n", "4", "--schedules", "6", "--seed", "2"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "program-bully-go, 4 nodes, no quorum: 6 schedules", "agreement          pass", "no-program-failure pass", "--program '"+bin+"' --n 4 --schedules 1 --seed ")
}

func TestSimExploreRefusesAProgramThatCannotStart(t *testing.T) {
	args := []string{"sim", "explore", "--program", "/nonexistent/prog", "--n", "3"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, "--program: program /nonexistent/prog: start /nonexistent/prog")
}

func TestRunRunsAScenarioWithAProgram(t *testing.T) {
	bin := bullyGo(t)
	path := filepath.Join(t.TempDir(), "own.yaml")
	sc := "name: own-bully\ncluster:\n  program: [" + bin + "]\n  nodes: 3\nsteps:\n  - wait: stable\n  - expect: {leader: 3}\n  - kill: leader\n  - wait: stable\n  - expect: {leader: 2}\n"
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	args := []string{"run", "--backend", "sim", path, "--store", store}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)

	// Judged again by another process, which registers the program anew
	// from results.json.
	args = []string{"check", filepath.Join(store, "own-bully", "latest-sim")}
	r = ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "as recorded", "run PASS (as recorded)")
}

// TestRunRefusesAProgramContainersCannotHold: in containers a program must
// be one static executable; a script is refused before anything starts.
func TestRunRefusesAProgramContainersCannotHold(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "own.yaml")
	sc := "name: own-script\ncluster:\n  program: [sh, -c, 'exit 1']\n  nodes: 3\nsteps:\n  - wait: stable\n"
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--backend", "docker", path, "--store", t.TempDir()}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, path+": cluster.program on --backend docker:", "is not a static executable")
}

// TestRunHostsAStaticProgramInContainers: examples/bully-go, built
// static, goes into the node image and every container hosts it as its
// child; the leader-crash story passes as it does in the simulator.
func TestRunHostsAStaticProgramInContainers(t *testing.T) {
	dockertest.Parallel(t)
	bin := filepath.Join(t.TempDir(), "bully-go")
	build := exec.Command("go", "build", "-o", bin, "../../examples/bully-go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(t.TempDir(), "own.yaml")
	sc := "name: own-bully-docker\ncluster:\n  program: [" + bin + "]\n  nodes: 3\nsteps:\n  - wait: stable\n  - expect: {leader: 3}\n  - kill: leader\n  - expect: {leader: 2, within: 5s}\n  - restart: down\n  - expect: {leader: 3, on: all, within: 5s}\n"
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--backend", "docker", path, "--store", t.TempDir()}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, "own-bully-docker", "PASS")
}

// TestEveryExampleScenarioRunsAsShipped: every scenario under examples/,
// run from the repository's root as its description says once what it runs
// is built (`make examples`: bin/bully-go, and the image with Python),
// passes in the simulator and in containers. A new example's scenario is
// covered without a test of its own. A scenario whose program needs
// python3, or an image that is missing, is skipped, unless CI=true.
func TestEveryExampleScenarioRunsAsShipped(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	// What `make examples` builds first; the image it builds is made
	// once per machine (.ci/run runs make examples).
	build := exec.Command("go", "build", "-trimpath", "-o", "bin/bully-go", "./examples/bully-go")
	build.Dir, build.Env = "../..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel("../..", f)
		for _, backend := range []string{"sim", "docker"} {
			t.Run(sc.Name+"/"+backend, func(t *testing.T) {
				needs(t, sc, backend)
				args := []string{"run", "--backend", backend, rel, "--store", keptstore.For(t)}
				cmd := exec.Command(binary, args...)
				cmd.Dir = "../.."
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("ringleader %v: %v\n%s", args, err, out)
				}
				wantContains(t, "output", string(out), sc.Name, "PASS")
			})
		}
	}
}

// needs skips (or, with CI=true, fails) a run of sc on backend that this
// machine cannot give: no engine, no python3 for a Python program, no
// image the cluster names. A run in containers goes side by side with the
// other container tests (dockertest.Parallel); a run in the simulator
// keeps a core busy (dockertest.CPUBound). Each subtest takes its own
// lock: the parent holding the CPU lock while its container runs waited
// for slots held off every test that measures time, and with it the rest
// of that test's package, for minutes.
func needs(t *testing.T, sc *scenario.Scenario, backend string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s, and CI=true: every example must run (make examples builds what they need)", msg)
		}
		t.Skipf("%s (CI=true makes this a failure; make examples builds what the examples need)", msg)
	}
	if backend == "docker" {
		dockertest.Parallel(t)
		if im := sc.Cluster.Image; im != "" {
			if out, err := exec.Command("docker", "image", "inspect", im).CombinedOutput(); err != nil {
				missing("image %s is missing (%v: %.200s)", im, err, out)
			}
		}
		return
	}
	dockertest.CPUBound(t)
	if len(sc.Cluster.Program) > 0 && strings.HasPrefix(filepath.Base(sc.Cluster.Program[0]), "python") {
		if _, err := exec.LookPath(sc.Cluster.Program[0]); err != nil {
			missing("%s not found (%v)", sc.Cluster.Program[0], err)
		}
	}
}

// TestAProgramNotBuiltYetIsNamedWithHowToBuildIt: a scenario whose
// program's file is not there (an example run before `make examples`) is
// refused before anything starts, saying where the path was looked for
// and how the shipped examples' programs are built.
func TestAProgramNotBuiltYetIsNamedWithHowToBuildIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unbuilt.yaml")
	sc := "name: unbuilt\ncluster:\n  program: [bin/not-built-yet]\n  nodes: 3\nsteps:\n  - wait: 1s\n"
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"sim", "docker"} {
		args := []string{"run", "--backend", backend, "--build=false", path, "--store", t.TempDir()}
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, "cluster.program: ", "bin/not-built-yet is not there (a relative path is looked for from the directory ringleader runs in, ", "`make examples` builds the programs of the shipped examples")
	}
}
