package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/ringleader-dev/ringleader/outpath"
)

// Sink receives records as they happen.
type Sink interface {
	Append(Record) error
}

// Writer appends records to an io.Writer as JSON lines. Each Append writes
// one complete line with a single Write call, so a crash leaves at most the
// last line torn, and Read tolerates that. Safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	f   *os.File // set when the Writer owns a file, for Sync and Close
	err error
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Create opens path for writing (truncating it) and returns a Writer that
// owns the file. Anything at path but a regular file (a device, a named
// pipe, a symbolic link) is refused, not written through (outpath.Create).
func Create(path string) (*Writer, error) {
	f, err := outpath.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Writer{w: f, f: f}, nil
}

// Append writes r as one line. After the first write error every later
// Append returns that error.
func (w *Writer) Append(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("history: encode %s record: %w", r.Kind, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("history: write: %w", err)
	}
	return w.err
}

// Close syncs and closes the file the Writer owns (a no-op otherwise).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.err
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	if serr != nil {
		return serr
	}
	return cerr
}

// Memory is a Sink that keeps records in memory (the simulator and tests).
type Memory struct {
	mu      sync.Mutex
	records []Record
}

// Append keeps a copy of r.
func (m *Memory) Append(r Record) error {
	m.mu.Lock()
	m.records = append(m.records, r)
	m.mu.Unlock()
	return nil
}

// Records returns a copy of everything appended so far.
func (m *Memory) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.records...)
}

// Tee appends to every sink in order and returns the first error.
type Tee []Sink

func (t Tee) Append(r Record) error {
	var first error
	for _, s := range t {
		if err := s.Append(r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Read parses a history. A torn last line (a run that crashed mid-write) is
// ignored; any other malformed line is an error naming its line number.
func Read(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var (
		out     []Record
		pending error
		line    int
	)
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			// Only an error if another line follows.
			pending = fmt.Errorf("history: line %d: %w", line, err)
			continue
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history: line %d: %w", line+1, err)
	}
	return out, nil
}

// ReadFile reads a history file.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	recs, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
