package node

import (
	"os"
	"strings"
	"testing"
)

// The durable state file is renamed over at every vote: a link (or
// anything else that is not a regular file) in its place is refused at
// start, and the link's target is left alone.
func TestDurableStateRefusesALinkInItsPlace(t *testing.T) {
	dir := t.TempDir()
	target := dir + "/elsewhere"
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, durableFile(dir, 3)); err != nil {
		t.Fatal(err)
	}
	_, err := loadDurable(dir, 3)
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("loadDurable with a link for its file: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}
