package docker

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// killDirect signals a process only when its cgroup names the container:
// a PID that is not the container's (another process, the harness in a
// PID namespace of its own) is left alone for the engine to kill.
func TestKillDirectSignalsOnlyTheContainersProcess(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	if killDirect(pid, "0123456789abcdef-not-its-container") {
		t.Fatal("killDirect signalled a process outside the named container")
	}
	if killDirect(0, "x") || killDirect(pid, "") {
		t.Fatal("killDirect signalled without a PID or a container ID")
	}
	// The child's cgroup path, whatever it is, stands in for a
	// container's ID: it is what the check reads.
	cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(cg), []byte("\n"))
	path := line[bytes.LastIndexByte(line, ':')+1:]
	if len(path) == 0 {
		t.Fatalf("no cgroup path in %q", line)
	}
	if !killDirect(pid, string(path)) {
		t.Fatal("killDirect did not signal the process its cgroup names")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended with %v, want SIGKILL", err)
	}
}
