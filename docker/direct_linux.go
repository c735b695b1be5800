package docker

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// What the harness can do to a node's process without asking the engine,
// when it sees the engine's processes (the same kernel and PID namespace,
// as root or the node's own user): signal it, and enter its network
// namespace. Anywhere else (a remote engine, an engine in a VM, a
// harness in a container of its own) the PID names no such process, or
// the kernel refuses, and the caller asks the engine instead.

// containerProcess opens a pidfd for process pid when that process is
// container cid's: its cgroup path names the container's ID. The pidfd
// pins the process while the cgroup is read, so a PID reused in between
// is never acted on. The caller closes the pidfd.
func containerProcess(pid int, cid string) (int, bool) {
	if pid <= 0 || cid == "" {
		return -1, false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, false
	}
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil || !bytes.Contains(cg, []byte(cid)) {
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// killDirect sends SIGKILL to process pid itself, when that process is
// container cid's, and reports whether it did. The engine's kill goes
// dockerd → containerd → the shim → runc, a process started per signal:
// 20–70 ms on this 2-core machine under load, all of it counted in a
// kill's failover, against microseconds here.
func killDirect(pid int, cid string) bool {
	fd, ok := containerProcess(pid, cid)
	if !ok {
		return false
	}
	defer unix.Close(fd)
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// netnsDirect opens the network namespace of process pid, when that
// process is container cid's, for netfilter to change from here
// (netfilter.InNamespace). The engine's way is a helper container joining
// the namespace: a create, a start, a wait and a remove, 0.17 s and 0.16
// CPU-seconds each on an idle machine of this kind (timed as `docker run
// --rm`, the CLI's share included), once per namespace a fault changes.
// The namespace is the process's own as long as the process lives: it is
// opened while the pidfd pins the process, and the process must still be
// there after, so a PID reused in between is never entered. The caller
// closes the file.
func netnsDirect(pid int, cid string) (*os.File, bool) {
	fd, ok := containerProcess(pid, cid)
	if !ok {
		return nil, false
	}
	defer unix.Close(fd)
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, false
	}
	if unix.PidfdSendSignal(fd, 0, nil, 0) != nil {
		ns.Close()
		return nil, false
	}
	return ns, true
}
