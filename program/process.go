package program

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/cpupin"
)

// process is one running program: one node slot's child process, which
// plays machine after machine (every start resets it). It is used by one
// machine at a time.
type process struct {
	cmd     *exec.Cmd
	in      *os.File // the program's stdin, our end
	out     *os.File // the program's stdout, our end
	r       *bufio.Reader
	req     bytes.Buffer
	line    []byte
	seq     uint64 // events sent
	lines   uint64 // lines read
	timeout time.Duration
	stderr  *tail
	cpus    cpupin.Set    // where it was started: it serves callers that run there
	waited  chan struct{} // closed when cmd.Wait returned
	waitErr error
	// watchdog kills the program when an exchange outlasts timeout;
	// expired says it did. Reads and writes are plain blocking system
	// calls (no deadlines through the Go poller, whose wake-ups cost
	// more than the whole exchange otherwise would), and a killed
	// program's pipe ends them.
	watchdog *time.Timer
	expired  atomic.Bool
	killOnce sync.Once
}

// launch starts argv with its stdin and stdout as pipes of our own (so
// that reads and writes take deadlines) and its stderr kept in a tail.
func launch(argv []string, timeout time.Duration) (*process, error) {
	inR, inW, err := blockingPipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p := &process{
		cmd: exec.Command(argv[0], argv[1:]...), in: inW, out: outR,
		r: bufio.NewReaderSize(outR, 64<<10), timeout: timeout,
		stderr: &tail{}, waited: make(chan struct{}),
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	// The program leads a process group of its own, and every end of it
	// ends the whole group: a program started through a wrapper (a
	// shell script, cargo run, npm start, poetry run) is a child of the
	// wrapper, holds the pipes, and would outlive a kill of the wrapper
	// alone, keeping every read of its answer waiting.
	// Pdeathsig ends the program if this process dies without a word
	// (SIGKILL); every other ending of ours ends the group (CloseAll).
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A child of the program that keeps its stderr open must not hold
	// up Wait (and the report) for long.
	p.cmd.WaitDelay = time.Second
	err = p.cmd.Start()
	inR.Close() // the child holds its own copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.waited)
	}()
	p.watchdog = time.AfterFunc(time.Hour, func() {
		p.expired.Store(true)
		p.killGroup()
	})
	p.watchdog.Stop()
	return p, nil
}

// blockingPipe is a pipe whose ends the Go runtime does not put in its
// poller: a read is one blocking system call.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("pipe: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "program-pipe-r"), os.NewFile(uintptr(fds[1]), "program-pipe-w"), nil
}

// exchange sends one event (with init for a start) and reads its answer.
// Any error leaves the process killed: the caller reports it as the
// node's crash.
func (p *process) exchange(ev election.Event, init *Init) (Answer, error) {
	p.seq++
	p.req.Reset()
	ok := false
	if init == nil {
		var b []byte
		b, ok = appendRequest(p.req.AvailableBuffer(), p.seq, &ev)
		p.req.Write(b)
	}
	if !ok {
		p.req.Reset()
		if err := encodeRequest(&p.req, &Request{V: Version, Seq: p.seq, Event: ev, Init: init}); err != nil {
			return Answer{}, p.fail(fmt.Errorf("event seq %d: encode: %w", p.seq, err))
		}
	}
	p.watchdog.Reset(p.answerBound())
	if _, err := p.in.Write(p.req.Bytes()); err != nil {
		p.watchdog.Stop()
		return Answer{}, p.fail(p.ioError(err, "read", describe(p.seq, ev)))
	}
	line, err := p.readLine()
	if !p.watchdog.Stop() || err != nil {
		if err == nil {
			err = os.ErrDeadlineExceeded // answered as the watchdog fired
		}
		return Answer{}, p.fail(p.ioError(err, "answer", describe(p.seq, ev)))
	}
	if a, ok := decodeAnswerFast(line, p.seq); ok {
		return a, nil
	}
	a, err := DecodeAnswer(line, p.lines, p.seq)
	if err != nil {
		return Answer{}, p.fail(fmt.Errorf("answer to %s: %w", describe(p.seq, ev), err))
	}
	return a, nil
}

// answerBound is how long the program has for the answer it owes now:
// the timeout, or, for a new process's first answer, at least
// StartAllowance.
func (p *process) answerBound() time.Duration {
	if p.lines == 0 {
		return max(p.timeout, StartAllowance)
	}
	return p.timeout
}

// describe names an event for a message: `event seq 7 (timer "answer")`.
func describe(seq uint64, ev election.Event) string {
	switch ev.Kind {
	case election.EventTimer:
		return fmt.Sprintf("event seq %d (timer %q)", seq, ev.Timer)
	case election.EventReceive:
		return fmt.Sprintf("event seq %d (receive %s from %d)", seq, ev.Msg.Type, ev.Msg.From)
	case election.EventPeerDown:
		return fmt.Sprintf("event seq %d (peer-down %d)", seq, ev.Peer)
	}
	return fmt.Sprintf("event seq %d (%s)", seq, ev.Kind)
}

// readLine reads one line of at most MaxLine bytes, its newline included,
// and returns it without the newline. A flood is refused as soon as
// MaxLine bytes came without a newline.
func (p *process) readLine() ([]byte, error) {
	p.line = p.line[:0]
	for {
		chunk, err := p.r.ReadSlice('\n')
		if err == nil && len(p.line)+len(chunk) <= MaxLine {
			p.lines++
			if len(p.line) == 0 {
				return chunk[:len(chunk)-1], nil // no copy: used before the next read
			}
			p.line = append(p.line, chunk[:len(chunk)-1]...)
			return p.line, nil
		}
		if len(p.line)+len(chunk) >= MaxLine {
			return nil, fmt.Errorf("line %d is longer than %d bytes (program.MaxLine)", p.lines+1, MaxLine)
		}
		p.line = append(p.line, chunk...)
		if err != bufio.ErrBufferFull {
			return nil, err
		}
	}
}

// ioError turns a pipe's error, while the program was to read or answer
// the event what, into what happened to the program.
func (p *process) ioError(err error, verb, what string) error {
	switch {
	case p.expired.Load() || errors.Is(err, os.ErrDeadlineExceeded):
		bound := "--program-timeout"
		if p.lines == 0 {
			bound = "its first answer, at least program.StartAllowance"
		}
		return fmt.Errorf("did not %s %s within %v (%s): treated as crashed", verb, what, p.answerBound(), bound)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("program exited (%s) while it was to %s %s", p.exitStatus(), verb, what)
	}
	return fmt.Errorf("%s %s: %w", verb, what, err)
}

// exitStatus waits a moment for the program to exit by itself and says
// how it ended; a program that closed its output but lives on is killed.
func (p *process) exitStatus() string {
	select {
	case <-p.waited:
	case <-time.After(time.Second):
		p.killGroup()
		<-p.waited
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	return p.waitErr.Error()
}

// fail kills the process and returns err with the program's last lines of
// stderr.
func (p *process) fail(err error) error {
	p.kill()
	if t := p.stderr.String(); t != "" {
		return fmt.Errorf("%w; its stderr ended:\n%s", err, t)
	}
	return fmt.Errorf("%w (its stderr was empty)", err)
}

// kill ends the process's whole group and waits for the program (and
// for its stderr to drain, at most cmd.WaitDelay).
// It is idempotent.
func (p *process) kill() {
	p.killOnce.Do(func() {
		p.watchdog.Stop()
		p.killGroup()
		<-p.waited
		p.in.Close()
		p.out.Close()
	})
}

// ended reports whether the program has exited.
func (p *process) ended() bool {
	select {
	case <-p.waited:
		return true
	default:
		return false
	}
}

// killGroup sends SIGKILL to the program's process group: the program
// and whatever it started that stayed in its group. (A descendant that
// made a session of its own, as a daemon does, is out of reach; one that
// holds the pipes then holds up a read until it exits.)
func (p *process) killGroup() error {
	if p.cmd.Process == nil {
		return nil
	}
	// The group's ID is the program's PID (Setpgid). The program itself
	// is killed too, in case it already left the group.
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.cmd.Process.Kill()
	return err
}

// tail keeps the last tailLines lines (at most tailBytes bytes) of what a
// program writes to stderr: its log, bounded whatever it writes.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const (
	tailLines = 64
	tailBytes = 16 << 10
)

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
}

// String is the kept tail, its last tailLines lines, each indented.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "  | " + strings.Join(lines, "\n  | ")
}
