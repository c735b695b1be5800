// Package keptstore gives a test that runs scenarios a store directory
// that outlives the test when it fails: a run that failed once in twenty
// on a loaded machine is diagnosed from its history or not at all, and
// t.TempDir would delete it with the test.
package keptstore

import (
	"os"
	"testing"
)

// For is RINGLEADER_STORE when set (to keep every run for inspection),
// else a directory of its own under the system's temporary directory that
// is removed when t passes and kept, with its path logged, when t fails.
func For(t testing.TB) string {
	t.Helper()
	if s := os.Getenv("RINGLEADER_STORE"); s != "" {
		return s
	}
	dir, err := os.MkdirTemp("", "ringleader-test-runs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept the run directories of this failed test in %s", dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the run directories: %v", err)
		}
	})
	return dir
}
