package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/scenario"
)

const etcdCrash = `name: etcd-fake
cluster: {system: etcd, nodes: 3, options: {election_ms: 500}}
steps:
  - wait: stable
  - expect: {leader: any}
  - kill: leader
  - expect: {leader: any, within: 5s}
  - wait: stable
`

func TestSystemRunNamesTheServerAndMeasuresWhatItDoesNotClaim(t *testing.T) {
	res, err := Run(context.Background(), mustParse(t, etcdCrash), newFake(), Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Pass {
		t.Fatalf("failed: %v", res.Failures)
	}
	s := res.System
	if s == nil || s.Name != "etcd" || s.Version != "3.7.3" || s.Given["election_ms"] != "500" || s.ProbeIntervalMillis != 20 {
		t.Fatalf("system in results: %+v", s)
	}
	if strings.Join(s.Defaults, ",") != "heartbeat_ms,prevote" {
		t.Errorf("options left to the server: %v", s.Defaults)
	}
	if res.Options["heartbeat_ms"] != "100" || res.Options["election_ms"] != "500" {
		t.Errorf("options in force: %v", res.Options)
	}
	got := map[string]string{}
	for _, c := range res.Checkers {
		got[string(c.Checker)] = c.Expected
	}
	want := map[string]string{"agreement": "pass", "no-split-brain": Measured, "epoch-safety": "pass", "liveness": "pass"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("checker %s expected %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestSystemFaultItCannotTakeIsRefusedBeforeAnythingStarts(t *testing.T) {
	sc := mustParse(t, etcdCrash)
	sc.Steps = append(sc.Steps, scenario.FaultStep(chaos.Spec{Op: chaos.Clock, Params: chaos.ParamsOf(chaos.ClockRate.Of(2))}))
	b := newFake()
	_, err := Run(context.Background(), sc, b, Options{Store: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot take a clock fault") || !strings.Contains(err.Error(), "vDSO") {
		t.Fatalf("want the clock fault refused naming why, got %v", err)
	}
	if b.spec.Name != "" {
		t.Errorf("the cluster was started before the refusal")
	}
}

// tailingFake is a fake cluster that can show its members' logs, as the
// docker backend does.
type tailingFake struct{ *fakeBackend }

func (tailingFake) MemberLogTails(context.Context, int) string {
	return "member 1's log ends:\n    rafthttp: failed to dial 2 (no route to host)"
}

// Members that never elect are reported with the ends of their logs:
// what the server said is the only clue to why.
func TestSystemThatNeverElectsIsReportedWithItsMembersLogs(t *testing.T) {
	f := newFake()
	f.electionTime = time.Hour
	// The kill finds no leader to kill: the run ends there, an error.
	res, err := Run(context.Background(), mustParse(t, etcdCrash), tailingFake{f}, Options{Store: t.TempDir()})
	if err == nil || res == nil {
		t.Fatalf("err %v, res %v", err, res)
	}
	if res.Pass {
		t.Fatal("a cluster that never elected passed")
	}
	all := strings.Join(res.Failures, "\n")
	for _, want := range []string{"error: no etcd member ever led; member 1's log ends:", "failed to dial 2"} {
		if !strings.Contains(all, want) {
			t.Errorf("failures lack %q:\n%s", want, all)
		}
	}
	// A cluster that elected says nothing of its logs.
	res, _ = Run(context.Background(), mustParse(t, etcdCrash), tailingFake{newFake()}, Options{Store: t.TempDir()})
	if strings.Contains(strings.Join(res.Failures, "\n"), "log ends") {
		t.Errorf("logs shown for a cluster that elected: %v", res.Failures)
	}
}
