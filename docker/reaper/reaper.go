// Package reaper removes what a run of the docker backend created: every
// container (with its anonymous volumes), network and volume carrying the
// run's label. It is the body of `ringleader reap`, the watcher container
// the backend starts first for every run (in the design of testcontainers'
// Ryuk: it holds a connection from the harness and reaps the run when that
// connection drops, however the harness died), and of the backend's own
// clean-up and `ringleader clean`.
//
// It needs only an engine client, not testcontainers, so that the node
// image (built with -tags nodeimage) can carry it.
package reaper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// The labels every container, network, volume and image of the project
// carries; clean-up finds what to remove by them.
const (
	LabelProject = "org.ringleader.project"
	LabelRun     = "org.ringleader.run"
	LabelRole    = "org.ringleader.role"
	Project      = "ringleader"

	// RoleReaper marks the watcher container of a run.
	RoleReaper = "reaper"

	// LabelOwner names the process that made a run's containers and
	// network (host, boot, PID and start time): `ringleader clean` leaves
	// a run whose owner is alive.
	LabelOwner = "org.ringleader.owner"
)

// Parallel is how many removals run at once: enough that a 50-node run
// goes in seconds, few enough not to swamp an engine on two cores.
const Parallel = 8

// Filter selects what carries the project label, and the run label when
// run is not empty.
func Filter(run string) client.Filters {
	f := make(client.Filters).Add("label", LabelProject+"="+Project)
	if run != "" {
		f.Add("label", LabelRun+"="+run)
	}
	return f
}

// Removed lists what a sweep removed, by name, and what it kept.
type Removed struct {
	Containers []string
	Networks   []string
	Volumes    []string
	Images     []string
	// Kept lists what the sweep left on purpose, one "kind name: why"
	// each (Sweep.Keep); not counted by Len or Lines.
	Kept []string
}

// Lines renders r one "kind name" per line.
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

// Len is how many things r lists.
func (r Removed) Len() int {
	return len(r.Containers) + len(r.Networks) + len(r.Volumes) + len(r.Images)
}

// Sweep says what to remove.
type Sweep struct {
	// Run is the run label; empty means every run of the project.
	Run string
	// Images removes the project's images too (only with every run).
	Images bool
	// KeepReapers leaves containers with role reaper alone: the reaper
	// itself, and the backend's own clean-up, which stops its reaper
	// last.
	KeepReapers bool
	// Keep leaves the runs it holds alone (run label → why): their
	// containers, networks and volumes, and every image their containers
	// use.
	Keep map[string]string
	// LeaveSwarmNetworks leaves the networks of swarm scope (a run's
	// overlay) alone: a worker engine of a swarm lists them while it has
	// endpoints on them, and a moment after, but cannot remove them
	// ("This node is not a swarm manager"); the manager's sweep does.
	LeaveSwarmNetworks bool
}

// Do removes what s selects, Parallel at a time: containers first (forced,
// with their anonymous volumes), then networks and volumes, which the
// containers held, then images. Something already gone counts as removed
// by someone else and is not an error.
func (s Sweep) Do(ctx context.Context, cli client.APIClient) (Removed, error) {
	var (
		rm   Removed
		errs []error
	)
	f := Filter(s.Run)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return rm, fmt.Errorf("list containers: %w", err)
	}
	var cids, cnames []string
	inUse := map[string]string{} // image ID → a kept run that uses it
	for _, c := range cs.Items {
		if why, ok := s.Keep[c.Labels[LabelRun]]; ok {
			inUse[c.ImageID] = c.Labels[LabelRun]
			rm.Kept = append(rm.Kept, "container "+containerName(c.ID, c.Names)+": "+why)
			continue
		}
		if s.KeepReapers && c.Labels[LabelRole] == RoleReaper {
			continue
		}
		cids, cnames = append(cids, c.ID), append(cnames, containerName(c.ID, c.Names))
	}
	rm.Containers, errs = each(cids, cnames, "container", func(id string) error {
		_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if RemovalInProgress(err) {
			err = AwaitRemoved(ctx, cli, id) // an AutoRemove, or another sweep, got there first
		}
		return err
	})

	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list networks: %w", err))
	}
	var nids, nnames []string
	for _, n := range ns.Items {
		if why, ok := s.Keep[n.Labels[LabelRun]]; ok {
			rm.Kept = append(rm.Kept, "network "+n.Name+": "+why)
			continue
		}
		if s.LeaveSwarmNetworks && n.Scope == "swarm" {
			continue
		}
		nids, nnames = append(nids, n.ID), append(nnames, n.Name)
	}
	var e []error
	rm.Networks, e = each(nids, nnames, "network", func(id string) error {
		_, err := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
		if err != nil && networkGone(ctx, cli, id) {
			// A swarm overlay whose removal the manager is already
			// carrying out answers "network … not found" with a
			// status that does not say so; what counts is that it
			// is no longer listed.
			return nil
		}
		if StaleEndpoints(ctx, cli, id, err) {
			return fmt.Errorf("%w (no container is on it: the engine's count of its endpoints is stale, "+
				"and only a restart of the engine counts again; after one, `docker network rm` or `ringleader clean` removes it)", err)
		}
		return err
	})
	errs = append(errs, e...)

	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		errs = append(errs, fmt.Errorf("list volumes: %w", err))
	}
	var vnames []string
	for _, v := range vs.Items {
		if why, ok := s.Keep[v.Labels[LabelRun]]; ok {
			rm.Kept = append(rm.Kept, "volume "+v.Name+": "+why)
			continue
		}
		vnames = append(vnames, v.Name)
	}
	rm.Volumes, e = each(vnames, vnames, "volume", func(name string) error {
		_, err := cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: true})
		return err
	})
	errs = append(errs, e...)

	if s.Images && s.Run == "" {
		is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: f})
		if err != nil {
			errs = append(errs, fmt.Errorf("list images: %w", err))
		}
		var iids, inames []string
		for _, im := range is.Items {
			name := strings.TrimPrefix(im.ID, "sha256:")
			if len(name) > 12 {
				name = name[:12]
			}
			if len(im.RepoTags) > 0 {
				name = strings.Join(im.RepoTags, ",")
			}
			if run, ok := inUse[im.ID]; ok {
				rm.Kept = append(rm.Kept, "image "+name+": the containers of run "+run+" use it")
				continue
			}
			iids, inames = append(iids, im.ID), append(inames, name)
		}
		rm.Images, e = each(iids, inames, "image", func(id string) error {
			_, err := cli.ImageRemove(ctx, id, client.ImageRemoveOptions{Force: true, PruneChildren: true})
			return err
		})
		errs = append(errs, e...)
	}
	return rm, errors.Join(errs...)
}

// each runs remove for every id, Parallel at a time, and returns the names
// of those removed (or found gone) in the order given, and the errors.
func each(ids, names []string, kind string, remove func(id string) error) ([]string, []error) {
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, Parallel)
		ok   = make([]bool, len(ids))
		errs = make([]error, len(ids))
	)
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := remove(id)
			switch {
			case err == nil:
				ok[i] = true
			case cerrdefs.IsNotFound(err): // gone already is what we wanted
			default:
				errs[i] = fmt.Errorf("remove %s %s: %w", kind, names[i], err)
			}
		}()
	}
	wg.Wait()
	var done []string
	var failed []error
	for i := range ids {
		if ok[i] {
			done = append(done, names[i])
		}
		if errs[i] != nil {
			failed = append(failed, errs[i])
		}
	}
	return done, failed
}

// networkGone says whether the engine stops listing network id within
// three seconds (a swarm removes an overlay a moment after it said so).
func networkGone(ctx context.Context, cli client.APIClient, id string) bool {
	for range 12 {
		if NetworkUnlisted(ctx, cli, id) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
	}
	return false
}

// RemovalInProgress says whether err is the engine's refusal to remove a
// container it is removing already.
func RemovalInProgress(err error) bool {
	return err != nil && strings.Contains(err.Error(), "already in progress")
}

// AwaitRemoved waits until the engine no longer knows container id (nil),
// or ctx ends (its error).
func AwaitRemoved(ctx context.Context, cli client.APIClient, id string) error {
	for !ContainerUnlisted(ctx, cli, id) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("its removal, in progress, did not end: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// ContainerUnlisted says whether the engine's container list no longer
// holds id: the last step of a removal. Docker 20.10 forgets a container
// by ID (inspect answers "not found") a step before it drops it from the
// list, and what is left of a run is judged by the list (Left), so a
// removal counts as done only here. An engine that does not answer says
// nothing, so false.
func ContainerUnlisted(ctx context.Context, cli client.APIClient, id string) bool {
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("id", id)})
	return err == nil && len(cs.Items) == 0
}

// NetworkUnlisted says whether the engine answers that it lists no
// network id: a removal the engine refused may still have gone through (a
// swarm removes an overlay a moment after it says so), and this is how to
// tell. An engine that does not answer says nothing, so false.
func NetworkUnlisted(ctx context.Context, cli client.APIClient, id string) bool {
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("id", id)})
	return err == nil && len(ns.Items) == 0
}

// StaleEndpoints says whether err, from removing network id, is the
// engine's count of endpoints that no container holds any more: Docker
// 20.10 sometimes leaves the count up after the network's last container
// is gone (seen on a busy engine), and then refuses the removal ("has
// active endpoints") until a restart of the engine counts again.
func StaleEndpoints(ctx context.Context, cli client.APIClient, id string, err error) bool {
	if err == nil || !strings.Contains(err.Error(), "active endpoints") {
		return false
	}
	cs, lerr := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("network", id)})
	if lerr != nil || len(cs.Items) > 0 {
		return false
	}
	res, ierr := cli.NetworkInspect(ctx, id, client.NetworkInspectOptions{})
	return ierr == nil && len(res.Network.Containers) == 0
}

// containerName is a container's name without its slash, or its short ID.
func containerName(id string, names []string) string {
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return id[:12]
}

// Left lists, one "kind name" each, the containers, networks and volumes
// still labelled with run (every run's, when run is empty).
func Left(ctx context.Context, cli client.APIClient, run string) ([]string, error) {
	return LeftExcept(ctx, cli, run, nil)
}

// LeftExcept is Left without what carries a run label in except: what a
// clean-up that kept those runs on purpose should not count as left.
func LeftExcept(ctx context.Context, cli client.APIClient, run string, except map[string]string) ([]string, error) {
	var out []string
	f := Filter(run)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Items {
		if _, ok := except[c.Labels[LabelRun]]; !ok {
			out = append(out, "container "+containerName(c.ID, c.Names))
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		if _, ok := except[n.Labels[LabelRun]]; !ok {
			out = append(out, "network "+n.Name)
		}
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, v := range vs.Items {
		if _, ok := except[v.Labels[LabelRun]]; !ok {
			out = append(out, "volume "+v.Name)
		}
	}
	return out, nil
}

// The watcher's protocol on its standard streams.
const (
	// Ready is the line the watcher prints once it can reach the engine.
	Ready = "READY"
	// Done is the line the harness sends before it closes the
	// connection after a clean-up of its own: the watcher then sweeps
	// once, to catch what the clean-up missed, and exits.
	Done = "DONE"
)

// Settle is how long after the connection drops the watcher keeps
// sweeping until a sweep finds nothing: a request the harness sent just
// before it died (a container create) may still complete in the engine.
const Settle = 3 * time.Second

// Watch is the watcher: it checks that it can reach the engine, prints
// Ready on out, and reads in until it ends. An end after a Done line is a
// harness that cleaned up itself: one sweep. Any other end (EOF, an error:
// the harness's connection dropped, however it died) reaps the run: sweeps
// until one finds nothing at least Settle after the end, or until
// deadline passes. ctx ending counts as a dropped connection. Every
// removal is printed on out. The watcher's own
// container is left alone; the engine removes it when it exits
// (AutoRemove).
func Watch(ctx context.Context, cli client.APIClient, run string, in io.Reader, out io.Writer, deadline time.Duration) error {
	if run == "" {
		return errors.New("reaper: no run label")
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := cli.Ping(pctx, client.PingOptions{})
	cancel()
	if err != nil {
		return fmt.Errorf("reaper: the engine does not answer: %w", err)
	}
	fmt.Fprintln(out, Ready)

	// The read ends when the connection does; ctx ending (a signal to
	// the watcher) counts as a dropped connection too.
	read := make(chan bool, 1)
	var readErr error
	go func() {
		sc := bufio.NewScanner(in)
		done := false
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == Done {
				done = true
			}
		}
		readErr = sc.Err()
		read <- done
	}()
	done := false
	why := "the harness's connection dropped"
	select {
	case done = <-read:
		if done {
			why = "the harness closed the run"
		} else if readErr != nil {
			why += " (" + readErr.Error() + ")"
		}
	case <-ctx.Done():
		why = "the watcher was told to stop"
	}
	ended := time.Now()
	fmt.Fprintf(out, "reaper: run %s: %s; sweeping\n", run, why)

	ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), deadline)
	defer cancel()
	sweep := Sweep{Run: run, KeepReapers: true}
	for pass := 1; ; pass++ {
		t0 := time.Now()
		rm, err := sweep.Do(ctx, cli)
		for _, l := range rm.Lines() {
			fmt.Fprintf(out, "reaper: removed %s\n", l)
		}
		if err != nil {
			fmt.Fprintf(out, "reaper: pass %d: %v\n", pass, err)
		}
		quiet := err == nil && rm.Len() == 0
		if done || (quiet && t0.Sub(ended) >= Settle) {
			return err
		}
		select {
		case <-ctx.Done():
			left, _ := Left(context.WithoutCancel(ctx), cli, run)
			return fmt.Errorf("reaper: run %s: gave up after %v; left: %s", run, deadline, strings.Join(left, ", "))
		case <-time.After(time.Second):
		}
	}
}
