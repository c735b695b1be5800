// Package dockertest decides whether a test that needs a Docker engine runs:
// on a developer machine without Docker it skips, in CI (CI=true) a missing
// engine is a failure, so a broken runner cannot pass by skipping every
// container test.
package dockertest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

var (
	once   sync.Once
	pingOK error
)

// Available pings the engine once per process and reports why it did not
// answer (nil: it did).
func Available() error {
	once.Do(func() {
		cli, err := client.New(client.FromEnv)
		if err != nil {
			pingOK = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, pingOK = cli.Ping(ctx, client.PingOptions{})
	})
	return pingOK
}

// Require stops t unless a Docker engine answers: t.Fatalf when CI=true,
// t.Skip otherwise.
func Require(t testing.TB) {
	t.Helper()
	err := Available()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("\n*** DOCKER ENGINE REQUIRED ***\nCI=true and no Docker engine answers (%v).\nThe container chaos tests cannot be skipped in CI: start dockerd or point DOCKER_HOST at one.", err)
	}
	t.Skipf("no Docker engine answers (%v); skipping (set CI=true to make this a failure)", err)
}
