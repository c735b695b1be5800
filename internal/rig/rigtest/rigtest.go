// Package rigtest starts the two-engine rig (package rig) for a test and
// removes it when the test ends, or when the test process is interrupted
// or terminated.
package rigtest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/internal/rig"
)

// Require stops t unless the rig can be made here: an engine answers
// (dockertest.Require) and the test runs as root. Without root it skips,
// and fails when CI=true, as a missing engine does.
func Require(t testing.TB) {
	t.Helper()
	dockertest.Require(t)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and the two-engine rig needs root (a network namespace and a second dockerd)")
		}
		t.Skip("the two-engine rig needs root")
	}
}

// Start makes the rig with images copied into the second engine and
// returns its state; it is removed when t ends. A signal (SIGINT,
// SIGTERM, SIGHUP) to the test process removes it too, then exits; a
// process killed outright leaves a rig whose holder is gone, which the
// next Up removes first.
func Start(t *testing.T, images ...string) rig.State {
	t.Helper()
	Require(t)
	Lock(t)
	logf := func(format string, args ...any) { t.Logf(format, args...) }
	st, err := rig.Up(context.Background(), rig.Config{Images: images, Holder: os.Getpid(), Log: logf})
	if err != nil {
		t.Fatal(err)
	}
	stop := onSignal(func() { _ = rig.Down(context.Background(), rig.Dir(), nil) })
	t.Cleanup(func() {
		stop()
		if err := rig.Down(context.Background(), rig.Dir(), logf); err != nil {
			t.Error(err)
		}
	})
	return st
}

// Lock holds the machine's one rig for t: test processes that make it
// (go test runs packages side by side) take turns, by an exclusive lock
// on a file beside the rig's state, released when t ends. A test first
// holds the container lock exclusive (dockertest.Exclusive): the rig puts
// the engine into a swarm and takes it out again, and a full suite run
// with container tests side by side saw the engine stop answering for
// minutes; the swarm's changes under other tests' containers are the
// first suspect, so they no longer overlap. The rig measures no time, so
// CPU-bound tests go on beside it. A subtest of a test that holds the
// engine holds the rig already: no other test that makes a rig can run
// beside its parent (one window for several cases: each hold waits for
// the container tests then running to end).
func Lock(t *testing.T) {
	t.Helper()
	if !dockertest.Exclusive(t) {
		return
	}
	if err := os.MkdirAll(rig.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(rig.Dir()+"/test.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// onSignal runs f and exits when the process gets a terminating signal,
// until the returned stop is called.
func onSignal(f func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "rigtest: %v: removing the rig\n", s)
			f()
			os.Exit(1)
		case <-done:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { signal.Stop(ch); close(done) }) }
}
