package neigh

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAllReadsWhatWriteWrote(t *testing.T) {
	dir := t.TempDir()
	want := map[Threshold]int{Min: 128, Soft: 512, Hard: 1024}
	for th, v := range want {
		if err := Write(dir, th, v); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ReadAll(dir); err != nil || !maps.Equal(got, want) {
		t.Fatalf("ReadAll = %v, %v; want %v", got, err, want)
	}
}

func TestReadAllFailsOnAMissingOrGarbledLimit(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadAll(dir); err == nil {
		t.Fatalf("ReadAll of an empty directory = %v; want an error", got)
	}
	for _, th := range All {
		Write(dir, th, 1)
	}
	os.WriteFile(filepath.Join(dir, string(Soft)), []byte("lots\n"), 0o644)
	if _, err := ReadAll(dir); err == nil || !strings.Contains(err.Error(), "gc_thresh2") {
		t.Fatalf("a garbled gc_thresh2: %v; want an error naming it", err)
	}
}
