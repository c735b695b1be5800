package sim

import (
	"errors"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

// A message cap is exact: a run may send as many messages as the cap, and
// the first one over it stops the run with the count at the cap, whatever
// the cap (a cap once was looked at every 4096 events, and let thousands
// through).
func TestMessageCapStopsAtTheCapExactly(t *testing.T) {
	ids := make([]election.NodeID, 64)
	for i := range ids {
		ids[i] = election.NodeID(len(ids) - i) // decreasing: the busiest ring
	}
	opts := Options{Algorithm: "test-maxid"}
	free, err := RunComplexityWithin(opts, ids, Limits{MaxMessages: -1})
	if err != nil {
		t.Fatal(err)
	}
	total := free.Messages + free.AnnounceMessages + free.MaintenanceMessages
	if total < 200 {
		t.Fatalf("the uncapped election sent %d messages; the test wants a busier one", total)
	}
	if _, err := RunComplexityWithin(opts, ids, Limits{MaxMessages: total}); err != nil {
		t.Errorf("cap %d, exactly the %d messages the election sends: %v", total, total, err)
	}
	for _, cap := range []int{1, 7, 100, total - 1} {
		c, err := RunComplexityWithin(opts, ids, Limits{MaxMessages: cap})
		var ce *CapError
		if !errors.As(err, &ce) || ce.Cap != "messages" {
			t.Errorf("cap %d of %d messages: error %v, want a messages CapError", cap, total, err)
			continue
		}
		sent := c.Messages + c.AnnounceMessages + c.MaintenanceMessages
		if sent != cap || ce.At.Sent != cap || c.Quiet {
			t.Errorf("cap %d: sent %d (error says %d), quiet %v; want exactly %d sent and not quiet", cap, sent, ce.At.Sent, c.Quiet, cap)
		}
	}
}
