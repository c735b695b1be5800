package docker

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/ringleader-dev/ringleader/chaos/docker/reaper"
)

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

// Removed lists what a clean-up removed, by name.
type Removed = reaper.Removed

// CleanRun removes every container (with its anonymous volumes), network
// and volume labelled with run id runID, the run's reaper included,
// whatever state a crashed or interrupted run left them in, reaper.Parallel
// at a time. Images are shared between runs and stay.
func CleanRun(ctx context.Context, runID string) (Removed, error) {
	if runID == "" {
		return Removed{}, fmt.Errorf("docker: clean: empty run ID (use CleanAll to remove every run)")
	}
	return clean(ctx, reaper.Sweep{Run: runID})
}

// CleanAll removes every container, network, volume and image labelled
// org.ringleader.project=ringleader: every run's, compose's and the built
// node images (the intermediate ones of a killed build too: the label is
// the Dockerfile's first instruction).
func CleanAll(ctx context.Context) (Removed, error) {
	rm, err := clean(ctx, reaper.Sweep{Images: true})
	buildMu.Lock()
	clear(builtTags) // a later BuildImage in this process must rebuild
	buildMu.Unlock()
	return rm, err
}

// RemoveStaleBuildDirs removes the temporary directories of image builds
// whose process is gone (BuildImage does it too, before it builds) and
// returns their paths.
func RemoveStaleBuildDirs() []string { return removeStaleBuildDirs() }

func clean(ctx context.Context, s reaper.Sweep) (Removed, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return Removed{}, err
	}
	defer cli.Close()
	rm, err := s.Do(ctx, cli)
	if err != nil {
		return rm, fmt.Errorf("docker: clean: %w", err)
	}
	return rm, nil
}

// Leftovers lists, one "kind name" each, the containers, networks and
// volumes still labelled with run (every run's when run is empty): what
// `ringleader clean` names when it could not remove everything, and what
// tests use to prove clean-up.
func Leftovers(ctx context.Context, run string) ([]string, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return reaper.Left(ctx, cli, run)
}
