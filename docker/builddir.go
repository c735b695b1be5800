package docker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildDirPrefix names the temporary directories image builds make:
// ringleader-image-<pid>-<random>, so that a later process can tell a
// build that is still running from one whose process was killed.
const buildDirPrefix = "ringleader-image-"

// newBuildDir makes this process's temporary build context directory.
func newBuildDir() (string, error) {
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", buildDirPrefix, os.Getpid()))
}

// removeStaleBuildDirs removes the build directories of processes that are
// gone (a build killed with SIGKILL cannot remove its own), and those of
// older builds that did not record their process, once a day old. It
// returns what it removed.
func removeStaleBuildDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), buildDirPrefix+"*"))
	var removed []string
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), buildDirPrefix)
		stale := false
		if p, _, ok := strings.Cut(rest, "-"); ok {
			pid, err := strconv.Atoi(p)
			stale = err == nil && pid != os.Getpid() && !processAlive(pid)
		} else if st, err := os.Stat(d); err == nil {
			stale = time.Since(st.ModTime()) > 24*time.Hour
		}
		if stale && os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// processAlive says whether a process with pid exists (it may belong to
// someone else: then it is alive too).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// dieWithParent has the kernel kill cmd when this process dies, so that a
// build killed with SIGKILL does not leave its compiler running and
// writing into a directory nobody will remove.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
