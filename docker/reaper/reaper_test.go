package reaper

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/volume"
	"github.com/moby/moby/client"
)

// engine is an engine's listing in memory: what the sweep asks for, and
// what it removes (any other call panics on the nil interface).
type engine struct {
	client.APIClient
	containers []container.Summary
	networks   []network.Summary
	volumes    []volume.Volume
	images     []image.Summary

	mu      sync.Mutex
	removed []string
}

func (e *engine) gone(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removed = append(e.removed, what)
}

func (e *engine) ContainerList(context.Context, client.ContainerListOptions) (client.ContainerListResult, error) {
	return client.ContainerListResult{Items: e.containers}, nil
}
func (e *engine) NetworkList(context.Context, client.NetworkListOptions) (client.NetworkListResult, error) {
	return client.NetworkListResult{Items: e.networks}, nil
}
func (e *engine) VolumeList(context.Context, client.VolumeListOptions) (client.VolumeListResult, error) {
	return client.VolumeListResult{Items: e.volumes}, nil
}
func (e *engine) ImageList(context.Context, client.ImageListOptions) (client.ImageListResult, error) {
	return client.ImageListResult{Items: e.images}, nil
}
func (e *engine) ContainerRemove(_ context.Context, id string, _ client.ContainerRemoveOptions) (client.ContainerRemoveResult, error) {
	e.gone("container " + id)
	return client.ContainerRemoveResult{}, nil
}
func (e *engine) NetworkRemove(_ context.Context, id string, _ client.NetworkRemoveOptions) (client.NetworkRemoveResult, error) {
	e.gone("network " + id)
	return client.NetworkRemoveResult{}, nil
}
func (e *engine) VolumeRemove(_ context.Context, id string, _ client.VolumeRemoveOptions) (client.VolumeRemoveResult, error) {
	e.gone("volume " + id)
	return client.VolumeRemoveResult{}, nil
}
func (e *engine) ImageRemove(_ context.Context, id string, _ client.ImageRemoveOptions) (client.ImageRemoveResult, error) {
	e.gone("image " + id)
	return client.ImageRemoveResult{}, nil
}

func runLabels(run string) map[string]string {
	return map[string]string{LabelProject: Project, LabelRun: run}
}

// TestSweepKeepsLiveRunsAndTheImagesTheyUse: a sweep of every run with
// images removes the dead run and the image nobody uses, and leaves the
// live run's container, network and volume and the image its containers
// run, naming each.
func TestSweepKeepsLiveRunsAndTheImagesTheyUse(t *testing.T) {
	e := &engine{
		containers: []container.Summary{
			{ID: "live-node-0123456789", Names: []string{"/rl-live-1"}, ImageID: "sha256:inuse", Labels: runLabels("live")},
			{ID: "dead-node-0123456789", Names: []string{"/rl-dead-1"}, ImageID: "sha256:old", Labels: runLabels("dead")},
		},
		networks: []network.Summary{
			{Network: network.Network{ID: "net-live", Name: "rl-live", Labels: runLabels("live")}},
			{Network: network.Network{ID: "net-dead", Name: "rl-dead", Labels: runLabels("dead")}},
		},
		volumes: []volume.Volume{{Name: "vol-live", Labels: runLabels("live")}, {Name: "vol-dead", Labels: runLabels("dead")}},
		images: []image.Summary{
			{ID: "sha256:inuse", RepoTags: []string{"ringleader-node:dev"}},
			{ID: "sha256:old", RepoTags: []string{"ringleader-node:old"}},
			{ID: "sha256:stray"},
		},
	}
	rm, err := Sweep{Images: true, Keep: map[string]string{"live": "its owner runs"}}.Do(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(e.removed)
	want := []string{"container dead-node-0123456789", "image sha256:old", "image sha256:stray", "network net-dead", "volume vol-dead"}
	if !slices.Equal(e.removed, want) {
		t.Errorf("removed %v, want %v", e.removed, want)
	}
	wantKept := []string{
		"container rl-live-1: its owner runs",
		"network rl-live: its owner runs",
		"volume vol-live: its owner runs",
		"image ringleader-node:dev: the containers of run live use it",
	}
	if !slices.Equal(rm.Kept, wantKept) {
		t.Errorf("kept %q, want %q", rm.Kept, wantKept)
	}
	left, err := LeftExcept(context.Background(), e, "", map[string]string{"live": ""})
	if err != nil {
		t.Fatal(err)
	}
	// the fake keeps listing what it "removed": the dead run counts, the live one not
	if want := []string{"container rl-dead-1", "network rl-dead", "volume vol-dead"}; !slices.Equal(left, want) {
		t.Errorf("LeftExcept(live) = %v, want the dead run's container, network and volume only", left)
	}
}

// TestRemovalInProgressIsTheEnginesRefusal: the engine's answer to removing
// a container it is removing already (an AutoRemove that got there first)
// is told apart from any other failure.
func TestRemovalInProgressIsTheEnginesRefusal(t *testing.T) {
	for err, want := range map[error]bool{
		nil: false,
		errors.New("Error response from daemon: removal of container 2b6527609dc9 is already in progress"): true,
		errors.New("Error response from daemon: No such container: 2b6527609dc9"):                          false,
		errors.New("context deadline exceeded"):                                                            false,
	} {
		if got := RemovalInProgress(err); got != want {
			t.Errorf("RemovalInProgress(%v) = %v, want %v", err, got, want)
		}
	}
}

// staleEngine refuses to remove its one network as Docker 20.10 does when
// its count of the network's endpoints outlived its containers; held
// lists a container still on the network (the refusal is then right).
type staleEngine struct {
	engine
	held []container.Summary
}

func (e *staleEngine) NetworkRemove(context.Context, string, client.NetworkRemoveOptions) (client.NetworkRemoveResult, error) {
	return client.NetworkRemoveResult{}, errors.New("Error response from daemon: error while removing network: network n1 id abc has active endpoints")
}

func (e *staleEngine) ContainerList(_ context.Context, o client.ContainerListOptions) (client.ContainerListResult, error) {
	if o.Filters["network"] != nil {
		return client.ContainerListResult{Items: e.held}, nil
	}
	return e.engine.ContainerList(context.Background(), o)
}

func (e *staleEngine) NetworkInspect(context.Context, string, client.NetworkInspectOptions) (client.NetworkInspectResult, error) {
	var r client.NetworkInspectResult
	r.Network.Containers = map[string]network.EndpointResource{}
	for _, c := range e.held {
		r.Network.Containers[c.ID] = network.EndpointResource{Name: c.ID}
	}
	return r, nil
}

// A network the engine will not remove for endpoints no container holds
// is still a leftover, and the sweep's error says what only a restart of
// the engine mends; with a container on it the refusal is the usual one.
func TestSweepNamesAStaleEndpointCount(t *testing.T) {
	nets := []network.Summary{{Network: network.Network{ID: "abc", Name: "n1", Labels: map[string]string{LabelProject: Project, LabelRun: "r1"}}}}
	for _, tc := range []struct {
		held  []container.Summary
		stale bool
	}{
		{nil, true},
		{[]container.Summary{{ID: "c1"}}, false},
	} {
		e := &staleEngine{engine: engine{networks: nets}, held: tc.held}
		_, err := Sweep{Run: "r1"}.Do(context.Background(), e)
		if err == nil {
			t.Fatalf("held %v: the sweep reported no error for a network it could not remove", tc.held)
		}
		if got := strings.Contains(err.Error(), "only a restart of the engine"); got != tc.stale {
			t.Errorf("held %v: the error names a stale count: %v, want %v: %v", tc.held, got, tc.stale, err)
		}
	}
}
