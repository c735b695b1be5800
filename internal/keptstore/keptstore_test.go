package keptstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeT is a test whose failure and clean-ups For's caller controls.
type fakeT struct {
	testing.TB
	failed   bool
	cleanups []func()
	logs     []string
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) Failed() bool              { return f.failed }
func (f *fakeT) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Logf(s string, a ...any)   { f.logs = append(f.logs, fmt.Sprintf(s, a...)) }
func (f *fakeT) Errorf(s string, a ...any) { f.failed = true; f.Logf(s, a...) }
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestAFailedTestKeepsItsRunsAndAPassingOneRemovesThem(t *testing.T) {
	t.Setenv("RINGLEADER_STORE", "")
	t.Setenv("TMPDIR", t.TempDir())
	for _, failed := range []bool{false, true} {
		ft := &fakeT{TB: t}
		dir := For(ft)
		if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ft.failed = failed
		ft.end()
		_, err := os.Stat(dir)
		switch {
		case failed && err != nil:
			t.Errorf("a failed test's runs were removed: %v", err)
		case failed && (len(ft.logs) != 1 || !strings.Contains(ft.logs[0], dir)):
			t.Errorf("a failed test logged %q; want the kept directory named", ft.logs)
		case !failed && !os.IsNotExist(err):
			t.Errorf("a passing test's runs are still in %s (%v)", dir, err)
		}
	}
}

func TestRingleaderStoreKeepsEveryRun(t *testing.T) {
	want := t.TempDir()
	t.Setenv("RINGLEADER_STORE", want)
	ft := &fakeT{TB: t}
	if got := For(ft); got != want || len(ft.cleanups) != 0 {
		t.Fatalf("For = %s with %d clean-ups; want %s and none", got, len(ft.cleanups), want)
	}
}
