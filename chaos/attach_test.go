package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
)

func TestShapeMismatchSaysHow(t *testing.T) {
	base := ClusterSpec{Algorithm: "bully", Members: []election.NodeID{1, 2, 3}, Timing: election.Timing{Heartbeat: 100 * time.Millisecond}}
	if why := ShapeMismatch(base, base); why != "" {
		t.Fatalf("identical: %s", why)
	}
	// Not given is the algorithm's default: bully's is none.
	none := base
	none.Quorum = election.NoQuorum
	if why := ShapeMismatch(none, base); why != "" {
		t.Fatalf("quorum none against quorum left out (bully's default): %s", why)
	}
	opts := base
	opts.Options = election.Options{"prevote": "false"}
	if why := ShapeMismatch(base, opts); !strings.Contains(why, `its options are "", the scenario's "prevote=false"`) {
		t.Errorf("options differ, but: %q", why)
	}
	other := base
	other.Quorum, other.Members, other.Algorithm = election.Majority, []election.NodeID{1, 2, 3, 4}, "ring"
	why := ShapeMismatch(base, other)
	for _, w := range []string{"runs bully, the scenario wants ring", "quorum", "[1,2,3,4]"} {
		if !strings.Contains(why, w) {
			t.Errorf("%q does not say %q", why, w)
		}
	}
	// A cluster of programs is named by its program.
	prog := base
	prog.Algorithm, prog.Program = "program-x", []string{"/program/x", "--fast"}
	if why := ShapeMismatch(prog, base); !strings.Contains(why, `runs the program "/program/x --fast" (program-x), the scenario wants bully`) {
		t.Errorf("a program against bully: %q", why)
	}
}
