package docker

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// cgroupOf is the cgroup path of process pid, which stands in for a
// container's ID in these tests: it is what containerProcess reads.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(cg), []byte("\n"))
	path := line[bytes.LastIndexByte(line, ':')+1:]
	if len(path) == 0 {
		t.Fatalf("no cgroup path in %q", line)
	}
	return string(path)
}

// sleeper starts a process that waits, killed when the test ends.
func sleeper(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, cmd.Process.Pid
}

// killDirect signals a process only when its cgroup names the container:
// a PID that is not the container's (another process, the harness in a
// PID namespace of its own) is left alone for the engine to kill.
func TestKillDirectSignalsOnlyTheContainersProcess(t *testing.T) {
	cmd, pid := sleeper(t)
	if killDirect(pid, "0123456789abcdef-not-its-container") {
		t.Fatal("killDirect signalled a process outside the named container")
	}
	if killDirect(0, "x") || killDirect(pid, "") {
		t.Fatal("killDirect signalled without a PID or a container ID")
	}
	if !killDirect(pid, cgroupOf(t, pid)) {
		t.Fatal("killDirect did not signal the process its cgroup names")
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended with %v, want SIGKILL", err)
	}
}

// netnsDirect opens a process's network namespace only when its cgroup
// names the container, and only while the process lives: what it opens is
// that process's namespace, not one a reused PID would name.
func TestNetnsDirectOpensOnlyTheContainersNamespace(t *testing.T) {
	cmd, pid := sleeper(t)
	if ns, ok := netnsDirect(pid, "0123456789abcdef-not-its-container"); ok {
		ns.Close()
		t.Fatal("netnsDirect opened the namespace of a process outside the named container")
	}
	if _, ok := netnsDirect(0, "x"); ok {
		t.Fatal("netnsDirect opened a namespace without a PID")
	}
	cg := cgroupOf(t, pid)
	ns, ok := netnsDirect(pid, cg)
	if !ok {
		t.Skip("this process cannot open another process's network namespace (not root?): the backend uses helper containers here")
	}
	defer ns.Close()
	var opened, want unix.Stat_t
	if err := unix.Fstat(int(ns.Fd()), &opened); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/net", &want); err != nil {
		t.Fatal(err)
	}
	if opened.Ino != want.Ino || opened.Dev != want.Dev {
		t.Fatalf("opened namespace %d:%d, the process's is %d:%d", opened.Dev, opened.Ino, want.Dev, want.Ino)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if ns, ok := netnsDirect(pid, cg); ok {
		ns.Close()
		t.Fatal("netnsDirect opened a namespace for a process that has exited")
	}
}
