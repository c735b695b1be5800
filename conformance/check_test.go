package conformance_test

import (
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/conformance"
	"github.com/ringleader-dev/ringleader/election"
)

func lookup(t *testing.T, name string) election.Algorithm {
	t.Helper()
	a, err := election.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCheckReportsTheClaimsOfAnHonestAlgorithmAsHolding: outside a Go
// test the same cases run and every claim holds, each case named with its
// outcome.
func TestCheckReportsTheClaimsOfAnHonestAlgorithmAsHolding(t *testing.T) {
	var seen []conformance.Progress
	r, err := conformance.Check(lookup(t, "test-maxid"), conformance.Options{Schedules: 20, Progress: func(p conformance.Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pass() || len(r.Modes) != 1 || r.Schedules != 20 || r.N != 5 || r.Seed != 1 {
		t.Fatalf("report %+v: want one passing mode, 20 schedules, 5 nodes, seed 1", r)
	}
	m := r.Modes[0]
	var cases []string
	for _, c := range m.Cases {
		cases = append(cases, c.Name+" "+string(c.Outcome))
	}
	want := []string{"FaultFreeElectionAgrees pass", "FaultFreeElectionMeetsFormula skip", "LeaderCrashIsReplaced pass", "RandomFaultSchedules pass", "ReplaysAreDeterministic pass"}
	if strings.Join(cases, ", ") != strings.Join(want, ", ") {
		t.Errorf("cases %v, want %v", cases, want)
	}
	var claims []string
	for _, c := range m.Claims {
		if !c.Holds || c.First != nil {
			t.Errorf("claim %s: holds %v, first %+v; want it held", c.Property, c.Holds, c.First)
		}
		claims = append(claims, string(c.Property))
	}
	if strings.Join(claims, ",") != "agreement,bully-max,liveness" {
		t.Errorf("claims %v, want agreement, bully-max, liveness", claims)
	}
	if m.Explored == nil || m.Explored.Schedules != 20 || m.Explore.Algorithm != "test-maxid" {
		t.Errorf("the mode keeps exploration %+v with result %v; want test-maxid's 20 schedules", m.Explore, m.Explored)
	}
	// Progress: each case as it starts, and every schedule of
	// RandomFaultSchedules.
	if len(seen) != 5+20 || seen[0].Case != conformance.FaultFreeElectionAgrees || seen[len(seen)-2] != (conformance.Progress{Quorum: election.NoQuorum, Case: conformance.RandomFaultSchedules, Done: 20, Total: 20}) ||
		seen[len(seen)-1].Case != conformance.ReplaysAreDeterministic {
		t.Errorf("progress %+v: want the five cases, with 20 schedules in the fourth", seen)
	}
}

// TestCheckNamesTheViolatedClaimAndItsFirstCounterexample: the algorithm
// that elects the lowest ID while claiming bully-max is reported with
// bully-max violated (first by the fault-free election, and on explored
// schedules with their seed and replay command) and the properties it has
// holding.
func TestCheckNamesTheViolatedClaimAndItsFirstCounterexample(t *testing.T) {
	r, err := conformance.Check(lookup(t, lowestWinsName), conformance.Options{Schedules: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Pass() {
		t.Fatal("the report passes an algorithm that elects the lowest ID while claiming bully-max")
	}
	m := r.Modes[0]
	for _, c := range m.Claims {
		switch c.Property {
		case check.BullyMax:
			if c.Holds || c.First == nil || c.FirstSchedule == nil || c.FailedSchedules != 10 {
				t.Fatalf("bully-max: %+v; want it violated in all 10 schedules, with a first failure and a first schedule", c)
			}
			if c.First.Case != conformance.FaultFreeElectionAgrees || !strings.Contains(c.First.Message, "claims bully-max") {
				t.Errorf("bully-max's first failure %+v: want the fault-free election's", c.First)
			}
			sc := c.FirstSchedule.Schedule
			if c.FirstSchedule.Case != conformance.RandomFaultSchedules || sc.Seed != 1 || !strings.Contains(sc.Replay, "--seed 1") || len(sc.Faults) == 0 {
				t.Errorf("bully-max's first schedule %+v (%+v): want schedule 0, seed 1, with its replay command and faults", c.FirstSchedule, sc)
			}
		default:
			if !c.Holds {
				t.Errorf("%s: violated (%+v), but the algorithm has it", c.Property, c.First)
			}
		}
	}
	if got := m.Violated(); len(got) != 1 || got[0] != check.BullyMax {
		t.Errorf("violated %v, want [bully-max]", got)
	}
	// A case that stops (Fatalf) is recorded and the next still runs.
	for _, c := range m.Cases {
		if c.Name == conformance.LeaderCrashIsReplaced && (c.Outcome != conformance.Fail || len(c.Failures) != 1 || c.Failures[0].Property != check.BullyMax) {
			t.Errorf("%s: %+v; want one bully-max failure", c.Name, c)
		}
	}
}

// TestCheckRefusesAQuorumModeTheAlgorithmDoesNotRun names the modes it
// does.
func TestCheckRefusesAQuorumModeTheAlgorithmDoesNotRun(t *testing.T) {
	_, err := conformance.Check(lookup(t, "test-maxid"), conformance.Options{Quorums: []election.QuorumMode{election.Majority}})
	if err == nil || !strings.Contains(err.Error(), "does not run with quorum majority (it runs with none (default))") {
		t.Fatalf("err %v, want the mode refused", err)
	}
}
