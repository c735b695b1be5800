//go:build !nodeimage

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// signalImage is a tag of its own, so these tests never move a tag other
// tools use.
const signalImage = "ringleader-node:cmd-test"

var (
	signalImageOnce sync.Once
	signalImageErr  error
)

// child is `ringleader run` under test: exited delivers cmd.Wait's result
// once, when it ends.
type child struct {
	cmd    *exec.Cmd
	exited chan error
}

// endedEarly fails the test if the child has ended while the test waited
// for its cluster: its status and what it said (from output) say why, where
// a bare timeout said nothing.
func (c child) endedEarly(t *testing.T, output func() string) {
	t.Helper()
	select {
	case err := <-c.exited:
		t.Fatalf("ringleader run ended (status %d) before its cluster was up; it said:\n%s", exitCode(err), output())
	default:
	}
}

// runUntil starts `ringleader run --backend docker` on the split-brain
// scenario with its output going to out, waits until its cluster exists,
// and returns the process and the cluster's run label. output reads what
// the child said, for a failure.
func runUntil(t *testing.T, out io.Writer, output func() string) (child, string, string) {
	t.Helper()
	dockertest.Require(t)
	if testing.Short() {
		t.Skip("-short: runs a container cluster")
	}
	signalImageOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		signalImageErr = docker.BuildImage(ctx, signalImage, nil)
	})
	if signalImageErr != nil {
		t.Fatalf("building %s: %v", signalImage, signalImageErr)
	}
	store := t.TempDir()
	cmd := exec.Command(binary, "run", "--backend", "docker", "--image", signalImage, "--build=false", "--store", store,
		filepath.Join("..", "..", "scenarios", "split-brain-no-quorum.yaml"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	c := child{cmd: cmd, exited: make(chan error, 1)}
	go func() { c.exited <- cmd.Wait() }()
	// The cluster's name is in the history's first mark.
	startMark := regexp.MustCompile(`start cluster ([A-Za-z0-9_.-]+)`)
	deadline := time.Now().Add(hangGuard)
	for {
		hs, _ := filepath.Glob(filepath.Join(store, "split-brain-no-quorum", "2*", "history.jsonl"))
		if len(hs) == 1 {
			b, _ := os.ReadFile(hs[0])
			if m := startMark.FindSubmatch(b); m != nil {
				run := string(m[1])
				t.Cleanup(func() { docker.CleanRun(context.Background(), run, true) })
				return c, run, filepath.Dir(hs[0])
			}
		}
		c.endedEarly(t, output)
		if time.Now().After(deadline) {
			t.Fatalf("no cluster started within %v", hangGuard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitGone polls until nothing is labelled with run, and says how long
// that took from since. d only guards against a hang: how long a removal
// takes is the engine's business (on a loaded machine it took 15 s and
// more for the reaper's sweeps, its exit and its own removal), and the
// claim here is that everything goes, not how soon.
func awaitGone(t *testing.T, run string, since time.Time, d time.Duration) time.Duration {
	t.Helper()
	for {
		left, err := docker.Leftovers(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return time.Since(since)
		}
		if time.Since(since) > d {
			t.Fatalf("%v after the signal, run %s still has %v", d, run, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hangGuard bounds the waits for the engine in these tests: far beyond
// what starting or removing a run takes even on a loaded machine (a
// five-node start took 50 s in one CI run), so that only a hang trips it.
const hangGuard = 3 * time.Minute

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestNothingOutlivesARun kills `ringleader run` 3 s into a container run
// in the three ways that used to leave the whole cluster running,
// partitioned: SIGKILL (nothing of the process runs: the reaper removes
// the run), SIGHUP (handled like SIGINT: exit 130, results kept) and a
// closed output pipe (`2>&1 | head -3`: exit 141, results kept). Nothing
// labelled with the run may remain: the test awaits the last of it, the
// reaper, which exits only after a sweep finds nothing left.
func TestNothingOutlivesARun(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: close the output pipe
		code int            // -1: killed
	}{
		{"SIGKILL", syscall.SIGKILL, -1},
		{"SIGHUP", syscall.SIGHUP, 130},
		{"closed pipe", 0, exitOutputClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dockertest.Parallel(t)
			var (
				out  io.Writer
				buf  strings.Builder
				pr   *os.File
				pw   *os.File
				lock sync.Mutex
			)
			if tc.sig == 0 {
				var err error
				if pr, pw, err = os.Pipe(); err != nil {
					t.Fatal(err)
				}
				out = pw
			} else {
				out = writerFunc(func(p []byte) (int, error) { lock.Lock(); defer lock.Unlock(); return buf.Write(p) })
			}
			said := func() string { lock.Lock(); defer lock.Unlock(); return buf.String() }
			if pr != nil {
				said = func() string { // what is in the pipe, its writer gone
					pr.SetReadDeadline(time.Now().Add(time.Second))
					b, _ := io.ReadAll(pr)
					return string(b)
				}
			}
			c, run, dir := runUntil(t, out, said)
			if pw != nil {
				pw.Close() // the child has its own copy
			}
			// The mark is written just before the cluster starts.
			for deadline := time.Now().Add(hangGuard); ; time.Sleep(50 * time.Millisecond) {
				left, _ := docker.Leftovers(context.Background(), run)
				if strings.Contains(strings.Join(left, " "), "-node5") {
					break
				}
				c.endedEarly(t, said)
				if time.Now().After(deadline) {
					t.Fatalf("run %s has only %v after %v", run, left, hangGuard)
				}
			}
			time.Sleep(3 * time.Second) // "3 s in", as the hand measurement does it
			t0 := time.Now()
			if tc.sig != 0 {
				c.cmd.Process.Signal(tc.sig)
			} else {
				// head -3: read three lines, then go away.
				sc := bufio.NewScanner(pr)
				for i := 0; i < 3 && sc.Scan(); i++ {
				}
				pr.Close()
				t0 = time.Now()
			}
			code := exitCode(<-c.exited)
			exited := time.Since(t0)
			if code != tc.code {
				lock.Lock()
				t.Errorf("exit status %d, want %d; output:\n%s", code, tc.code, buf.String())
				lock.Unlock()
			}
			took := awaitGone(t, run, t0, hangGuard)
			t.Logf("%s: process gone after %v; nothing of run %s left %v after the signal",
				tc.name, exited.Round(time.Millisecond), run, took.Round(time.Millisecond))
			if tc.sig != syscall.SIGKILL {
				if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
					t.Errorf("no results.json: %v", err)
				}
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
