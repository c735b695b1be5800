package rig_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/internal/rig/rigtest"
	"github.com/ringleader-dev/ringleader/trust"
)

// rigImage is this test's own tag of the node image (not one of the
// fixed tags other container tests rebuild).
const rigImage = "ringleader-node:rig-test"

// nodesOnTwoEnginesElectOneLeader (a case of TestRig): three Bully
// nodes, two on the first engine and one on the second, on an attachable
// overlay of the rig's swarm, all see node 3 lead; the image reached the
// second engine without a registry.
func nodesOnTwoEnginesElectOneLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := rigtest.Start(t, rigImage)
	es := []engine.Engine{{Host: st.First}, {Host: st.Second}}
	if err := engine.SameSwarm(ctx, es); err != nil {
		t.Fatalf("the rig's engines: %v", err)
	}
	first, second := dial(t, st.First), dial(t, st.Second)

	const net = "rl-rigtest-overlay"
	subnet := netip.MustParsePrefix("10.231.7.0/24")
	if _, err := first.NetworkCreate(ctx, net, client.NetworkCreateOptions{
		Driver: "overlay", Attachable: true,
		IPAM:   &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet}}},
		Labels: map[string]string{docker.LabelProject: docker.Project},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = first.NetworkRemove(context.Background(), net, client.NetworkRemoveOptions{}) })

	addr := func(id int) netip.Addr { return netip.AddrFrom4([4]byte{10, 231, 7, byte(10 + id)}) }
	peers := fmt.Sprintf("1=%s,2=%s,3=%s", addr(1), addr(2), addr(3))
	secret := trust.NewSecret()
	on := map[int]*client.Client{1: first, 2: first, 3: second}
	ids := map[int]string{}
	for id := 1; id <= 3; id++ {
		c := on[id]
		r, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: fmt.Sprintf("rl-rigtest-node%d", id),
			Config: &container.Config{Image: rigImage, Labels: map[string]string{docker.LabelProject: docker.Project},
				Env: []string{fmt.Sprintf("RINGLEADER_ID=%d", id), "RINGLEADER_PEERS=" + peers, "RINGLEADER_ALGORITHM=bully",
					"RINGLEADER_CLUSTER=rigtest", trust.SecretEnv + "=" + secret}},
			NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
				net: {Aliases: []string{fmt.Sprintf("node%d", id)}, IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: addr(id)}},
			}},
		})
		if err != nil {
			t.Fatalf("node %d: %v", id, err)
		}
		ids[id] = r.ID
		t.Cleanup(func() {
			_, _ = c.ContainerRemove(context.Background(), r.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		})
		if _, err := c.ContainerStart(ctx, r.ID, client.ContainerStartOptions{}); err != nil {
			t.Fatalf("node %d: %v", id, err)
		}
	}
	for id := 1; id <= 3; id++ {
		if !awaitLog(ctx, on[id], ids[id], `"event":"view","leader":3,`) {
			t.Errorf("node %d (on %s) never saw node 3 lead; its log:\n%s", id, map[bool]string{true: "the first engine", false: "the second"}[id < 3], logOf(on[id], ids[id]))
		}
	}
}

// buildRigImage builds rigImage for nodesOnTwoEnginesElectOneLeader,
// removed when t ends. TestRig builds it before it holds the engine: a
// build needs no other test kept out.
func buildRigImage(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := docker.BuildImage(ctx, rigImage, io.Discard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := engine.Engine{Host: client.DefaultDockerHost}.Client()
		if err == nil {
			_, _ = c.ImageRemove(context.Background(), rigImage, client.ImageRemoveOptions{PruneChildren: true})
			c.Close()
		}
	})
}

// awaitLog reports whether container id's log comes to hold want.
func awaitLog(ctx context.Context, c *client.Client, id, want string) bool {
	for ctx.Err() == nil {
		if strings.Contains(logOf(c, id), want) {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return false
}

func logOf(c *client.Client, id string) string {
	r, err := c.ContainerLogs(context.Background(), id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}
