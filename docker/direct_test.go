//go:build linux

package docker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// A fault's rules are the same whichever way they go in: written from
// this process into each namespace, or by a helper container joining it.
// Either way a helper reads back what the world wants, and a heal leaves
// nothing; only the direct way starts no container.
func TestRulesGoInDirectlyOrThroughAHelperAlike(t *testing.T) {
	dockertest.Parallel(t)
	if os.Geteuid() != 0 {
		t.Skip("rules go in directly only as root; as another user every rule goes through a helper, which the other tests cover")
	}
	b, _ := startCluster(t, 3)
	all := ids(1, 2, 3)
	await(t, b, "all see leader 3", allSee(all, 3))
	for _, direct := range []bool{true, false} {
		b.cfg.direct = direct // read only by Apply's own goroutines
		since := time.Now()
		apply(t, b, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{ids(1, 2), ids(3)}})
		helpers := helpersCreated(t, b, since)
		switch {
		case direct && helpers != 0:
			t.Errorf("direct: the partition started %d helper containers, want none", helpers)
		case !direct && helpers == 0:
			t.Errorf("through helpers: the partition started none")
		}
		held := 0
		for _, id := range all {
			b.mu.Lock()
			want := b.wantRulesLocked(id)
			b.mu.Unlock()
			got := readRules(t, b, id)
			if got.String() != want.String() {
				t.Errorf("direct=%v: node %d holds %v, want %v", direct, id, got, want)
			}
			if !got.Empty() {
				held++
			}
		}
		if held == 0 {
			t.Errorf("direct=%v: the partition put rules into no namespace", direct)
		}
		await(t, b, "{1,2} elect 2 while 3 leads itself", func(st chaos.State) bool {
			return allSee(ids(1, 2), 2)(st) && allSee(ids(3), 3)(st)
		})
		apply(t, b, chaos.Fault{Op: chaos.Heal})
		for _, id := range all {
			if r := readRules(t, b, id); !r.Empty() {
				t.Errorf("direct=%v: after heal node %d holds %v", direct, id, r)
			}
		}
		await(t, b, "heal -> all see leader 3", allSee(all, 3))
	}
}

// helpersCreated counts the netfilter helper containers the engine
// created for b's run since then.
func helpersCreated(t *testing.T, b *Backend, since time.Time) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	until := time.Now()
	stamp := func(at time.Time) string { return fmt.Sprintf("%d.%09d", at.Unix(), at.Nanosecond()) }
	f := runFilter(b.run).Add("label", LabelRole+"="+RoleNetfilter).Add("type", "container").Add("event", "create")
	res := b.client().Events(ctx, client.EventsListOptions{Since: stamp(since), Until: stamp(until), Filters: f})
	n := 0
	for {
		select {
		case _, ok := <-res.Messages:
			if !ok {
				return n
			}
			n++
		case err := <-res.Err:
			if err != nil && err.Error() != "EOF" {
				t.Fatalf("engine events: %v", err)
			}
			return n
		}
	}
}
