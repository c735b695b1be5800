package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

func TestShapeMismatchSaysHow(t *testing.T) {
	base := ClusterSpec{Algorithm: "bully", Members: []election.NodeID{1, 2, 3}, Timing: election.Timing{Heartbeat: 100 * time.Millisecond}}
	if why := ShapeMismatch(base, base); why != "" {
		t.Fatalf("identical: %s", why)
	}
	other := base
	other.Quorum, other.Members, other.Algorithm = election.Majority, []election.NodeID{1, 2, 3, 4}, "ring"
	why := ShapeMismatch(base, other)
	for _, w := range []string{"runs bully, the scenario wants ring", "quorum", "[1,2,3,4]"} {
		if !strings.Contains(why, w) {
			t.Errorf("%q does not say %q", why, w)
		}
	}
}
