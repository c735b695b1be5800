package watch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestFollowRealContainers starts two nodes of the node image, watches
// them through the engine and breaks them: pause the leader (paused, the
// other takes over: the alarm with a stale leader), kill and start the
// other (down, then a new boot followed again).
func TestFollowRealContainers(t *testing.T) {
	dockertest.Parallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cli, err := docker.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	image := docker.DefaultImage
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("image %s: %v (make images builds it)", image, err)
		}
		t.Skipf("image %s not built (make images): %v", image, err)
	}
	suffix := make([]byte, 3)
	rand.Read(suffix)
	run := "watch-test-" + hex.EncodeToString(suffix)
	secret := make([]byte, 12)
	rand.Read(secret)
	labels := func(role string) map[string]string {
		return map[string]string{docker.LabelProject: docker.Project, docker.LabelRun: run, docker.LabelRole: role}
	}
	netName := "rl-" + run
	nw, err := cli.NetworkCreate(ctx, netName, client.NetworkCreateOptions{Labels: labels(docker.RoleNetwork)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.NetworkRemove(context.Background(), nw.ID, client.NetworkRemoveOptions{}) })
	ids := map[election.NodeID]string{}
	for id := election.NodeID(1); id <= 2; id++ {
		alias := fmt.Sprintf("node%d", id)
		c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Name: netName + "-" + alias,
			Config: &container.Config{Image: image, Labels: labels(docker.RoleNode), Env: []string{
				fmt.Sprintf("RINGLEADER_ID=%d", id), "RINGLEADER_PEERS=1=node1,2=node2", "RINGLEADER_CLUSTER=" + run,
				"RINGLEADER_SECRET=" + hex.EncodeToString(secret), "RINGLEADER_STATUS_ADDR=",
				// A line per message, as the harness runs its nodes, so
				// rates show at once (at info they come with the first
				// summary, 10 s in; TestBoardRatesFromSummariesAtInfo).
				"RINGLEADER_LOG_LEVEL=debug",
			}},
			HostConfig:       &container.HostConfig{CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges:true"}},
			NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{netName: {Aliases: []string{alias}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = c.ID
		t.Cleanup(func() {
			cli.ContainerRemove(context.Background(), c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		})
	}
	for id := election.NodeID(1); id <= 2; id++ {
		if _, err := cli.ContainerStart(ctx, ids[id], client.ContainerStartOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	inputs := make(chan Input, 1024)
	followed := make(chan error, 1)
	fctx, stop := context.WithCancel(ctx)
	defer func() { stop(); <-followed }()
	go func() { followed <- Follow(fctx, cli, run, inputs) }()
	b := NewBoard(0)
	var changes []Change
	// await feeds the board until cond holds.
	await := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for !cond() {
			select {
			case in := <-inputs:
				changes = append(changes, in.Feed(b)...)
			case err := <-followed:
				t.Fatalf("follow ended: %v", err)
			case <-deadline:
				t.Fatalf("%s: not within 10 s; board: %+v", what, b.Status(time.Now()))
			}
		}
	}
	node := func(id election.NodeID) NodeStatus {
		for _, s := range b.Status(time.Now()) {
			if s.Node == id {
				return s
			}
		}
		return NodeStatus{}
	}
	await("both view 2", func() bool {
		return node(1).Leader == 2 && node(1).Role == election.Follower && node(2).Role == election.Leader && node(1).SentPerSec+node(1).RecvPerSec > 0
	})
	// The lines that said so named their containers.
	if s := node(2); s.State != Running || s.Container != netName+"-node2" {
		t.Fatalf("node 2: %+v", s)
	}

	if _, err := cli.ContainerPause(ctx, ids[2], client.ContainerPauseOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerUnpause(context.Background(), ids[2], client.ContainerUnpauseOptions{}) })
	await("2 paused, 1 leads: the alarm with a stale leader", func() bool {
		l, p, _ := b.Alarm()
		return node(2).State == Paused && len(l) == 2 && len(p) == 1 && p[0] == 2
	})

	boot := node(1).Boot
	if _, err := cli.ContainerKill(ctx, ids[1], client.ContainerKillOptions{}); err != nil {
		t.Fatal(err)
	}
	await("1 down", func() bool { return node(1).State == Down })
	if _, err := cli.ContainerStart(ctx, ids[1], client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	await("1 followed again: a new boot", func() bool {
		s := node(1)
		return s.State == Running && s.Boot != "" && s.Boot != boot
	})
	t.Logf("%d changes seen", len(changes))
}
