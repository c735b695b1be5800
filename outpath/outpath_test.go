package outpath

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// badFiles builds, in a fresh directory, every kind of path a file output
// must refuse, each with the words its error must contain.
func badFiles(t *testing.T) map[string]struct{ path, says string } {
	t.Helper()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "readonly")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	return map[string]struct{ path, says string }{
		"device":         {"/dev/null", "character device"},
		"fifo":           {fifo, "named pipe"},
		"symlink":        {link, "symbolic link (to " + target + ")"},
		"directory":      {sub, "a directory"},
		"missing parent": {filepath.Join(dir, "nope", "out.xml"), "directory " + filepath.Join(dir, "nope") + " does not exist"},
		"read-only dir":  {filepath.Join(ro, "out.xml"), "not writable"},
		"file as parent": {filepath.Join(target, "out.xml"), "not a directory"},
	}
}

func TestCheckRefusesWhatIsNotARegularFile(t *testing.T) {
	for name, c := range badFiles(t) {
		err := Check(c.path, File)
		var oe *Error
		if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), c.path+": ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Check(%s) = %v; want an error naming the path and saying %q", name, c.path, err, c.says)
		}
	}
}

// WriteFile and Create refuse the same paths and leave them as they were:
// the link still a link to the untouched file, the FIFO a FIFO, /dev/null
// a device.
func TestWritersLeaveWhatTheyRefuseUntouched(t *testing.T) {
	for name, c := range badFiles(t) {
		before, _ := os.Lstat(c.path)
		werr := WriteFile(c.path, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
		f, cerr := Create(c.path)
		if f != nil {
			f.Close()
		}
		if werr == nil || cerr == nil {
			t.Errorf("%s: WriteFile: %v, Create: %v; want both refused", name, werr, cerr)
		}
		after, _ := os.Lstat(c.path)
		if before != nil && (after == nil || after.Mode() != before.Mode() || after.Size() != before.Size()) {
			t.Errorf("%s: %s changed from %v to %v", name, c.path, before.Mode(), after.Mode())
		}
	}
}

func TestSymlinkTargetIsNotWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep me\n"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	WriteFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
	if f, err := Create(link); err == nil {
		f.Close()
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

func TestWriteFileReplacesARegularFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.xml")
	os.WriteFile(path, []byte("old"), 0o600)
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %v; want \"new\" with the old file's mode 0600", b, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries; want the file alone (no temporary left)", len(entries))
	}
}

// A file written in many small pieces, past the buffer several times,
// arrives whole and in order.
func TestWriteFileKeepsEveryPieceOfALongWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	var want strings.Builder
	err := WriteFile(path, func(w io.Writer) error {
		for i := 0; want.Len() < 4*writeBuffer+123; i++ {
			piece := fmt.Sprintf("<rect n=\"%d\"/>\n", i)
			want.WriteString(piece)
			if _, err := io.WriteString(w, piece); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != want.String() {
		t.Errorf("the file holds %d bytes; want the %d written, in order", len(b), want.Len())
	}
}

// A failed write names the path given, not the temporary file's: the
// writer handed to write reports errors without a file name, and
// WriteFile puts the path in front.
func TestWriteErrorNamesThePathNotATemporaryFile(t *testing.T) {
	dir := t.TempDir()
	tmp, err := os.CreateTemp(dir, ".out.xml.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	_, werr := pathless{tmp}.Write([]byte("x"))
	if werr == nil || strings.Contains(werr.Error(), ".tmp-") {
		t.Errorf("write to a closed temporary file: %v; want an error without its name", werr)
	}
	path := filepath.Join(dir, "out.xml")
	err = WriteFile(path, func(io.Writer) error { return werr })
	if err == nil || strings.Contains(err.Error(), ".tmp-") || !strings.HasPrefix(err.Error(), path+": writing: ") {
		t.Errorf("error %v: want it to name %s and no temporary file", err, path)
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Errorf("%s exists after a failed write", path)
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	linked := filepath.Join(dir, "linked")
	os.Symlink(dir, linked)
	for path, says := range map[string]string{
		file:                         "a regular file, not a directory",
		"/dev/null":                  "character device, not a directory",
		ro:                           "not writable",
		filepath.Join(dir, "a", "b"): "does not exist",
	} {
		if err := Check(path, Dir); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Check(%s, Dir) = %v; want %q", path, err, says)
		}
	}
	for _, ok := range []string{dir, linked, filepath.Join(dir, "new"), filepath.Join(dir, "new") + "/"} {
		if err := Check(ok, Dir); err != nil {
			t.Errorf("Check(%s, Dir): %v", ok, err)
		}
	}
}

// TestOnlyItsOwnFilesAreReplaced: an existing regular file is replaced
// only when it starts as the command's own of that kind; a missing or
// empty one is free to write.
func TestOnlyItsOwnFilesAreReplaced(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(notes, []byte("# my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(junit, []byte(`<?xml version="1.0"?>`+"\n"+`<testsuites name="ringleader">`), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckOurs(notes, JUnitFile); err == nil || !strings.Contains(err.Error(), "not a JUnit XML ringleader wrote") {
		t.Errorf("a markdown file as --junit: %v, want a refusal naming what it is not", err)
	}
	for _, p := range []string{junit, empty, filepath.Join(dir, "missing.xml")} {
		if err := CheckOurs(p, JUnitFile); err != nil {
			t.Errorf("%s: %v, want it free to write", p, err)
		}
	}
	if err := CheckOurs(junit, HistoryFile); err == nil {
		t.Error("a JUnit file taken for a history")
	}
}
