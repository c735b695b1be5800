package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
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

// A run past its memory budget stops with a memory CapError instead of
// growing until the kernel kills the process: Bully's start, every node
// electing at once, sends n² messages in one instant, and the budget is
// looked at between sends, not only between events.
func TestMemoryBudgetStopsARunBeforeTheMachineRunsOut(t *testing.T) {
	ids := election.FirstIDs(300) // 90,000 messages at the start
	// A budget New admits (MinNodeBytes a node) that the process, a
	// runtime of some megabytes, is past from the start.
	budget := int64(len(ids)) * MinNodeBytes
	opts := Options{Algorithm: "bully", FaultFree: true, MaxMemory: budget}
	c, err := RunComplexityWithin(opts, ids, Limits{})
	var ce *CapError
	if !errors.As(err, &ce) || ce.Cap != "memory" {
		t.Fatalf("budget of %d bytes: error %v, want a memory CapError", budget, err)
	}
	if ce.Limit != budget || ce.Held <= budget || c.Quiet {
		t.Errorf("memory CapError %+v, quiet %v: want the budget, what the process held, and not quiet", ce, c.Quiet)
	}
	if sent := ce.At.Sent; sent > memoryCheckEvery {
		t.Errorf("stopped after %d messages; want the first look, after %d, to stop it", sent, memoryCheckEvery)
	}
	for _, want := range []string{"stopped at the memory budget of 75KiB", "before the machine ran out"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// Without a budget the same election runs to its end.
	opts.MaxMemory = NoMemoryLimit
	if c, err := RunComplexityWithin(opts, ids, Limits{}); err != nil || !c.Agreed {
		t.Errorf("no budget: %+v, %v; want an agreed election", c, err)
	}
}

// The explorer's way in: a fixed wait (RunFor) on a simulator past its
// budget stops, and Err says why; the next run on it (Reset) starts clean.
func TestMemoryBudgetStopsAWaitAndResetClearsIt(t *testing.T) {
	s, err := New(Options{Algorithm: "bully", Members: election.FirstIDs(200), MaxMemory: 200 * MinNodeBytes}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(time.Second)
	var ce *CapError
	if !errors.As(s.Err(), &ce) || ce.Cap != "memory" {
		t.Fatalf("Err after RunFor past the budget: %v, want a memory CapError", s.Err())
	}
	if s.Time().Sub(history.SimOrigin) >= time.Second {
		t.Errorf("the clock reached %v: a stopped run must not claim the wait", s.Time().Sub(history.SimOrigin))
	}
	s.budget = 0
	if err := s.Reset(2, nil); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(time.Second)
	if err := s.Err(); err != nil {
		t.Errorf("after Reset without a budget: %v", err)
	}
}

// New refuses a cluster that cannot fit in its budget at MinNodeBytes a
// node before it allocates anything; CheckNodes says so for a count, so a
// caller can refuse before it lays out the IDs.
func TestClustersBeyondTheBudgetAreRefusedBeforeTheyAreBuilt(t *testing.T) {
	_, err := New(Options{Algorithm: "bully", Members: election.FirstIDs(10), MaxMemory: 9 * MinNodeBytes}, nil)
	if err == nil || !strings.Contains(err.Error(), "over the memory budget") {
		t.Errorf("10 nodes in a budget of 9 nodes' worth: %v, want a refusal naming the budget", err)
	}
	if _, err := New(Options{Algorithm: "bully", Members: election.FirstIDs(10), MaxMemory: 10 * MinNodeBytes}, nil); err != nil {
		t.Errorf("10 nodes in a budget of 10 nodes' worth: %v", err)
	}
	if err := CheckNodes(100_000_000_000, 0); DefaultMaxMemory() > 0 && err == nil {
		t.Errorf("10¹¹ nodes in the default budget of %d bytes: not refused", DefaultMaxMemory())
	}
	if err := CheckNodes(100_000_000_000, NoMemoryLimit); err != nil {
		t.Errorf("no budget: %v", err)
	}
}

func TestParseMaxMemory(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "0": 0, "none": NoMemoryLimit, "8GiB": 8 << 30, "512m": 512 << 20, "512MiB": 512 << 20, "1000000": 1000000,
	} {
		if got, err := ParseMaxMemory(in); err != nil || got != want {
			t.Errorf("ParseMaxMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "-5", "-1GiB", "8 parsecs"} {
		if _, err := ParseMaxMemory(in); err == nil || !strings.Contains(err.Error(), "--max-memory") {
			t.Errorf("ParseMaxMemory(%q): %v, want an error naming --max-memory", in, err)
		}
	}
}
