package program_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProgramImportsOnlyTheCore: package program is a machine, as the
// algorithms are; of this module it may import the election core only,
// so that every runtime (the simulator, a node) can host a program, and
// internal/cpupin, a leaf that imports nothing of the module (where a
// caller pinned to a CPU finds the processes started there).
func TestProgramImportsOnlyTheCore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/ringleader-dev/ringleader"
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, module+"/") && d != module+"/program" && d != module+"/election" && d != module+"/internal/cpupin" {
			t.Errorf("program depends on %s: only the election core (and internal/cpupin) is allowed", d)
		}
	}
}
