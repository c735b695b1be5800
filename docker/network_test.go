package docker

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestRunsAtOnceEachGetANetwork makes the networks of several runs at the
// same moment, as `ringleader run --parallel` and tests of several packages
// do: each run's probe may be offered the free subnet another run is about
// to take, and every run must still get a network of its own, on a subnet
// of its own. Before createNetwork chose again after a lost race, one of
// them failed with "Pool overlaps with other one on this address space",
// and its run never started a container.
func TestRunsAtOnceEachGetANetwork(t *testing.T) {
	dockertest.Parallel(t)
	ctx := context.Background()
	cli, err := newClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	const runs = 6
	members := []election.NodeID{1, 2, 3}
	subnets := make([]string, runs)
	nets := make([]interface{ Remove(context.Context) error }, runs)
	var wg sync.WaitGroup
	for i := range runs {
		b := New(WithBuild(false))
		b.run = fmt.Sprintf("nettest-%d-%d", os.Getpid(), i)
		t.Cleanup(func() { CleanRun(context.Background(), b.run, true) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			nw, addrs, err := b.createNetwork(ctx, cli, members)
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			subnets[i], nets[i] = fmt.Sprint(addrs[1]), nw
		}()
	}
	wg.Wait()
	for _, nw := range nets { // held until all exist: each must have had its own
		if nw != nil {
			nw.Remove(context.Background())
		}
	}
	seen := map[string]int{}
	for i, s := range subnets {
		if j, ok := seen[s]; ok && s != "" {
			t.Errorf("runs %d and %d both got first address %s", j, i, s)
		}
		seen[s] = i
	}
}
