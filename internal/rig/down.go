package rig

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker/reaper"
	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// Down removes what the state file in dir says the rig made, in the
// reverse order of Up, each step tolerating that its thing is already
// gone. What cannot be removed stays in the state file, named in the
// error, so Down can be run again. No rig up is no error.
func Down(ctx context.Context, dir string, log func(string, ...any)) error {
	st, err := Load(dir)
	if errors.Is(err, ErrNotUp) {
		return nil
	}
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if log != nil {
			log(format, args...)
		}
	}
	if st.PID == 0 && st.Data != "" {
		// Killed between starting the daemon and saving its PID: the
		// daemon's own pid file names it.
		if b, err := os.ReadFile(filepath.Join(st.Data, "dockerd.pid")); err == nil {
			st.PID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	var errs []error
	step := func(done bool, name string, f func() error) bool {
		if !done {
			return true
		}
		logf("rig: remove %s", name)
		if err := f(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return false
		}
		return true
	}
	if step(st.PID != 0 && st.Second != "", "the second engine's containers and its swarm membership", func() error { return emptySecond(ctx, st) }) {
		st.Joined, st.Images = false, nil
	}
	if step(st.SwarmInit, "the swarm on "+st.First, func() error { return leaveFirst(ctx, st, logf) }) {
		st.SwarmInit = false
	}
	if step(st.PID != 0, "the second dockerd (PID "+fmt.Sprint(st.PID)+")", func() error { return stopDaemon(st.PID) }) {
		st.PID, st.Second = 0, ""
	}
	if step(st.Data != "" && st.PID == 0, "the second engine's data "+st.Data, func() error { return removeData(st.Data) }) {
		st.Data = ""
	}
	if step(st.Veth, "veth "+HostVeth, func() error { return ignoreMissing(run("ip", "link", "del", HostVeth)) }) {
		st.Veth = false
	}
	if step(st.Netns, "network namespace "+Netns, func() error { return ignoreMissing(run("ip", "netns", "del", Netns)) }) {
		st.Netns = false
	}
	// Last, once the swarm is left and the second engine gone (no
	// overlay is set up any more to raise the limits again); else it
	// stays in the state file for the next Down.
	if st.Neighbours != nil && !st.SwarmInit && st.PID == 0 &&
		step(true, "the neighbour table's raise by the overlay driver", func() error { return restoreNeighbours(neigh.Dir, st.Neighbours, logf) }) {
		st.Neighbours = nil
	}
	if len(errs) > 0 {
		if err := save(dir, st); err != nil {
			errs = append(errs, err)
		}
		return fmt.Errorf("rig down: %w (what is left stays in %s; run it again)", errors.Join(errs...), statePath(dir))
	}
	if err := os.Remove(statePath(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rig down: %w", err)
	}
	return nil
}

// ignoreMissing is nil for an ip error saying the thing is not there.
func ignoreMissing(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range []string{"Cannot find device", "No such file", "does not exist"} {
		if strings.Contains(msg, s) {
			return nil
		}
	}
	return err
}

// emptySecond removes every container of the second engine (it is the
// rig's own engine: nothing on it is anyone else's) and takes it out of
// the swarm.
func emptySecond(ctx context.Context, st State) error {
	if syscall.Kill(st.PID, 0) != nil {
		return nil // the daemon is gone, and its containers with it
	}
	c, err := cli(st.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	list, err := c.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return err
	}
	for _, ct := range list.Items {
		if _, err := c.ContainerRemove(ctx, ct.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			return err
		}
	}
	_, err = c.SwarmLeave(ctx, client.SwarmLeaveOptions{Force: true})
	if err != nil && !strings.Contains(err.Error(), "not part of a swarm") {
		return err
	}
	return nil
}

// leaveFirst removes the project's overlay networks on the first engine
// with the project's containers on them, takes the engine out of the
// swarm the rig made, and removes docker_gwbridge unless it was there
// before.
func leaveFirst(ctx context.Context, st State, logf func(string, ...any)) error {
	c, err := cli(st.First)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nets, err := c.NetworkList(ctx, client.NetworkListOptions{Filters: reaper.Filter("").Add("driver", "overlay")})
	if err != nil {
		return err
	}
	for _, n := range nets.Items {
		f := reaper.Filter("").Add("network", n.ID)
		cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			return err
		}
		for _, ct := range cs.Items {
			if _, err := c.ContainerRemove(ctx, ct.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				return err
			}
		}
		if _, err := c.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			return err
		}
	}
	if _, err := c.SwarmLeave(ctx, client.SwarmLeaveOptions{Force: true}); err != nil && !strings.Contains(err.Error(), "not part of a swarm") {
		return err
	}
	if st.GWBridgeBefore {
		return nil
	}
	_, err = c.NetworkRemove(ctx, "docker_gwbridge", client.NetworkRemoveOptions{})
	if err == nil || strings.Contains(strings.ToLower(err.Error()), "not found") {
		return nil
	}
	if reaper.StaleEndpoints(ctx, c, "docker_gwbridge", err) {
		// Seen once after a 64-node run on a machine under a load of
		// 150: the engine counted endpoints on docker_gwbridge that no
		// container holds, and only a restart of the engine forgets
		// them. The bridge is left, empty; the next swarm init reuses
		// it (and a rig up then counts it as there before).
		logf("rig: docker_gwbridge left on %s: the engine counts endpoints on it that no container holds (%v); it is empty and a restart of the engine removes the count", st.First, err)
		return nil
	}
	return err
}

// stopDaemon ends the second dockerd: SIGTERM, then SIGKILL after 30 s.
// It checks first that pid is still that daemon (a PID can be reused).
func stopDaemon(pid int) error {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !strings.Contains(string(cmdline), "dockerd") || !strings.Contains(string(cmdline), Socket) {
		return nil // the PID is another process's now: ours is gone
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !running(pid) {
			return nil
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !running(pid) {
			return nil
		}
	}
	return fmt.Errorf("PID %d still runs after SIGKILL", pid)
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// removeData unmounts whatever the daemon left mounted under data (its
// namespaces' bind mounts), deepest first, and deletes the directory.
func removeData(data string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], data+"/") {
			mounts = append(mounts, fields[4])
		}
	}
	f.Close()
	slices.Sort(mounts)
	slices.Reverse(mounts)
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("unmount %s: %w", m, err)
		}
	}
	if err := os.RemoveAll(data); err != nil {
		// vfs layers can hold immutable files only chattr undoes; say so.
		return fmt.Errorf("%w (try: chattr -R -i %s; rm -rf %s)", err, data, data)
	}
	return nil
}
