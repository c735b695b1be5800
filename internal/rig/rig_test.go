package rig_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/internal/neigh"
	"github.com/ringleader-dev/ringleader/internal/rig"
	"github.com/ringleader-dev/ringleader/internal/rig/rigtest"
)

func dial(t *testing.T, host string) *client.Client {
	t.Helper()
	c, err := engine.Engine{Host: host}.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func swarmOf(t *testing.T, host string) swarm.Info {
	t.Helper()
	r, err := dial(t, host).Info(context.Background(), client.InfoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Info.Swarm
}

// neighbourLimits are the kernel's neighbour table limits.
func neighbourLimits(t *testing.T) map[neigh.Threshold]int {
	t.Helper()
	l, err := neigh.ReadAll(neigh.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// assertGone checks that nothing of the rig is left on this machine,
// the neighbour table's limits being what they were before (the engine's
// overlay driver raises them when the swarm sets up its ingress).
func assertGone(t *testing.T, first string, neighboursBefore map[neigh.Threshold]int) {
	t.Helper()
	if got := neighbourLimits(t); !maps.Equal(got, neighboursBefore) {
		t.Errorf("the neighbour table's limits are %v after down, want %v as before up", got, neighboursBefore)
	}
	if s := swarmOf(t, first).LocalNodeState; s != swarm.LocalNodeStateInactive {
		t.Errorf("the first engine's swarm state is %q after down, want inactive", s)
	}
	if err := exec.Command("ip", "netns", "pids", rig.Netns).Run(); err == nil {
		t.Errorf("network namespace %s is left", rig.Netns)
	}
	if err := exec.Command("ip", "link", "show", rig.HostVeth).Run(); err == nil {
		t.Errorf("veth %s is left", rig.HostVeth)
	}
	for _, p := range []string{rig.Socket, rig.Dir() + "/h2", rig.Dir() + "/state.json"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is left", p)
		}
	}
	if out, _ := exec.Command("pgrep", "-f", "dockerd.*"+rig.Socket).Output(); len(out) > 0 {
		t.Errorf("the second dockerd still runs: PID %s", out)
	}
}

// TestRig checks the rig in one hold of the engine (rigtest.Lock, which
// keeps every other container test out): each hold waits for the
// container tests then running to end, with their slots idle behind it,
// and four holds one after another cost a full suite about a minute of
// that. The cases each make and remove their own rig.
func TestRig(t *testing.T) {
	rigtest.Require(t)
	buildRigImage(t)
	rigtest.Lock(t)
	t.Run("JoinsTwoEnginesAndDownRemovesAll", joinsTwoEnginesAndDownRemovesAll)
	t.Run("InterruptedUpRemovesWhatItMade", interruptedUpRemovesWhatItMade)
	t.Run("RefusesASwarmItDidNotMake", refusesASwarmItDidNotMake)
	t.Run("NodesOnTwoEnginesElectOneLeader", nodesOnTwoEnginesElectOneLeader)
}

// joinsTwoEnginesAndDownRemovesAll: up makes a swarm of the first engine
// (manager) and a second one (worker) that answers on its own socket;
// down leaves nothing.
func joinsTwoEnginesAndDownRemovesAll(t *testing.T) {
	ctx := context.Background()
	neighbours := neighbourLimits(t)
	st, err := rig.Up(ctx, rig.Config{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rig.Down(ctx, rig.Dir(), t.Logf) })
	if got := swarmOf(t, st.First); !got.ControlAvailable || got.LocalNodeState != swarm.LocalNodeStateActive {
		t.Errorf("first engine: %+v, want an active manager", got)
	}
	if got := swarmOf(t, st.Second); got.ControlAvailable || got.NodeAddr != rig.NsAddr {
		t.Errorf("second engine: %+v, want a worker at %s", got, rig.NsAddr)
	}
	nodes, err := dial(t, st.First).NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Errorf("the swarm has %d nodes, want 2", len(nodes.Items))
	}
	if err := engine.SameSwarm(ctx, []engine.Engine{{Host: st.First}, {Host: st.Second}}); err != nil {
		t.Errorf("the rig's engines: %v", err)
	}
	if _, err := rig.Up(ctx, rig.Config{}); err == nil || !strings.Contains(err.Error(), "already up") {
		t.Errorf("a second up: %v, want it refused as already up", err)
	}
	if err := rig.Down(ctx, rig.Dir(), t.Logf); err != nil {
		t.Fatal(err)
	}
	assertGone(t, st.First, neighbours)
	if err := engine.SameSwarm(ctx, []engine.Engine{{Host: st.First}}); !errors.Is(err, engine.ErrNotOneSwarm) || !strings.Contains(err.Error(), "is not in a swarm") {
		t.Errorf("an engine out of any swarm: %v, want ErrNotOneSwarm naming it", err)
	}
}

// interruptedUpRemovesWhatItMade: a signal (ctx ending) after the swarm
// is made leaves nothing behind.
func interruptedUpRemovesWhatItMade(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := func(format string, args ...any) {
		t.Logf(format, args...)
		if strings.HasPrefix(format, "rig: %s") && len(args) > 0 && strings.HasPrefix(args[0].(string), "swarm join") {
			cancel()
		}
	}
	neighbours := neighbourLimits(t)
	_, err := rig.Up(ctx, rig.Config{Log: logf})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("up: %v, want it interrupted", err)
	}
	e, _ := engine.Resolve()
	assertGone(t, e.Host, neighbours)
}

// refusesASwarmItDidNotMake: an engine already in a swarm is left as it
// is.
func refusesASwarmItDidNotMake(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, e.Host)
	if s := swarmOf(t, e.Host).LocalNodeState; s != swarm.LocalNodeStateInactive {
		t.Skipf("the engine is in a swarm already (%s): not this test's to change", s)
	}
	if _, err := c.SwarmInit(ctx, client.SwarmInitOptions{ListenAddr: "127.0.0.1:2377", AdvertiseAddr: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.SwarmLeave(ctx, client.SwarmLeaveOptions{Force: true}); err != nil {
			t.Error(err)
		}
		_, _ = c.NetworkRemove(ctx, "docker_gwbridge", client.NetworkRemoveOptions{})
	})
	_, err = rig.Up(ctx, rig.Config{Log: t.Logf})
	if err == nil || !strings.Contains(err.Error(), "did not make") {
		t.Fatalf("up: %v, want a refusal naming the swarm it did not make", err)
	}
	if s := swarmOf(t, e.Host).LocalNodeState; s != swarm.LocalNodeStateActive {
		t.Errorf("the user's swarm is %q after the refusal, want it still active", s)
	}
	if _, err := os.Stat(rig.Dir() + "/state.json"); err == nil {
		t.Error("a refused up left a state file")
	}
}
