package check

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// noted records a lifecycle fault whose ok record carries chaos.Decide's
// note, as every backend writes it.
func (h *hist) noted(inv, ok int, op, note string, nodes ...election.NodeID) *hist {
	h.fault(inv, op, history.FaultInvoke, history.Fault{Nodes: nodes})
	return h.fault(ok, op, history.FaultOK, history.Fault{Nodes: nodes, Note: note})
}

// Killing the dead leader again, before anyone noticed it died, or
// pausing it again, changes nothing: one failover, not two, and the
// no-op does not cut the first one short.
func TestAFaultThatChangesNothingIsNoFailover(t *testing.T) {
	for _, c := range []struct{ op, again, note string }{
		{"kill", "kill", "no-op: node 5 is already down"},
		{"pause", "pause", "no-op: node 5 is already paused"},
		{"kill", "stop", "no-op: node 5 is already down"},
	} {
		h := stableFive()
		h.nodeFault(1000, 1000, c.op, 5)
		h.noted(1100, 1100, c.again, c.note, 5)
		h.lead(1600, 4, 2).follow(1600, 4, 2, 1, 2, 3)
		f := onlyFailover(t, Analyze(h.recs, opts(5)))
		if f.Op != c.op || !f.Recovered || f.Duration != 600*time.Millisecond {
			t.Errorf("%s then %s: failover %+v, want the first %s, recovered after 600ms", c.op, c.again, f, c.op)
		}
	}
}

// A kill of the dead leader and a live follower is a kill of the follower:
// the leader is not taken away a second time.
func TestAFaultPartlyLeftAloneCountsOnlyWhatItChanged(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "kill", 5)
	h.noted(1100, 1100, "kill", "left alone: node 5 is already down", 5, 3)
	h.lead(1600, 4, 2).follow(1600, 4, 2, 1, 2)
	an := Analyze(h.recs, opts(5))
	if len(an.Failovers) != 1 || an.Failovers[0].Invoked != at(1000) {
		t.Errorf("failovers = %+v, want only the first kill of 5", an.Failovers)
	}
}

// An unrecovered failover says so in its JSON: recovered false and null
// times, not a zero time that reads like an instant recovery.
func TestUnrecoveredFailoverJSONHasNullTimes(t *testing.T) {
	h := stableFive()
	h.nodeFault(1000, 1000, "kill", 5)
	h.nodeFault(1200, 1200, "kill", 4)
	fs := Analyze(h.recs, opts(5)).Failovers
	if len(fs) != 1 || fs[0].Recovered {
		t.Fatalf("failovers = %+v, want one unrecovered", fs)
	}
	b, err := json.Marshal(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"recovered":false`, `"at":null`, `"ms":null`, `"duration":null`, `"note":"no new leader agreed before the next fault`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back Failover
	if err := json.Unmarshal(b, &back); err != nil || back.Recovered || !back.At.IsZero() || back.Leader != 5 {
		t.Errorf("read back: %+v, %v", back, err)
	}
}
