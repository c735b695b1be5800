package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
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

// TestRunsTheShippedPythonScenario runs examples/bully-python's scenario
// from the repository's root, as its description says; without python3
// it is skipped, unless CI=true.
func TestRunsTheShippedPythonScenario(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 not found, and CI=true: the Python example must be tested (%v)", err)
		}
		t.Skipf("python3 not found (%v); CI=true makes this a failure", err)
	}
	args := []string{"run", "--backend", "sim", "examples/bully-python/leader-crash.yaml", "--store", t.TempDir()}
	cmd := exec.Command(binary, args...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ringleader %v: %v\n%s", args, err, out)
	}
	wantContains(t, "output", string(out), "python-bully-leader-crash")
}

// TestRunHostsAStaticProgramInContainers: examples/bully-go, built
// static, goes into the node image and every container hosts it as its
// child; the leader-crash story passes as it does in the simulator.
func TestRunHostsAStaticProgramInContainers(t *testing.T) {
	dockertest.Require(t)
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

// runShippedGoScenario runs examples/bully-go/split-brain-quorum.yaml as
// its description says to, from the repository's root: examples/bully-go
// built static as bin/bully-go (the build outputs' directory, ignored by
// git), which the scenario names.
func runShippedGoScenario(t *testing.T, backend string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", "bin/bully-go", "./examples/bully-go")
	build.Dir, build.Env = "../..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := []string{"run", "--backend", backend, "examples/bully-go/split-brain-quorum.yaml", "--store", t.TempDir()}
	cmd := exec.Command(binary, args...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ringleader %v: %v\n%s", args, err, out)
	}
	wantContains(t, "output", string(out), "go-bully-split-brain-quorum  1/1  7/7", "pass            pass", "PASS")
}

// TestRunsTheShippedGoScenario: the Go example's shipped scenario passes
// in the simulator, its no-split-brain and epoch-safety claims included.
func TestRunsTheShippedGoScenario(t *testing.T) { runShippedGoScenario(t, "sim") }

// TestRunsTheShippedGoScenarioInContainers: and in containers, the static
// program in the FROM-scratch node image.
func TestRunsTheShippedGoScenarioInContainers(t *testing.T) {
	dockertest.Require(t)
	runShippedGoScenario(t, "docker")
}

// TestRunsTheShippedPythonScenarioInContainers runs the Python example's
// scenario on the docker backend, in the image examples/bully-python/
// image.sh builds. Without that image the test is skipped, naming the
// script, unless CI=true.
func TestRunsTheShippedPythonScenarioInContainers(t *testing.T) {
	dockertest.Require(t)
	const image = "ringleader-python:bookworm"
	if out, err := exec.Command("docker", "image", "inspect", image).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("image %s is missing, and CI=true: build it with examples/bully-python/image.sh (%v: %s)", image, err, out)
		}
		t.Skipf("image %s is missing: build it with examples/bully-python/image.sh (CI=true makes this a failure)", image)
	}
	args := []string{"run", "--backend", "docker", "examples/bully-python/leader-crash.yaml", "--store", t.TempDir()}
	cmd := exec.Command(binary, args...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ringleader %v: %v\n%s", args, err, out)
	}
	wantContains(t, "output", string(out), "python-bully-leader-crash", "PASS")
}
