package conformance_test

import (
	"os/exec"
	"strings"
	"testing"
)

// worlds are the packages that drive or judge machines. The election core
// is what they test, so it may import none of them, not even in its tests:
// a test that needs a world lives here, in conformance/, or in step.
var worlds = []string{"sim", "explore", "step", "check", "chaos", "docker", "history", "harness", "scenario"}

// TestElectionCoreImportsNoWorld fails if any package under election/, or
// any of its tests, depends on a world package.
func TestElectionCoreImportsNoWorld(t *testing.T) {
	const module = "github.com/ringleader-dev/ringleader/"
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}", "../election/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(deps) < 10 {
		t.Fatalf("go list named %d packages, too few to be election/'s dependencies: %s", len(deps), out)
	}
	for _, d := range deps {
		p, _, _ := strings.Cut(d, " ") // a test variant: "pkg [pkg.test]"
		for _, w := range worlds {
			if p == module+w || strings.HasPrefix(p, module+w+"/") {
				t.Errorf("election/ depends on %s (%s): the election core must not import a world", w, d)
			}
		}
	}
}
