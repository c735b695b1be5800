package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/reaper"
)

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

// Removed lists what a clean-up removed, by name, and what it left on
// purpose (Kept: a live process owns it) and why.
type Removed = reaper.Removed

// Cleaned is what a clean-up removed and which runs it left because a
// live process owns them (run → why).
type Cleaned struct {
	Removed
	LiveRuns map[string]string
}

// CleanRun removes every container (with its anonymous volumes), network
// and volume labelled with run id runID, the run's reaper included,
// whatever state a crashed or interrupted run left them in, reaper.Parallel
// at a time, unless a live process owns the run (see liveRuns): then it
// removes nothing and says why in LiveRuns. force removes it all the same.
// Images are shared between runs and stay.
func CleanRun(ctx context.Context, runID string, force bool) (Cleaned, error) {
	if runID == "" {
		return Cleaned{}, fmt.Errorf("docker: clean: empty run ID (use CleanAll to remove every run)")
	}
	return clean(ctx, reaper.Sweep{Run: runID}, force)
}

// CleanAll removes every container, network, volume and image labelled
// org.ringleader.project=ringleader: every run's, compose's and the built
// node images (the intermediate ones of a killed build too: the label is
// the Dockerfile's first instruction), except, unless force, the runs a
// live process owns and the images their containers use.
func CleanAll(ctx context.Context, force bool) (Cleaned, error) {
	c, err := clean(ctx, reaper.Sweep{Images: true}, force)
	buildMu.Lock()
	clear(builtTags) // a later BuildImage in this process must rebuild
	buildMu.Unlock()
	return c, err
}

// RemoveStaleBuildDirs removes the temporary directories of image builds
// whose process is gone (BuildImage does it too, before it builds) and
// returns their paths.
func RemoveStaleBuildDirs() []string { return removeStaleBuildDirs() }

func clean(ctx context.Context, s reaper.Sweep, force bool) (Cleaned, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return Cleaned{}, err
	}
	defer cli.Close()
	return cleanWith(ctx, cli, s, force)
}

// CleanOn is CleanRun (run not empty) or CleanAll on engine e, which
// need not be this process's: what `ringleader clean --engines` does on
// each engine named, the first last, since a run's overlay network lives
// there and goes once no other engine has a container on it.
// On a swarm worker the run's overlay is left to the manager's sweep.
func CleanOn(ctx context.Context, e engine.Engine, run string, force bool) (Cleaned, error) {
	cli, err := e.Client()
	if err != nil {
		return Cleaned{}, err
	}
	defer cli.Close()
	s := reaper.Sweep{Run: run, Images: run == ""}
	info, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return Cleaned{}, fmt.Errorf("docker: clean: %w", err)
	}
	s.LeaveSwarmNetworks = info.Info.Swarm.NodeID != "" && !info.Info.Swarm.ControlAvailable
	return cleanWith(ctx, cli, s, force)
}

func cleanWith(ctx context.Context, cli client.APIClient, s reaper.Sweep, force bool) (Cleaned, error) {
	var (
		c   Cleaned
		err error
	)
	if !force {
		if c.LiveRuns, err = owned(ctx, cli, s.Run); err != nil {
			return c, fmt.Errorf("docker: clean: %w", err)
		}
		s.Keep = c.LiveRuns
	}
	c.Removed, err = s.Do(ctx, cli)
	if err != nil {
		return c, fmt.Errorf("docker: clean: %w", err)
	}
	return c, nil
}

// owned lists the runs (run's alone, when not empty) a live process owns.
func owned(ctx context.Context, cli client.APIClient, run string) (map[string]string, error) {
	f := reaper.Filter(run)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var items []labelled
	for _, c := range cs.Items {
		items = append(items, labelled{Labels: c.Labels, Running: c.State == "running"})
	}
	for _, n := range ns.Items {
		items = append(items, labelled{Labels: n.Labels})
	}
	return liveRuns(items), nil
}

// Connect resolves the engine the environment names and checks that it
// answers, without building anything: what a command does first, so that
// it fails naming that engine before it touches any.
func Connect(ctx context.Context) (engine.Engine, error) {
	e, err := engine.Connect(ctx)
	if err != nil {
		return e, fmt.Errorf("docker: %w (start dockerd, or point DOCKER_HOST at an engine that runs)", err)
	}
	return e, nil
}

// Leftovers lists, one "kind name" each, the containers, networks and
// volumes still labelled with run (every run's when run is empty), except
// those of the runs in except: what `ringleader clean` names when it could
// not remove everything, and what tests use to prove clean-up.
func Leftovers(ctx context.Context, run string, except ...map[string]string) ([]string, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	var ex map[string]string
	if len(except) > 0 {
		ex = except[0]
	}
	return reaper.LeftExcept(ctx, cli, run, ex)
}

// LeftoversOn is Leftovers on engine e. A run's overlay network stays
// listed for a moment after the manager removed it, on the manager and
// on every worker that had an endpoint on it: while networks alone are
// left, it looks again, for up to five seconds.
func LeftoversOn(ctx context.Context, e engine.Engine, run string, except map[string]string) ([]string, error) {
	cli, err := e.Client()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	for i := 0; ; i++ {
		left, err := reaper.LeftExcept(ctx, cli, run, except)
		if err != nil || len(left) == 0 || i == 25 || !onlyNetworks(left) {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func onlyNetworks(left []string) bool {
	for _, l := range left {
		if !strings.HasPrefix(l, "network ") {
			return false
		}
	}
	return true
}
