package freeport

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// lockName is the file, in the system's temporary directory, whose byte
// number p a process locks while it holds port p; one file serves every
// port. The locks are POSIX record locks (fcntl), which the kernel drops
// when the process exits, so nothing has to be cleaned up and a killed
// test binary frees its ports.
const lockName = "ringleader-freeport.lock"

var (
	mu    sync.Mutex
	given = map[int]bool{} // ports this process has reserved
	// file is the lock file, opened once and never closed: closing any
	// descriptor of it would drop every lock this process holds on it.
	file     *os.File
	openOnce sync.Once
)

// reserve reports whether port is now this process's alone: false if this
// process reserved it before or another process holds it. Where the lock
// file cannot be opened or locked it reserves within the process only.
func reserve(port int) bool {
	mu.Lock()
	defer mu.Unlock()
	if given[port] {
		return false
	}
	if f := lockFile(); f != nil {
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: int64(port), Len: 1}
		err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return false // held by another process
		}
		// Any other error (a file system without record locks) leaves
		// the reservation to this process's set.
	}
	given[port] = true
	return true
}

func lockFile() *os.File {
	openOnce.Do(func() {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), lockName), os.O_RDWR|os.O_CREATE, 0o666)
		if err == nil {
			file = f
		}
	})
	return file
}
