//go:build !nodeimage

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// errOutputClosed is the cause of a run cancelled because its output went
// away (`ringleader run ... | head -3`).
var errOutputClosed = errors.New("the output was closed")

// exitOutputClosed is the status of a run whose output was closed: a shell
// reports a process killed by SIGPIPE as 128+13.
const exitOutputClosed = 141

// output guards one of the process's outputs. The first write that fails
// (EPIPE: the reader is gone) mutes it, and calls gone once: a closed pipe
// is an interrupt, not a crash, and nothing is written to it again.
type output struct {
	w    io.Writer
	dead atomic.Bool
	gone func()
}

func (o *output) Write(p []byte) (int, error) {
	if o.dead.Load() {
		return len(p), nil
	}
	n, err := o.w.Write(p)
	if err != nil && !o.dead.Swap(true) {
		o.gone()
	}
	return n, err
}

// interruptible returns a context that ends on SIGINT, SIGTERM or SIGHUP
// or when a write to stdout or stderr fails, those two outputs guarded,
// and closed, which says whether an output went away. SIGPIPE is caught
// (never delivered to a reader), so that a write to a closed pipe returns
// EPIPE instead of killing the process before it has removed its
// containers.
func interruptible(parent context.Context) (ctx context.Context, stop func(), stdout, stderr io.Writer, closed func() bool) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sctx, sstop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	cctx, cancel := context.WithCancelCause(sctx)
	var gone atomic.Bool
	lost := func() {
		gone.Store(true)
		cancel(errOutputClosed)
	}
	o, e := &output{w: os.Stdout, gone: lost}, &output{w: os.Stderr, gone: lost}
	go watchPipe(cctx, os.Stdout, o)
	go watchPipe(cctx, os.Stderr, e)
	return cctx, func() { cancel(nil); sstop() }, o, e, gone.Load
}

// watchPipe notices that the reader of the pipe f went away before
// anything is written to it (a run can be quiet for a while): the kernel
// reports POLLERR on a pipe's write end once its read end is closed. Other
// kinds of output are left to the write that fails.
func watchPipe(ctx context.Context, f *os.File, o *output) {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn() // not Fd, which would make writes blocking
	if err != nil {
		return
	}
	fd := int32(-1)
	rc.Control(func(u uintptr) { fd = int32(u) })
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: fd}}
		n, err := unix.Poll(fds, 250)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			if !o.dead.Swap(true) {
				o.gone()
			}
			return
		}
	}
}
