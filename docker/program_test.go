package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramCommandSaysWhereAProgramRunsInItsImage: a static executable
// runs from /program/NAME; with a runtime image, the arguments that name
// files here are copied to /program/ and the rest stay as given; a
// script without a runtime image is refused, saying why.
func TestProgramCommandSaysWhereAProgramRunsInItsImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bully-go")
	build := exec.Command("go", "build", "-o", bin, "../examples/bully-go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if got, err := ProgramCommand([]string{bin, "--flag", "x"}, ""); err != nil || got != "/program/bully-go --flag x" {
		t.Errorf("static: %q, %v", got, err)
	}
	script := filepath.Join(dir, "elect.py")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env python3\nprint()\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := ProgramCommand([]string{"python3", "-u", script, "fast"}, "ringleader-python:bookworm"); err != nil || got != "python3 -u /program/elect.py fast" {
		t.Errorf("with a runtime image: %q, %v", got, err)
	}
	if _, err := ProgramCommand([]string{script}, ""); err == nil || !strings.Contains(err.Error(), "is not a static executable") {
		t.Errorf("a script alone: %v; want it refused as not a static executable", err)
	}
}
