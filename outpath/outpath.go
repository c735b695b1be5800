// Package outpath guards the files and directories a command writes. Every
// output a user names (a JUnit file, a history, a store, a directory of
// saved schedules, a report) is checked before any work starts (Check), and
// written so that nothing but a regular file is ever replaced: not a device
// node (/dev/null), a named pipe, a symbolic link or a directory
// (WriteFile, Create). An error names the path the user gave and what is
// wrong with it, never a temporary file's name.
package outpath

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Kind is what a path is meant to hold.
type Kind int

const (
	// File is a regular file the command writes whole.
	File Kind = iota
	// Dir is a directory the command makes files in (made if missing).
	Dir
)

// Error is an output path that cannot be written, and why.
type Error struct {
	Path    string
	Problem string
	// Err is the cause, when there is one to test for (fs.ErrNotExist
	// for a missing directory).
	Err error
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

func (e *Error) Unwrap() error { return e.Err }

func refuse(path, format string, args ...any) error {
	return &Error{Path: path, Problem: fmt.Sprintf(format, args...)}
}

// Check reports whether path can be written as kind without replacing
// anything that is not a regular file. A File may be missing or a
// regular file (replaced whole); a Dir may be missing or a directory
// (reached through a symbolic link or not). Either way the directory that
// holds a missing path must exist and be writable: only the last name of a
// path is ever made.
func Check(path string, kind Kind) error {
	if path == "" {
		return refuse(path, "empty path")
	}
	var (
		fi  fs.FileInfo
		err error
	)
	if kind == Dir {
		fi, err = os.Stat(path) // a store may well be a link to a bigger disk
	} else {
		fi, err = os.Lstat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return checkParent(path) // which says what is wrong with it
	case err != nil:
		return refuse(path, "%v", cause(err))
	case kind == Dir && !fi.IsDir():
		return refuse(path, "is %s, not a directory: give a directory's path (it is made if missing)", what(fi, path))
	case kind == Dir:
		return writableDir(path, path, fi)
	case !fi.Mode().IsRegular():
		return refuse(path, "is %s, not a regular file; it is never replaced: give the path of a regular file to write (it is made if missing)", what(fi, path))
	case unix.Access(path, unix.W_OK) != nil:
		return refuse(path, "the file is not writable")
	}
	return checkParent(path)
}

// checkParent checks that the directory holding path exists and can take
// a new file (WriteFile makes one beside the target, then renames it).
func checkParent(path string) error {
	dir := filepath.Dir(filepath.Clean(path)) // "found/" is in ., not in found
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Path: path, Problem: fmt.Sprintf("directory %s does not exist", dir), Err: fs.ErrNotExist}
	case err != nil:
		return refuse(path, "directory %s: %v", dir, cause(err))
	case !fi.IsDir():
		return refuse(path, "%s is %s, not a directory", dir, what(fi, dir))
	}
	return writableDir(path, dir, fi)
}

// writableDir checks that dir (fi) lets this process make files in it.
// A directory whose mode lets nobody write counts as read-only even for
// root, whom the kernel would let through: someone made it read-only.
func writableDir(path, dir string, fi fs.FileInfo) error {
	if unix.Access(dir, unix.W_OK|unix.X_OK) != nil || fi.Mode().Perm()&0o222 == 0 {
		if dir == path {
			return refuse(path, "the directory is not writable")
		}
		return refuse(path, "directory %s is not writable", dir)
	}
	return nil
}

// what names the kind of thing fi is, for an error.
func what(fi fs.FileInfo, path string) string {
	m := fi.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		if to, err := os.Readlink(path); err == nil {
			return "a symbolic link (to " + to + ")"
		}
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// cause strips the path from an error of package os (the path may be a
// temporary file's, which means nothing to the user).
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &se):
		return se.Err
	}
	return err
}

// writeBuffer is WriteFile's buffer: a report page is a few hundred
// kilobytes, results.json tens.
const writeBuffer = 64 << 10

// pathless is a writer whose errors name no file.
type pathless struct{ w io.Writer }

func (p pathless) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil {
		err = cause(err)
	}
	return n, err
}

// WriteFile writes path whole with write: into a new file beside it that
// is renamed over path only once complete, so a reader never sees half a
// file. path is checked (Check) before and again just before the rename,
// so that what was put there meanwhile is not replaced either. A file
// that exists keeps its permissions; a new one gets 0644.
func WriteFile(path string, write func(io.Writer) error) error {
	if err := Check(path, File); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return refuse(path, "cannot make a file in %s: %v", dir, cause(err))
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	// Buffered: a writer such as html/template writes every fragment
	// separately, and unbuffered that was a system call each (most of the
	// CPU a simulated run spent on its report page).
	bw := bufio.NewWriterSize(pathless{tmp}, writeBuffer)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		tmp.Close()
		return refuse(path, "writing: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return refuse(path, "writing: %v", cause(err))
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return refuse(path, "%v", cause(err))
	}
	if err := Check(path, File); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return refuse(path, "%v", cause(err))
	}
	return nil
}

// Create opens path for writing as it goes (a history), truncated, once
// Check passes. The file is opened without following a symbolic link and
// without waiting on a named pipe, and refused unless it is a regular
// file, so that nothing put there since Check is written through.
func Create(path string) (*os.File, error) {
	if err := Check(path, File); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENXIO) {
			if cerr := Check(path, File); cerr != nil {
				return nil, cerr // it changed since: say what it is now
			}
		}
		return nil, refuse(path, "%v", cause(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, refuse(path, "%v", cause(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refuse(path, "is %s, not a regular file; it is never replaced: give the path of a regular file to write", what(fi, path))
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, refuse(path, "%v", cause(err))
	}
	return f, nil
}

// What the command's own files look like at their start, so that an
// existing regular file is replaced only when ringleader wrote it: a
// mistyped --junit README.md is refused, a JUnit file of the last run is
// not. An empty file holds nothing to lose.
var (
	// JUnitFile: the JUnit XML ringleader writes.
	JUnitFile = Looks("JUnit XML", func(head string) bool { return strings.Contains(head, "<testsuites") })
	// HTMLReport: a ringleader report page.
	HTMLReport = Looks("ringleader report page", func(head string) bool { return strings.Contains(head, "ringleader report</title>") })
	// HistoryFile: a history, JSON lines of records.
	HistoryFile = Looks("ringleader history", func(head string) bool {
		return strings.HasPrefix(head, "{") && strings.Contains(head, `"process":`)
	})
	// ResultsFile: a run's results.json.
	ResultsFile = Looks("ringleader results.json", func(head string) bool {
		return strings.Contains(head, `"scenario"`) && strings.Contains(head, `"backend"`)
	})
)

// A Signature says whether a file's first bytes are the command's own.
type Signature struct {
	What  string
	match func(head string) bool
}

// Looks is the signature of files named what whose start satisfies match.
func Looks(what string, match func(head string) bool) Signature {
	return Signature{What: what, match: match}
}

// CheckOurs refuses an existing regular file at path that does not start
// as sig says (the command did not write it, so it is not the command's to
// replace); a missing or empty file, or anything Check refuses, is left to
// Check.
func CheckOurs(path string, sig Signature) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // Check names what is wrong with reading it
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if sig.match(string(head[:n])) {
		return nil
	}
	return refuse(path, "exists and is not a %s ringleader wrote; it is never replaced: remove it or give another path", sig.What)
}
