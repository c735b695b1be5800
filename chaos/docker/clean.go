package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

// Removed lists what a clean-up removed, by name.
type Removed struct {
	Containers []string
	Networks   []string
	Volumes    []string
	Images     []string
}

// Lines renders r one "kind name" per line, for `ringleader clean`.
func (r Removed) Lines() []string {
	var out []string
	for _, k := range []struct {
		kind  string
		names []string
	}{{"container", r.Containers}, {"network", r.Networks}, {"volume", r.Volumes}, {"image", r.Images}} {
		for _, n := range k.names {
			out = append(out, k.kind+" "+n)
		}
	}
	return out
}

// CleanRun removes every container (with its anonymous volumes) and
// network labelled with run id runID, whatever state a crashed or
// interrupted run left them in. Images are shared between runs and stay.
func CleanRun(ctx context.Context, runID string) (Removed, error) {
	if runID == "" {
		return Removed{}, fmt.Errorf("docker: clean: empty run ID (use CleanAll to remove every run)")
	}
	return clean(ctx, runID, false)
}

// CleanAll removes every container, network, volume and image labelled
// org.ringleader.project=ringleader: every run's, compose's and the built
// node images.
func CleanAll(ctx context.Context) (Removed, error) { return clean(ctx, "", true) }

func clean(ctx context.Context, run string, all bool) (Removed, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return Removed{}, err
	}
	defer cli.Close()
	return cleanWith(ctx, cli, run, all)
}

func cleanWith(ctx context.Context, cli client.APIClient, run string, all bool) (Removed, error) {
	var (
		rm   Removed
		errs []error
	)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: runFilter(run)})
	if err != nil {
		return rm, fmt.Errorf("docker: clean: list containers: %w", err)
	}
	for _, c := range cs.Items {
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		switch {
		case err == nil:
			rm.Containers = append(rm.Containers, name)
		case !isNotFound(err): // gone already is what we wanted
			errs = append(errs, fmt.Errorf("remove container %s: %w", name, err))
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: runFilter(run)})
	if err != nil {
		errs = append(errs, fmt.Errorf("list networks: %w", err))
	}
	for _, n := range ns.Items {
		_, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		switch {
		case err == nil:
			rm.Networks = append(rm.Networks, n.Name)
		case !isNotFound(err):
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: runFilter(run)})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes: %w", err))
	}
	for _, v := range vs.Items {
		_, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true})
		switch {
		case err == nil:
			rm.Volumes = append(rm.Volumes, v.Name)
		case !isNotFound(err):
			errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
		}
	}
	if all {
		is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: runFilter("")})
		if err != nil {
			errs = append(errs, fmt.Errorf("list images: %w", err))
		}
		for _, im := range is.Items {
			name := im.ID
			if len(im.RepoTags) > 0 {
				name = strings.Join(im.RepoTags, ",")
			}
			_, err := cli.ImageRemove(ctx, im.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true})
			switch {
			case err == nil:
				rm.Images = append(rm.Images, name)
			case !isNotFound(err):
				errs = append(errs, fmt.Errorf("remove image %s: %w", name, err))
			}
		}
		buildMu.Lock()
		clear(builtTags) // a later BuildImage in this process must rebuild
		buildMu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return rm, fmt.Errorf("docker: clean: %w", err)
	}
	return rm, nil
}

// Leftovers lists the names of containers, networks and volumes still labelled
// with run (tests use it to prove clean-up).
func Leftovers(ctx context.Context, run string) ([]string, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	var out []string
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: runFilter(run)})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Items {
		out = append(out, "container "+strings.TrimPrefix(strings.Join(c.Names, ","), "/"))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: runFilter(run)})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: runFilter(run)})
	if err != nil {
		return nil, err
	}
	for _, v := range vs.Items {
		out = append(out, "volume "+v.Name)
	}
	return out, nil
}
