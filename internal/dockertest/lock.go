package dockertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The container tests share one engine and two cores. Most of them only
// wait for containers and may run side by side (Parallel); a test that
// measures time (a latency, a failover) must run alone (Alone), or what it
// measures is the other tests' load. The two take one lock, shared or
// exclusive: a file lock (flock), so that it holds across the test
// binaries `go test ./...` runs at once as well as within one.
//
// flock alone would let a stream of shared holders starve an exclusive
// waiter, so a turnstile goes first: a shared taker passes it at once, an
// exclusive taker holds it while it waits, and no new shared holder gets
// in until it has had its turn.

// SlotsEnv caps how many Parallel tests hold a container slot at once
// across every test binary on the machine (default: three per two cores,
// the cores Go sees, at least one). go test's -p and -parallel multiply:
// four packages at once, each four tests at once, would be sixteen
// clusters on two cores. Two per core was the default until full suites
// on a busy two-core machine (load 20-28, half of it the kernel's) timed
// out engine calls in clean-ups, a Python node's first answer and a
// minority leader's step-down.
const SlotsEnv = "RINGLEADER_TEST_CLUSTERS"

// slots is how many container tests may run at once on this machine.
func slots() int {
	if n, err := strconv.Atoi(os.Getenv(SlotsEnv)); err == nil && n > 0 {
		return n
	}
	return max(1, 3*runtime.NumCPU()/2)
}

// LockDir is the directory of the lock files, one per machine and user of
// the engine: the system's temporary directory.
var LockDir = os.TempDir()

const (
	lockName      = "ringleader-dockertest.lock"
	turnstileName = "ringleader-dockertest.turnstile"
)

// held names the tests of this process that hold the lock, so that a test
// under one of them cannot take it again and wait for itself forever.
var (
	heldMu sync.Mutex
	held   = map[string]string{} // test name -> "shared" or "exclusive"
)

// Parallel is Require for a container test that does not measure time: it
// marks t parallel (t.Parallel; go test's -parallel says how many run at
// once) and holds the lock shared until t ends. It comes first in the test,
// before anything is started.
func Parallel(t *testing.T) {
	t.Helper()
	Require(t)
	t.Parallel()
	slot := takeSlot(t)
	take(t, syscall.LOCK_SH, "shared")
	t.Cleanup(func() { slot.Close() }) // registered after the lock's release, so it runs before it
}

// takeSlot waits for one of the machine's slots (SlotsEnv): a file of its
// own, locked exclusive. flock cannot wait for any one of several files,
// so it tries each in turn and, all taken, tries again a moment later.
func takeSlot(t *testing.T) *os.File {
	t.Helper()
	n := slots()
	t0 := time.Now()
	for {
		for i := range n {
			f, err := lockFile(fmt.Sprintf("ringleader-dockertest.slot%d", i), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				if waited := time.Since(t0); waited > time.Second {
					t.Logf("dockertest: waited %v for one of %d container slots", waited.Round(time.Millisecond), n)
				}
				return f
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Alone is Require for a container test that measures time: it holds the
// lock exclusive until t ends, so no other container test of any package
// runs meanwhile. It does not mark t parallel.
func Alone(t *testing.T) {
	t.Helper()
	Require(t)
	take(t, syscall.LOCK_EX, "exclusive")
}

// take blocks until the lock is t's in mode how, and releases it when t
// ends.
func take(t *testing.T, how int, mode string) {
	t.Helper()
	heldMu.Lock()
	for name, m := range held {
		if strings.HasPrefix(t.Name(), name+"/") {
			heldMu.Unlock()
			t.Fatalf("dockertest: %s wants the container lock %s, but %s holds it %s already and would wait for itself", t.Name(), mode, name, m)
		}
	}
	heldMu.Unlock()

	t0 := time.Now()
	f, err := acquire(how)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(t0); waited > time.Second {
		t.Logf("dockertest: waited %v for the container lock (%s)", waited.Round(time.Millisecond), mode)
	}
	heldMu.Lock()
	held[t.Name()] = mode
	heldMu.Unlock()
	t.Cleanup(func() {
		heldMu.Lock()
		delete(held, t.Name())
		heldMu.Unlock()
		f.Close()
	})
}

// acquire takes the lock in mode how (LOCK_SH or LOCK_EX, with LOCK_NB:
// fail with EWOULDBLOCK rather than wait) through the turnstile and
// returns the file that holds it; closing it releases the lock.
func acquire(how int) (*os.File, error) {
	turn, err := lockFile(turnstileName, syscall.LOCK_EX|how&syscall.LOCK_NB)
	if err != nil {
		return nil, err
	}
	defer turn.Close() // closing the file releases its flock
	return lockFile(lockName, how)
}

// lockFile opens name in LockDir (each call its own open file, which is
// what flock locks) and blocks until it holds it in mode how.
func lockFile(name string, how int) (*os.File, error) {
	path := filepath.Join(LockDir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("dockertest: open the container lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("dockertest: lock %s: %w", path, err)
	}
	return f, nil
}
