package dockertest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRequireWithoutEngine runs the test binary again against an engine
// address nobody answers on: without CI it skips, with CI=true it fails
// loudly.
func TestRequireWithoutEngine(t *testing.T) {
	if os.Getenv("DOCKERTEST_CHILD") == "1" {
		Require(t)
		t.Log("REQUIRE PASSED")
		return
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "SKIP"},
		{"true", true, "DOCKER ENGINE REQUIRED"},
		// the named engine, its cause and what named it; no fallback
		{"true", true, "docker engine at unix:///nonexistent/docker.sock: no such file or directory (DOCKER_HOST)"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireWithoutEngine$", "-test.v")
		cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "DOCKER_HOST=unix:///nonexistent/docker.sock", "CI="+tc.ci, NoDockerEnv+"=")
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: child failed=%v (%v), want %v\n%s", tc.ci, failed, err, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "REQUIRE PASSED") {
			t.Errorf("CI=%q: child output lacks %q or passed:\n%s", tc.ci, tc.want, out)
		}
	}
}

// TestOffNeverDials: with RINGLEADER_NO_DOCKER=1 the answer is ErrOff, not
// the dial error an engine address nobody answers on would give, and
// Require skips even in CI.
func TestOffNeverDials(t *testing.T) {
	if os.Getenv("DOCKERTEST_CHILD") == "1" {
		if err := Available(); !errors.Is(err, ErrOff) {
			t.Fatalf("Available() = %v, want ErrOff", err)
		}
		Require(t)
		t.Log("REQUIRE PASSED")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOffNeverDials$", "-test.v")
	cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "DOCKER_HOST=unix:///nonexistent/docker.sock", "CI=true", NoDockerEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SKIP") || strings.Contains(string(out), "REQUIRE PASSED") || strings.Contains(string(out), "nonexistent") {
		t.Errorf("child with %s=1: err=%v, want a skip without dialing:\n%s", NoDockerEnv, err, out)
	}
}

// TestLockSharedExcludesExclusiveAndAWaitingWriterGoesFirst: shared
// holders share, an exclusive taker waits for them, and while it waits no
// new shared holder gets in before it (the turnstile), so a test that
// measures time is not starved by a stream of parallel ones. Each take
// opens the file anew, and flock locks an open file, so two takes in one
// process exclude each other as two processes' do.
func TestLockSharedExcludesExclusiveAndAWaitingWriterGoesFirst(t *testing.T) {
	old := LockDir
	LockDir = t.TempDir()
	t.Cleanup(func() { LockDir = old })

	acquire, turnstileName := containerLock.acquire, containerLock.turnstile
	a, err := acquire(syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := acquire(syscall.LOCK_SH | syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("a second shared take while one holds it shared: %v", err)
	}
	b.Close()
	if _, err := acquire(syscall.LOCK_EX | syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("an exclusive take while one holds it shared: %v, want EWOULDBLOCK", err)
	}

	got := make(chan *os.File)
	go func() {
		w, err := acquire(syscall.LOCK_EX)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	// The writer waits holding the turnstile.
	for {
		f, err := lockFile(turnstileName, syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		time.Sleep(time.Millisecond)
	}
	if _, err := acquire(syscall.LOCK_SH | syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a shared take while a writer waits: %v, want EWOULDBLOCK (the writer goes first)", err)
	}
	a.Close()
	w := <-got
	if _, err := acquire(syscall.LOCK_SH | syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a shared take while the writer holds it: %v, want EWOULDBLOCK", err)
	}
	w.Close()
	c, err := acquire(syscall.LOCK_SH | syscall.LOCK_NB)
	if err != nil {
		t.Fatalf("a shared take once the writer is done: %v", err)
	}
	c.Close()
}

// TestACPUBoundTestHoldsOffATimingTestOnly: the CPU lock held shared (a
// CPU-bound test running) keeps an exclusive taker (a test that measures
// time) out, and leaves the container lock to the container tests; a
// test that holds the container lock exclusive without measuring time
// leaves the CPU lock free.
func TestACPUBoundTestHoldsOffATimingTestOnly(t *testing.T) {
	old := LockDir
	LockDir = t.TempDir()
	t.Cleanup(func() { LockDir = old })

	busy, err := cpuLock.acquire(syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	wantHeld(t, cpuLock, syscall.LOCK_EX, "while a CPU-bound test holds it")
	wantFree(t, containerLock, syscall.LOCK_EX, "while only the CPU lock is held")
	busy.Close()

	// A test that measures time holds both, exclusive.
	t.Run("alone", func(t *testing.T) {
		takeAlone(t)
		wantHeld(t, cpuLock, syscall.LOCK_SH, "while a test runs alone")
		wantHeld(t, containerLock, syscall.LOCK_SH, "while a test runs alone")
	})
	wantFree(t, cpuLock, syscall.LOCK_EX, "once the test that ran alone ended")
	wantFree(t, containerLock, syscall.LOCK_EX, "once the test that ran alone ended")

	// A test that sweeps or reshapes the engine but measures no time
	// keeps the container tests out and lets the CPU-bound ones run.
	t.Run("exclusive", func(t *testing.T) {
		if !takeExclusive(t) {
			t.Error("an exclusive test with no parent holding the lock did not take it")
		}
		wantHeld(t, containerLock, syscall.LOCK_SH, "while a test holds it exclusive")
		wantFree(t, cpuLock, syscall.LOCK_SH, "beside an exclusive container test")
		// A case under it is in the same window: it takes nothing
		// (taking the lock again would wait for itself).
		t.Run("case", func(t *testing.T) {
			if takeExclusive(t) {
				t.Error("a case took the lock its parent holds")
			}
			wantHeld(t, containerLock, syscall.LOCK_SH, "under a case of an exclusive test")
		})
	})
	wantFree(t, containerLock, syscall.LOCK_EX, "once the exclusive test ended")
}

// wantHeld fails t unless taking lk in mode how would wait (someone holds
// it in a mode that excludes how), when says when.
func wantHeld(t *testing.T, lk lock, how int, when string) {
	t.Helper()
	f, err := lk.acquire(how | syscall.LOCK_NB)
	if err == nil {
		f.Close()
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the %s (mode %d) %s: %v, want EWOULDBLOCK", lk.what, how, when, err)
	}
}

// wantFree fails t unless lk can be taken in mode how at once, when says
// when; it releases what it took.
func wantFree(t *testing.T, lk lock, how int, when string) {
	t.Helper()
	f, err := lk.acquire(how | syscall.LOCK_NB)
	if err != nil {
		t.Errorf("the %s (mode %d) %s: %v, want it free", lk.what, how, when, err)
		return
	}
	f.Close()
}

// TestCPUBoundAfterTheContainerLockIsRefused: a test (or a parent) that
// holds the container lock and then asks for the CPU lock fails at once
// with what to do instead, rather than risk waiting forever for a test
// that holds the CPU lock and waits for the container lock.
func TestCPUBoundAfterTheContainerLockIsRefused(t *testing.T) {
	if os.Getenv("DOCKERTEST_CHILD") == "1" {
		take(t, containerLock, syscall.LOCK_SH, "shared")
		t.Run("sub", func(t *testing.T) {
			CPUBound(t)
			t.Log("CPU LOCK TAKEN")
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCPUBoundAfterTheContainerLockIsRefused$", "-test.v")
	cmd.Env = append(os.Environ(), "DOCKERTEST_CHILD=1", "TMPDIR="+t.TempDir(), NoDockerEnv+"=")
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "CPU LOCK TAKEN") || !strings.Contains(string(out), "take CPUBound before Parallel") {
		t.Errorf("child (err %v) took the CPU lock under the container lock, or failed without saying why:\n%s", err, out)
	}
}
