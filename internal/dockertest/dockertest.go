// Package dockertest decides whether a test that needs a Docker engine runs:
// on a developer machine without Docker it skips, in CI (CI=true) a missing
// engine is a failure, so a broken runner cannot pass by skipping every
// container test.
//
// It is also the one switch for a Docker-free run (`make test-nodocker`):
// with RINGLEADER_NO_DOCKER=1, or with `go test -short`, no test asks for an
// engine and nothing dials one, not even to ping it.
//
// The engine is the one package engine resolves (DOCKER_HOST, the Docker
// context, the default socket), the same the backend uses: a named engine
// that does not answer is never replaced by another.
package dockertest

import (
	"context"
	"errors"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/ringleader-dev/ringleader/docker/engine"
)

// NoDockerEnv is the variable that turns every container test off.
const NoDockerEnv = "RINGLEADER_NO_DOCKER"

// ErrOff is Available's answer when containers are turned off: no engine
// was asked.
var ErrOff = errors.New("container tests are off (" + NoDockerEnv + "=1 or -short): no engine was asked")

var (
	once   sync.Once
	pingOK error
)

// Off reports whether container tests are turned off: RINGLEADER_NO_DOCKER
// set to anything but "" or "0", or -short (once the test flags are parsed;
// a TestMain that asks calls flag.Parse first).
func Off() bool {
	if v := os.Getenv(NoDockerEnv); v != "" && v != "0" {
		return true
	}
	return flag.Parsed() && testing.Short()
}

// Available reports why no engine can be used (nil: one answers). When
// containers are off it returns ErrOff without dialing; otherwise it pings
// the resolved engine once per process.
func Available() error {
	if Off() {
		return ErrOff
	}
	once.Do(func() {
		_, pingOK = engine.Connect(context.Background())
	})
	return pingOK
}

// Require stops t unless a Docker engine answers: t.Skip when containers
// are off; t.Fatalf when CI=true and the engine does not answer; t.Skip
// otherwise.
func Require(t testing.TB) {
	t.Helper()
	err := Available()
	switch {
	case err == nil:
		return
	case errors.Is(err, ErrOff):
		t.Skip(err)
	case os.Getenv("CI") == "true":
		t.Fatalf("\n*** DOCKER ENGINE REQUIRED ***\nCI=true and %v.\nThe container chaos tests cannot be skipped in CI: start that engine, point DOCKER_HOST at one that runs, or set %s=1 to run without containers.", err, NoDockerEnv)
	}
	t.Skipf("%v; skipping (set CI=true to make this a failure)", err)
}
