//go:build !nodeimage

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/program"
)

// staticBullyGo builds examples/bully-go as one static executable, as a
// program for containers must be.
func staticBullyGo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bully-go")
	build := exec.Command("go", "build", "-o", bin, "../../examples/bully-go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/bully-go: %v\n%s", err, out)
	}
	return bin
}

// TestImageRefusesAProgramTheImageCannotHold: a script without an image
// for its runtime is refused with the docker backend's reason, exit 2,
// before any engine is asked (here there is none to ask).
func TestImageRefusesAProgramTheImageCannotHold(t *testing.T) {
	script := filepath.Join(t.TempDir(), "elect.py")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env python3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"DOCKER_HOST=tcp://127.0.0.1:1", "DOCKER_CONTEXT="}
	args := []string{"image", "--program", script + " --fast"}
	r := ringleaderEnv(t, env, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr, "ringleader image: --program: "+script+" is not a static executable", "needs --program-image", "PROGRAM_IMAGE= with make up")
	if strings.Contains(r.stderr, "docker engine") || r.stdout != "" {
		t.Errorf("an engine was asked, or something printed:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"image"}, "ringleader image: --program: required"},
		{[]string{"image", "--program", script, "extra"}, `ringleader image: unexpected argument "extra"`},
	} {
		r := ringleaderEnv(t, env, c.args...)
		r.wantCode(t, 2, c.args...)
		wantContains(t, "stderr", r.stderr, c.want)
	}
}

// cmdTestImage is the node image the container tests of this package
// start from (a tag of their own, built once).
func cmdTestImage(t *testing.T) string {
	t.Helper()
	signalImageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		signalImageErr = docker.BuildImage(ctx, signalImage, nil)
	})
	if signalImageErr != nil {
		t.Fatalf("building %s: %v", signalImage, signalImageErr)
	}
	return signalImage
}

// TestImageBuildsTheProgramsNodeImageForCompose: what make up runs for
// PROGRAM=: the image holding the program, labelled with the run, and
// the two shell assignments docker-compose.yml reads. The same program
// again is the same image, built once; once the node image is rebuilt,
// the same tag is built again from it and the stale image goes.
func TestImageBuildsTheProgramsNodeImageForCompose(t *testing.T) {
	dockertest.Parallel(t)
	// A node image tag of this test's own, which it moves below.
	node := fmt.Sprintf("ringleader-node:image-test-%d", os.Getpid())
	docker1(t, "tag", cmdTestImage(t), node)
	t.Cleanup(func() { exec.Command("docker", "image", "rm", node).Run() })
	bin := staticBullyGo(t)
	label := fmt.Sprintf("image-test-%d", os.Getpid())
	args := []string{"image", "--image", node, "--build=false", "--run", label, "--program", bin + " --quiet"}
	build := func() (tag, id string) {
		t.Helper()
		r := ringleader(t, args...)
		r.wantCode(t, 0, args...)
		vars := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			k, v, _ := strings.Cut(l, "=")
			vars[k] = strings.Trim(v, "'")
		}
		tag = vars["NODE_IMAGE"]
		if !strings.HasPrefix(tag, node+"-program-") || vars["RINGLEADER_PROGRAM"] != "/program/bully-go --quiet" || len(vars) != 2 {
			t.Fatalf("stdout %q: want NODE_IMAGE=%s-program-… and RINGLEADER_PROGRAM=/program/bully-go --quiet", r.stdout, node)
		}
		return tag, docker1(t, "image", "inspect", "--format", "{{.ID}}", tag)
	}
	tag, id := build()
	t.Cleanup(func() { exec.Command("docker", "image", "rm", tag).Run() })
	var labels map[string]string
	if out := docker1(t, "image", "inspect", "--format", "{{json .Config.Labels}}", tag); json.Unmarshal([]byte(out), &labels) != nil ||
		labels[docker.LabelRun] != label || labels[docker.LabelProject] != docker.Project {
		t.Errorf("image %s has labels %s; want %s=%s and the project's", tag, out, docker.LabelRun, label)
	}
	if tag2, id2 := build(); tag2 != tag || id2 != id {
		t.Errorf("the same program again: %s (%s); want the same image %s (%s)", tag2, id2, tag, id)
	}

	// The node image is rebuilt: the program's image must hold the new node.
	rebuild := exec.Command("docker", "build", "--label", docker.LabelProject+"="+docker.Project, "-t", node, "-")
	rebuild.Stdin = strings.NewReader("FROM " + node + "\nLABEL org.ringleader.test=rebuilt\n")
	if out, err := rebuild.CombinedOutput(); err != nil {
		t.Fatalf("rebuild %s: %v\n%s", node, err, out)
	}
	tag3, id3 := build()
	if tag3 != tag || id3 == id {
		t.Errorf("after the node image was rebuilt: %s (%s); want %s built again", tag3, id3, tag)
	}
	if err := exec.Command("docker", "image", "inspect", id).Run(); err == nil {
		t.Errorf("the stale image %s is still there", id)
	}
}

// docker1 runs the docker CLI and returns its output, trimmed.
func docker1(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestFaultAndRunAttachOnAClusterOfPrograms: a cluster whose nodes host
// examples/bully-go, started by another process, is reached by `fault`
// and `run --attach` as any cluster is. They take the program's claims
// from what its nodes said at boot, never running it, and the checkers
// judge the run by them.
func TestFaultAndRunAttachOnAClusterOfPrograms(t *testing.T) {
	dockertest.Parallel(t)
	node := cmdTestImage(t)
	bin := staticBullyGo(t)
	// The cluster's owner: this test process, as a harness run would.
	name, err := program.Register([]string{bin}, election.NoQuorum, []election.NodeID{1, 2, 3}, election.Timing{}, program.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(program.CloseAll)
	run := fmt.Sprintf("attach-programs-%d", os.Getpid())
	owner := docker.New(docker.WithImage(node), docker.WithBuild(false))
	ctx := context.Background()
	t.Cleanup(func() { owner.Close(ctx) })
	spec := chaos.ClusterSpec{Name: run, Algorithm: name, Program: []string{bin}, Quorum: election.NoQuorum, Members: []election.NodeID{1, 2, 3}, Seed: 3}
	if err := owner.Start(ctx, spec, &history.Memory{}); err != nil {
		t.Fatal(err)
	}

	args := []string{"fault", "--run", run, "kill", "leader"}
	r := ringleader(t, args...)
	r.wantCode(t, 0, args...)
	wantContains(t, "stdout", r.stdout, run+": kill leader → node 3", "settled after")
	// On one engine there is nothing to cut along, and fault says so.
	args = []string{"fault", "--run", run, "partition", "engines"}
	r = ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "stderr", r.stderr, "runs on one engine, so there is nothing to cut along", "--engines A,B")

	dir := t.TempDir()
	scenario := func(file, prog string) string {
		path := filepath.Join(dir, file)
		sc := "name: attached-program\ncluster:\n  program: [" + prog + "]\n  nodes: 3\nsteps:\n" +
			"  - wait: stable\n  - expect: {leader: 2}\n  - restart: down\n  - expect: {leader: 3, on: all, within: 5s}\n" +
			"  - kill: leader\n  - expect: {leader: 2, within: 5s}\n  - restart: down\n  - expect: {leader: 3, on: all, within: 5s}\n"
		if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	store := t.TempDir()
	args = []string{"run", "--attach", run, "--store", store, scenario("own.yaml", bin)}
	r = ringleader(t, args...)
	r.wantCode(t, 0, args...)
	b, err := os.ReadFile(filepath.Join(store, "attached-program", "latest-docker", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res harness.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var judged []string
	for _, c := range res.Checkers {
		judged = append(judged, string(c.Checker))
		if !c.Pass {
			t.Errorf("%s: %s", c.Checker, c.Summary)
		}
	}
	if !slices.Equal(judged, []string{"agreement", "bully-max", "liveness", "no-program-failure"}) || !strings.HasPrefix(res.Algorithm, "program-bully-go") {
		t.Errorf("run of %s judged by %v; want the Go Bully's claims, agreement, bully-max and liveness, and no-program-failure, which judges every program", res.Algorithm, judged)
	}
	if len(res.Failovers) == 0 {
		t.Errorf("no failover measured in %s", b)
	}

	// A scenario whose program is not the one the nodes host is refused,
	// saying what each is.
	args = []string{"run", "--attach", run, "--store", store, scenario("other.yaml", bin+", --other")}
	r = ringleader(t, args...)
	r.wantCode(t, 1, args...)
	wantContains(t, "stderr", r.stderr, `the running cluster `+run+` hosts the program "/program/bully-go"; the scenario's program would run there as "/program/bully-go --other"`)
}
