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
// measures is the other tests' load. The two take one lock, the container
// lock, shared or exclusive: a file lock (flock), so that it holds across
// the test binaries `go test ./...` runs at once as well as within one.
//
// The load that matters is not only containers. A test that keeps a core
// busy for seconds (a simulator sweep, a conformance run of every
// algorithm, a program over a pipe) in another test binary takes half the
// machine from the nodes and from the helper that delays their packets, and
// a latency measured beside it has its tail. Such a test says so
// (CPUBound) and holds a second lock, the CPU lock, shared; a test that
// measures time takes it exclusive first. The order is always the CPU lock
// before the container lock: a test that held the container lock and then
// waited for the CPU lock could wait for an Alone test that waits for it.
//
// flock alone would let a stream of shared holders starve an exclusive
// waiter, so each lock has a turnstile in front: a shared taker passes it
// at once, an exclusive taker holds it while it waits, and no new shared
// holder gets in until it has had its turn.

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

// A lock is one machine-wide reader-writer lock: a file locked with flock
// and the turnstile file in front of it, both in LockDir.
type lock struct {
	file, turnstile string
	what            string // how errors and logs name it
}

var (
	containerLock = lock{"ringleader-dockertest.lock", "ringleader-dockertest.turnstile", "container lock"}
	cpuLock       = lock{"ringleader-dockertest.cpu.lock", "ringleader-dockertest.cpu.turnstile", "CPU lock"}
)

// held names the tests of this process that hold each lock, so that a test
// under one of them cannot take it again and wait for itself forever.
var (
	heldMu sync.Mutex
	held   = map[lock]map[string]string{} // lock -> test name -> "shared" or "exclusive"
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
	take(t, containerLock, syscall.LOCK_SH, "shared")
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
// CPU lock and then the container lock exclusive until t ends, so that no
// other container test and no CPU-bound test (CPUBound) of any package runs
// meanwhile. It does not mark t parallel.
func Alone(t *testing.T) {
	t.Helper()
	Require(t)
	takeAlone(t)
}

// Exclusive is Require for a container test that no other container test
// may run beside but that measures no time, such as the two-engine rig's,
// which put the engine into a swarm and take it out again. It holds
// the container lock exclusive until t ends and leaves the CPU lock alone,
// so CPU-bound tests of other packages go on meanwhile (Alone would stop
// them for nothing). It does not mark t parallel. Under a parent that
// holds it, it holds nothing more and reports false; true when t took it.
//
// Each exclusive hold waits for every container test then running to
// end, with the slots idle behind it: a test with several such cases
// takes Exclusive once and runs them as subtests.
func Exclusive(t *testing.T) (took bool) {
	t.Helper()
	Require(t)
	return takeExclusive(t)
}

// takeExclusive is Exclusive's hold: the container lock alone, exclusive.
// A subtest whose parent holds it exclusive has it already: the parent's
// cases run in one window of the engine rather than one each.
func takeExclusive(t *testing.T) (took bool) {
	t.Helper()
	if _, mode, ok := holder(t, containerLock); ok && mode == "exclusive" {
		return false
	}
	take(t, containerLock, syscall.LOCK_EX, "exclusive")
	return true
}

// takeAlone is Alone's hold on the machine: the CPU lock, then the
// container lock, both exclusive. While it waits for the first, container
// tests go on; CPU-bound tests that have not started wait for it.
func takeAlone(t *testing.T) {
	t.Helper()
	take(t, cpuLock, syscall.LOCK_EX, "exclusive")
	take(t, containerLock, syscall.LOCK_EX, "exclusive")
}

// CPUBound marks a test that keeps a core busy for seconds: it holds the
// CPU lock shared until t ends, so that a test that measures time (Alone)
// waits for it to end and it waits for such a test to end. It needs no
// engine, does not mark t parallel, and does nothing when container tests
// are off (no test measures time then). It comes first in the test, before
// Parallel if the test also runs containers.
func CPUBound(t *testing.T) {
	t.Helper()
	if Off() {
		return
	}
	if name, mode, ok := holder(t, containerLock); ok {
		t.Fatalf("dockertest: %s asks for the CPU lock while %s holds the container lock %s: take CPUBound before Parallel, or an Alone test that holds the CPU lock and waits for the container lock would wait for it forever", t.Name(), name, mode)
	}
	take(t, cpuLock, syscall.LOCK_SH, "shared")
}

// holder reports which of t and its parents holds lk in this process, and
// how.
func holder(t *testing.T, lk lock) (name, mode string, ok bool) {
	heldMu.Lock()
	defer heldMu.Unlock()
	for name, mode := range held[lk] {
		if t.Name() == name || strings.HasPrefix(t.Name(), name+"/") {
			return name, mode, true
		}
	}
	return "", "", false
}

// take blocks until lk is t's in mode how, and releases it when t ends.
func take(t *testing.T, lk lock, how int, mode string) {
	t.Helper()
	if name, m, ok := holder(t, lk); ok {
		t.Fatalf("dockertest: %s wants the %s %s, but %s holds it %s already and would wait for itself", t.Name(), lk.what, mode, name, m)
	}
	t0 := time.Now()
	f, err := lk.acquire(how)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(t0); waited > time.Second {
		t.Logf("dockertest: waited %v for the %s (%s)", waited.Round(time.Millisecond), lk.what, mode)
	}
	heldMu.Lock()
	if held[lk] == nil {
		held[lk] = map[string]string{}
	}
	held[lk][t.Name()] = mode
	heldMu.Unlock()
	t.Cleanup(func() {
		heldMu.Lock()
		delete(held[lk], t.Name())
		heldMu.Unlock()
		f.Close()
	})
}

// acquire takes lk in mode how (LOCK_SH or LOCK_EX, with LOCK_NB: fail
// with EWOULDBLOCK rather than wait) through its turnstile and returns the
// file that holds it; closing it releases the lock.
func (lk lock) acquire(how int) (*os.File, error) {
	turn, err := lockFile(lk.turnstile, syscall.LOCK_EX|how&syscall.LOCK_NB)
	if err != nil {
		return nil, err
	}
	defer turn.Close() // closing the file releases its flock
	return lockFile(lk.file, how)
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
