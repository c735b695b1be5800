package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// awaitNothingLeft polls until nothing is labelled with run, for up to d.
func awaitNothingLeft(t *testing.T, run string, d time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	deadline := t0.Add(d)
	for {
		left, err := Leftovers(context.Background(), run)
		if err != nil {
			t.Fatalf("list what run %s left: %v", run, err)
		}
		if len(left) == 0 {
			return time.Since(t0)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the connection dropped, run %s still has %v", d, run, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReaperRemovesTheRunWhenItsConnectionDrops is a harness killed with
// SIGKILL, as the engine sees it: the reaper's attach connection closes
// without a word. Everything labelled with the run (a running container,
// its labelled volume and a network) goes, the reaper itself last.
func TestReaperRemovesTheRunWhenItsConnectionDrops(t *testing.T) {
	dockertest.Parallel(t)
	ctx := context.Background()
	b, run, cli := reapedBackend(t)
	nw, err := cli.NetworkCreate(ctx, "rl-"+run, client.NetworkCreateOptions{Driver: "bridge", Labels: labels(run, RoleNetwork)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name: "rl-" + run + "-node1",
		Config: &container.Config{
			Image:  testImage,
			Env:    []string{"RINGLEADER_ID=1", "RINGLEADER_PEERS=1=node1", "RINGLEADER_STATUS_ADDR="},
			Labels: labels(run, RoleNode),
		},
		HostConfig:       &container.HostConfig{Binds: []string{"rl-" + run + "-state:" + stateDir}},
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{nw.ID: {Aliases: []string{"node1"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	// The volume the bind made carries no label; one that does:
	if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: "rl-" + run + "-labelled", Labels: labels(run, RoleNode)}); err != nil {
		t.Fatal(err)
	}
	cli.VolumeRemove(ctx, "rl-"+run+"-state", client.VolumeRemoveOptions{Force: true}) // in use: stays until the container goes
	left, err := Leftovers(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"container rl-" + run + "-node1", "container rl-" + run + "-reaper", "network rl-" + run, "volume rl-" + run + "-labelled"}
	for _, w := range want {
		if !strings.Contains(strings.Join(left, "\n"), w) {
			t.Fatalf("before the drop, run %s has %v; want %v among them", run, left, want)
		}
	}

	b.reaper.conn.Close() // what the engine sees of a harness killed with SIGKILL
	took := awaitNothingLeft(t, run, 30*time.Second)
	t.Logf("nothing of run %s left %v after its connection dropped", run, took.Round(time.Millisecond))
	cli.VolumeRemove(ctx, "rl-"+run+"-state", client.VolumeRemoveOptions{Force: true})
}

// TestCloseStopsTheReaper: a normal Close removes the
// run itself, tells the reaper, and the reaper sweeps once and goes.
func TestCloseStopsTheReaper(t *testing.T) {
	dockertest.Parallel(t)
	b, _ := startCluster(t, 1)
	left, err := Leftovers(context.Background(), b.Run())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(left, " "), "container rl-"+b.Run()+"-reaper") {
		t.Fatalf("a started run has %v, no reaper", left)
	}
	// startCluster's clean-up closes and demands that nothing is left.
}

// TestCloseSettlesAfterAnInterruptedStart: cancelling Start abandons a
// request, not the engine's work on it, and a create the engine finishes
// after Close's sweep used to outlive the run (a network, when a run got
// SIGTERM 300 ms in, in 8 tries of 12). Here the late create is the
// test's own, half a second into Close; Close, its Start interrupted,
// sweeps until reaper.Settle has passed, and when it returns nothing of
// the run is left.
func TestCloseSettlesAfterAnInterruptedStart(t *testing.T) {
	dockertest.Parallel(t)
	ctx := context.Background()
	b, run, cli := reapedBackend(t)
	b.interrupted = time.Now()
	late := make(chan error, 1)
	go func() {
		// The engine finishing an abandoned create: after Close's first
		// sweep, within the settle window.
		time.Sleep(500 * time.Millisecond)
		_, err := cli.NetworkCreate(ctx, "rl-"+run+"-late", client.NetworkCreateOptions{Driver: "bridge", Labels: labels(run, RoleNetwork)})
		late <- err
	}()
	t0 := time.Now()
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close after an interrupted Start: %v", err)
	}
	took := time.Since(t0)
	if err := <-late; err != nil {
		t.Fatalf("the late create: %v", err)
	}
	left, err := Leftovers(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("Close returned after %v and left %v", took.Round(time.Millisecond), left)
	}
}

// TestOnlyAnInterruptedStartMakesCloseSettle: a Start whose context ends
// before it finishes is marked interrupted (Close then settles); one that
// fails by itself, on an image that is not there, is not, and its Close
// does not wait.
func TestOnlyAnInterruptedStartMakesCloseSettle(t *testing.T) {
	dockertest.Parallel(t)
	for _, tc := range []struct {
		name        string
		image       string
		cancel      bool
		interrupted bool
	}{
		{"cancelled", testImage, true, true},
		{"failed", "ringleader-node:no-such-tag", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, _ := reaperRun(t)
			b := New(WithImage(tc.image), WithBuild(false), WithProgress(testWriter{t}))
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			if err := b.Start(ctx, spec(run, 1), &history.Memory{}); err == nil {
				t.Fatal("Start succeeded")
			}
			if got := !b.interrupted.IsZero(); got != tc.interrupted {
				t.Errorf("interrupted = %v, want %v", got, tc.interrupted)
			}
			if err := b.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestReaperNeedsALocalSocket: an engine behind tcp:// cannot be
// mounted; the run starts without a reaper and says so.
func TestReaperNeedsALocalSocket(t *testing.T) {
	for host, want := range map[string]bool{
		"unix:///var/run/docker.sock":    true,
		"unix:///run/user/1000/d.sock":   true,
		"tcp://10.0.0.1:2376":            false,
		"npipe:////./pipe/docker_engine": false,
		"ssh://me@host":                  false,
	} {
		if _, ok := unixSocket(host); ok != want {
			t.Errorf("unixSocket(%q) = %v, want %v", host, ok, want)
		}
	}
	var warn strings.Builder
	b := New(WithImage(testImage), WithWarnings(&warn))
	b.run = "no-socket"
	cli, err := client.New(client.WithHost("tcp://127.0.0.1:1")) // never dialled
	if err != nil {
		t.Fatal(err)
	}
	if err := b.startReaper(context.Background(), cli, &b.reaper); err != nil {
		t.Fatalf("startReaper with an engine on tcp: %v, want a warning only", err)
	}
	if b.reaper != nil || !strings.Contains(warn.String(), "run no-socket has no reaper") || !strings.Contains(warn.String(), "ringleader clean --run no-socket") {
		t.Errorf("warning %q", warn.String())
	}
}

// TestUnstartedReapersGo: a harness killed between creating its reaper and
// starting it leaves a created container that AutoRemove never removes;
// the next run's Start removes it once it is a minute old. Start's sweep
// (every run, a minute) leaves the one created a moment ago; the same
// sweep with no age removes it. That sweep is held to this test's run:
// over every run it would remove the reapers other tests are starting
// meanwhile, and the test would have to hold the engine alone.
func TestUnstartedReapersGo(t *testing.T) {
	dockertest.Parallel(t)
	ctx := context.Background()
	run, cli := reaperRun(t)
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Name:   "rl-" + run + "-reaper",
		Config: &container.Config{Image: testImage, Labels: labels(run, RoleReaper)},
		// As the real reaper: a tmpfs where the image declares its
		// VOLUME, or the create makes an anonymous volume.
		HostConfig: &container.HostConfig{AutoRemove: true, Tmpfs: map[string]string{stateDir: ""}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	removeUnstartedReapers(ctx, cli, "", unstartedAge, logf)
	if _, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("a reaper created a moment ago (its harness may be starting it) was removed: %v", err)
	}
	removeUnstartedReapers(ctx, cli, run, 0, logf)
	if _, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{}); !isNotFound(err) {
		t.Fatalf("the unstarted reaper is still there (inspect: %v)", err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "rl-"+run+"-reaper") || !strings.Contains(logged[0], "never started") {
		t.Errorf("logged %q, want one line naming the removed reaper", logged)
	}
}

// reaperRun is a run label of the test's own, cleaned up after it whatever
// it left, and an engine client closed with it.
func reaperRun(t *testing.T) (string, *testcontainers.DockerClient) {
	t.Helper()
	dockertest.Require(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	run := runID(t)
	t.Cleanup(func() { CleanRun(context.Background(), run, true) })
	cli, err := newClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return run, cli
}

// reapedBackend is a backend of a run of its own with only its reaper
// started, nothing else of the run created yet.
func reapedBackend(t *testing.T) (*Backend, string, *testcontainers.DockerClient) {
	t.Helper()
	run, cli := reaperRun(t)
	b := New(WithImage(testImage), WithProgress(testWriter{t}))
	b.run = run
	if err := b.startReaper(context.Background(), cli.Client, &b.reaper); err != nil {
		t.Fatal(err)
	}
	return b, run, cli
}

// TestCloseIsJudgedByWhatIsLeft: a clean-up that ran past its budget and
// left nothing closed the run (it is logged, with the budget); one that
// left something, failed a step or could not look fails, and names the
// budget beside the rest when it ran out.
func TestCloseIsJudgedByWhatIsLeft(t *testing.T) {
	stepErr := fmt.Errorf("remove network: engine said no")
	for _, tc := range []struct {
		name     string
		c        closing
		wantErrs []string // substrings, in order; none: closed
		wantNote string
	}{
		{"in time", closing{}, nil, "closed in 2s, nothing left"},
		{"late, nothing left", closing{late: 15 * time.Second}, nil, "nothing left (clean-up ran out of its 15s; the engine was slow)"},
		{"late, a container left", closing{late: 15 * time.Second, left: []string{"container n3"}, reaping: true},
			[]string{"still there: container n3 (the reaper goes on removing them", "clean-up ran out of its 15s"}, ""},
		{"in time, a container left", closing{left: []string{"container n3"}},
			[]string{"still there: container n3 (`ringleader clean --run r1` removes them)"}, ""},
		{"late, a step failed", closing{late: 15 * time.Second, errs: []error{stepErr}},
			[]string{"remove network: engine said no", "clean-up ran out of its 15s"}, ""},
		{"cannot look", closing{lookErr: fmt.Errorf("engine gone")}, []string{"cannot tell what is left: engine gone"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.run, tc.c.took = "r1", 2*time.Second
			errs, note := tc.c.outcome()
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("errors %q, want %d like %q", errs, len(tc.wantErrs), tc.wantErrs)
			}
			for i, want := range tc.wantErrs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d: %q, want it to say %q", i, errs[i], want)
				}
			}
			if !strings.Contains(note, tc.wantNote) || (tc.wantNote == "") != (note == "") {
				t.Errorf("note %q, want %q", note, tc.wantNote)
			}
		})
	}
}
