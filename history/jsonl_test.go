package history_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// sample is a history with every kind of record and every field set at
// least once, so a round trip proves each field survives.
func sample() []history.Record {
	t0 := history.SimOrigin
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms)*time.Millisecond + 123456789) }
	return []history.Record{
		{Time: at(0), Process: "node", Kind: history.KindBoot, Node: 1, Boot: "7e5eb5cb58139c52", Seq: 1},
		{Time: at(1), Process: "node", Kind: history.KindSend, Node: 1, Boot: "7e5eb5cb58139c52", Seq: 2,
			Msg: &election.Message{Type: "ELECTION", From: 1, To: 2, Epoch: 3, Candidate: 1, Seq: 7}},
		{Time: at(2), Process: "node", Kind: history.KindRecv, Node: 2, Boot: "a511a3bea21088a3", Seq: 5,
			Msg: &election.Message{Type: "COORDINATOR", From: 2, To: 1, Epoch: 4, Members: []election.NodeID{3, 1, 2},
				Phase: 2, Hop: 4, Dir: election.CounterClockwise, Reply: true}},
		{Time: at(3), Process: "node", Kind: history.KindView, Node: 1, Boot: "7e5eb5cb58139c52", Seq: 3,
			View: &election.View{Leader: 2, Epoch: 4, Role: election.Follower}},
		{Time: at(4), Process: "node", Kind: history.KindDrop, Node: 1, Boot: "7e5eb5cb58139c52", Seq: 4, Reason: "foreign-cluster"},
		{Time: at(5), Process: history.NemesisProcess, Kind: history.KindFault,
			Fault: &history.Fault{Op: "partition", Phase: history.FaultInvoke, Target: "halves",
				Groups: [][]election.NodeID{{1, 2}, {3, 4, 5}}}},
		{Time: at(6), Process: history.NemesisProcess, Kind: history.KindFault,
			Fault: &history.Fault{Op: "partition", Phase: history.FaultOK, Target: "halves",
				Nodes: []election.NodeID{1, 2, 3, 4, 5}, Links: [][2]election.NodeID{{1, 3}, {3, 1}},
				Params: history.ParamsOf(history.Number("loss", 0.5), history.Dur("delay", 20*time.Millisecond), history.Dur("jitter", 5*time.Millisecond))}},
		{Time: at(7), Process: history.NemesisProcess, Kind: history.KindFault,
			Fault: &history.Fault{Op: "pause", Phase: history.FaultFail, Target: "leader", Error: "no leader"}},
		{Time: at(8), Process: "harness", Kind: history.KindMark, Note: "step 3/8 kill leader"},
		{Time: at(9), Process: "node", Kind: history.KindStop, Node: 2, Boot: "a511a3bea21088a3", Seq: 13},
	}
}

// sameRecords compares two histories; times by instant, the rest exactly.
func sameRecords(t *testing.T, got, want []history.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) {
			t.Errorf("record %d: time %v, want %v", i, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("record %d:\n got %s\nwant %s", i, gj, wj)
		}
	}
}

func write(t *testing.T, recs []history.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := history.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close of a Writer that owns no file: %v", err)
	}
	return buf.Bytes()
}

func TestWriterThenReadRoundTripsEveryField(t *testing.T) {
	want := sample()
	got, err := history.Read(bytes.NewReader(write(t, want)))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
}

func TestWriterWritesOneJSONObjectPerLine(t *testing.T) {
	want := sample()
	out := write(t, want)
	if !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatalf("output does not end with a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines for %d records:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		var m map[string]interface{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("line %d is not a JSON object: %v: %s", i+1, err, l)
		}
	}
}

func TestReadOfEmptyInputIsAnEmptyHistory(t *testing.T) {
	got, err := history.Read(strings.NewReader(""))
	if err != nil || len(got) != 0 {
		t.Fatalf("Read(\"\") = %v, %v; want no records and no error", got, err)
	}
}

func TestReadIgnoresATornLastLine(t *testing.T) {
	want := sample()
	full := write(t, want)
	extra, err := json.Marshal(history.Record{Time: history.SimOrigin, Process: "node", Kind: history.KindView, Node: 3, Boot: "b", Seq: 9,
		View: &election.View{Leader: 3, Epoch: 1, Role: election.Leader}})
	if err != nil {
		t.Fatal(err)
	}
	// Every proper prefix of the next line is what a crash mid-write can
	// leave behind.
	for cut := 1; cut < len(extra); cut++ {
		torn := append(append([]byte(nil), full...), extra[:cut]...)
		got, err := history.Read(bytes.NewReader(torn))
		if err != nil {
			t.Fatalf("torn last line %q: %v", extra[:cut], err)
		}
		sameRecords(t, got, want)
	}
}

func TestReadAcceptsALastLineWithoutNewline(t *testing.T) {
	want := sample()
	out := bytes.TrimSuffix(write(t, want), []byte("\n"))
	got, err := history.Read(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
}

func TestReadRejectsAMalformedLineInTheMiddleNamingItsLineNumber(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(string(write(t, sample())), "\n"), "\n")
	for _, bad := range []string{`{"time":"2000-01-01T00:00:00Z","kind":"vi`, `not json`, `{"time":"yesterday"}`, `[1,2]`} {
		// The bad line is line 4; line 5 follows it, so it is not torn.
		in := strings.Join(lines[:3], "\n") + "\n" + bad + "\n" + strings.Join(lines[3:], "\n") + "\n"
		got, err := history.Read(strings.NewReader(in))
		if err == nil {
			t.Fatalf("line 4 %q: no error, %d records", bad, len(got))
		}
		if !strings.Contains(err.Error(), "line 4:") {
			t.Errorf("line 4 %q: error %q does not name line 4", bad, err)
		}
		if got != nil {
			t.Errorf("line 4 %q: records returned along with the error: %v", bad, got)
		}
	}
}

func TestReadSkipsBlankLinesButCountsThem(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(string(write(t, sample())), "\n"), "\n")
	in := lines[0] + "\n\n" + lines[1] + "\n"
	got, err := history.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, sample()[:2])

	in = lines[0] + "\n\nnot json\n" + lines[1] + "\n"
	if _, err := history.Read(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "line 3:") {
		t.Fatalf("malformed line 3 after a blank line 2: error %v, want one naming line 3", err)
	}
}

func TestReadHandlesLinesLongerThanTheScannerDefault(t *testing.T) {
	want := []history.Record{
		{Time: history.SimOrigin, Process: "harness", Kind: history.KindMark, Note: strings.Repeat("x", 1<<20)},
		{Time: history.SimOrigin, Process: "harness", Kind: history.KindMark, Note: "after"},
	}
	got, err := history.Read(bytes.NewReader(write(t, want)))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
}

func TestConcurrentAppendsProduceOnlyWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 32, 200
	var wg sync.WaitGroup
	for g := 1; g <= goroutines; g++ {
		wg.Add(1)
		go func(node election.NodeID) {
			defer wg.Done()
			for s := 1; s <= each; s++ {
				// Lines of different lengths, so an interleaving would
				// leave a line that does not parse.
				err := w.Append(history.Record{Time: history.SimOrigin, Process: "node", Kind: history.KindMark,
					Node: node, Seq: uint64(s), Note: strings.Repeat("n", (int(node)*s)%997)})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(election.NodeID(g))
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != goroutines*each {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*each)
	}
	next := map[election.NodeID]uint64{}
	for i, l := range lines {
		var r history.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d is not a whole record: %v", i+1, err)
		}
		if want := strings.Repeat("n", (int(r.Node)*int(r.Seq))%997); r.Note != want {
			t.Fatalf("line %d: node %d seq %d carries a note of %d bytes, want %d", i+1, r.Node, r.Seq, len(r.Note), len(want))
		}
		// One goroutine's appends stay in its order.
		next[r.Node]++
		if r.Seq != next[r.Node] {
			t.Fatalf("line %d: node %d seq %d, want seq %d next", i+1, r.Node, r.Seq, next[r.Node])
		}
	}
	if len(next) != goroutines {
		t.Fatalf("records from %d goroutines, want %d", len(next), goroutines)
	}
}

// failAfter accepts n writes, then fails every one.
type failAfter struct {
	n      int
	writes int
	buf    bytes.Buffer
}

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errDiskFull
	}
	return f.buf.Write(p)
}

func TestWriterKeepsReturningItsFirstWriteError(t *testing.T) {
	fw := &failAfter{n: 2}
	w := history.NewWriter(fw)
	recs := sample()
	for i := 0; i < 2; i++ {
		if err := w.Append(recs[i]); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	first := w.Append(recs[2])
	if !errors.Is(first, errDiskFull) {
		t.Fatalf("append after the sink failed: %v, want an error wrapping %v", first, errDiskFull)
	}
	// Later appends return the same error without touching the sink again.
	fw.n = 1 << 30 // the sink would now succeed
	for i := 3; i < len(recs); i++ {
		if err := w.Append(recs[i]); err != first {
			t.Fatalf("append %d: %v, want the first error %v", i, err, first)
		}
	}
	if fw.writes != 3 {
		t.Errorf("%d writes reached the sink, want 3 (none after the failure)", fw.writes)
	}
	if err := w.Close(); err != first {
		t.Errorf("Close: %v, want the first write error %v", err, first)
	}
	// What was written before the failure is still a readable history.
	got, err := history.Read(&fw.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, recs[:2])
}

func TestAppendOfAnUnencodableRecordFailsWithoutPoisoningTheWriter(t *testing.T) {
	var buf bytes.Buffer
	w := history.NewWriter(&buf)
	bad := history.Record{Kind: history.KindFault, Process: history.NemesisProcess,
		Fault: &history.Fault{Op: "loss", Params: history.ParamsOf(history.Number("loss", math.NaN()))}}
	if err := w.Append(bad); err == nil {
		t.Fatal("a record with a NaN loss encoded")
	} else if !strings.Contains(err.Error(), "fault") {
		t.Errorf("encode error %q does not name the record kind", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("a failed encode wrote %q", buf.String())
	}
	good := sample()[0]
	if err := w.Append(good); err != nil {
		t.Fatalf("append after an encode error: %v", err)
	}
	got, err := history.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, []history.Record{good})
}

func TestCreateCloseReadFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	for _, r := range want {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v, want nil (the file is already closed)", err)
	}
	got, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
}

func TestCreateTruncatesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("old garbage\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := history.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()[:1]
	if err := w.Append(want[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
}

func TestCreateInAMissingDirectoryFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "history.jsonl")
	if w, err := history.Create(path); err == nil {
		w.Close()
		t.Fatal("Create in a missing directory succeeded")
	} else if !strings.HasPrefix(err.Error(), "history: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %q: want a history: error wrapping os.ErrNotExist", err)
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	if _, err := history.ReadFile(missing); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want os.ErrNotExist", err)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	lines := strings.Split(strings.TrimSuffix(string(write(t, sample())), "\n"), "\n")
	content := lines[0] + "\n{broken\n" + lines[1] + "\n"
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := history.ReadFile(bad)
	if err == nil {
		t.Fatal("ReadFile of a file with a malformed middle line succeeded")
	}
	if want := bad + ": history: line 2:"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to begin %q", err, want)
	}
}

// failSink always fails with its own error.
type failSink struct{ err error }

func (f failSink) Append(history.Record) error { return f.err }

func TestTeeAppendsToEverySinkInOrderAndReturnsTheFirstError(t *testing.T) {
	var a, b history.Memory
	var buf bytes.Buffer
	w := history.NewWriter(&buf)
	e1, e2 := errors.New("first"), errors.New("second")
	tee := history.Tee{&a, failSink{e1}, w, failSink{e2}, &b}
	recs := sample()
	for _, r := range recs {
		if err := tee.Append(r); err != e1 {
			t.Fatalf("Tee.Append: %v, want the first sink error %v", err, e1)
		}
	}
	// A failing sink does not stop the sinks after it.
	sameRecords(t, a.Records(), recs)
	sameRecords(t, b.Records(), recs)
	got, err := history.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, recs)

	var c history.Memory
	if err := (history.Tee{&c}).Append(recs[0]); err != nil {
		t.Errorf("Tee of healthy sinks: %v", err)
	}
	if err := (history.Tee{}).Append(recs[0]); err != nil {
		t.Errorf("empty Tee: %v", err)
	}
}

func TestMemoryRecordsIsACopy(t *testing.T) {
	var m history.Memory
	if got := m.Records(); len(got) != 0 {
		t.Fatalf("zero Memory holds %v", got)
	}
	recs := sample()
	for _, r := range recs {
		if err := m.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	got := m.Records()
	got[0].Note = "changed by the caller"
	got = append(got[:1], got[2:]...)
	_ = got
	sameRecords(t, m.Records(), recs)
}

func TestMemoryIsSafeForConcurrentUse(t *testing.T) {
	var m history.Memory
	const goroutines, each = 16, 100
	var wg sync.WaitGroup
	for g := 1; g <= goroutines; g++ {
		wg.Add(1)
		go func(node election.NodeID) {
			defer wg.Done()
			for s := 1; s <= each; s++ {
				m.Append(history.Record{Kind: history.KindMark, Node: node, Seq: uint64(s)})
				_ = m.Records()
			}
		}(election.NodeID(g))
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, r := range m.Records() {
		k := fmt.Sprintf("%d/%d", r.Node, r.Seq)
		if seen[k] {
			t.Fatalf("record %s kept twice", k)
		}
		seen[k] = true
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d records kept, want %d", len(seen), goroutines*each)
	}
}

// TestHistoryFromBeforeParamsWereOneValueStillReads: a fault record as
// histories have always written it (params as the fields of loss, delay
// and clock, a duration also as nanoseconds) reads into the same values.
func TestHistoryFromBeforeParamsWereOneValueStillReads(t *testing.T) {
	line := `{"time":"2000-01-01T00:00:01Z","process":"nemesis","kind":"fault","fault":{"op":"delay","phase":"ok","nodes":[3],"params":{"delay":"20ms","jitter":5000000}}}` + "\n" +
		`{"time":"2000-01-01T00:00:02Z","process":"nemesis","kind":"fault","fault":{"op":"loss","phase":"ok","nodes":[2],"params":{"loss":0.3}}}` + "\n"
	recs, err := history.Read(strings.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	d, l := recs[0].Fault.Params, recs[1].Fault.Params
	if d.Duration("delay") != 20*time.Millisecond || d.Duration("jitter") != 5*time.Millisecond || l.Num("loss") != 0.3 {
		t.Fatalf("read delay %v, loss %v", d, l)
	}
	var buf bytes.Buffer
	if err := history.NewWriter(&buf).Append(recs[1]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"params":{"loss":0.3}`) {
		t.Errorf("written back as %s", buf.String())
	}
}
