package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/system"
)

func mustSystem(t *testing.T, name string) *system.System {
	t.Helper()
	s, err := system.Lookup(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A raft scenario, as the explorer saves one, runs on etcd with its
// timing as etcd's heartbeat and election timeout and its pre-vote as
// etcd's; its steps, checkers and verdicts stay.
func TestOnSystemMapsRaftTimingAndOptionsToEtcd(t *testing.T) {
	raft, err := Load("../scenarios/raft-follower-rejoins-no-prevote.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on, err := OnSystem(raft, mustSystem(t, "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	c := on.Cluster
	if c.System == nil || c.Algorithm != "etcd" || len(c.IDs) != 5 {
		t.Fatalf("cluster %+v", c)
	}
	want := map[string]string{"heartbeat_ms": "100", "election_ms": "500", "prevote": "false"}
	for k, v := range want {
		if c.SystemOptions[k] != v {
			t.Errorf("etcd option %s = %q, want %q (given %v)", k, c.SystemOptions[k], v, c.SystemOptions)
		}
	}
	if c.Timing.Heartbeat != 100*time.Millisecond || c.Timing.Suspicion != 500*time.Millisecond {
		t.Errorf("timing %+v, want the raft scenario's", c.Timing)
	}
	if len(on.Steps) != len(raft.Steps) || on.Name != raft.Name {
		t.Errorf("steps or name changed: %d steps, %q", len(on.Steps), on.Name)
	}
	if raft.Cluster.System != nil {
		t.Error("the model scenario was changed in place")
	}
	m := Mapping(raft, on)
	for _, w := range []string{"raft {heartbeat 100ms, suspicion 500ms", "etcd 3.7.3 {election_ms=500, heartbeat_ms=100, prevote=false}", "not mapped:"} {
		if !strings.Contains(m, w) {
			t.Errorf("mapping %q lacks %q", m, w)
		}
	}
}

// What has no counterpart on the server is refused, saying what.
func TestOnSystemRefusesWhatTheServerCannotRun(t *testing.T) {
	etcd := mustSystem(t, "etcd")
	for _, tc := range []struct{ name, cluster, step, want string }{
		{"check-quorum off", "{algorithm: raft, nodes: 3, options: {check_quorum: false}}", "kill: leader", "check_quorum: true"},
		{"too short a timeout", "{algorithm: raft, nodes: 3, timing: {heartbeat: 100ms, suspicion: 300ms}}", "kill: leader", "under 5 heartbeat intervals"},
		{"not a whole millisecond", "{algorithm: raft, nodes: 3, timing: {heartbeat: 100500us, suspicion: 600ms}}", "kill: leader", "whole milliseconds"},
		{"another algorithm", "{algorithm: bully, nodes: 3}", "kill: leader", "modelled by algorithm raft"},
		{"a clock fault", "{algorithm: raft, nodes: 3}", "clock: {target: 1, rate: 2}", "x.yaml:5: steps[2].clock: system etcd cannot take a clock fault"},
	} {
		sc, err := Parse("x.yaml", []byte("name: x\ncluster: "+tc.cluster+"\nsteps:\n  - wait: stable\n  - "+tc.step+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = OnSystem(sc, etcd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	sc, _ := Parse("x.yaml", []byte("name: x\ncluster: {algorithm: raft, nodes: 3}\nsteps:\n  - kill: leader\n"))
	if _, err := OnSystem(sc, mustSystem(t, "nats-jetstream")); err == nil || !strings.Contains(err.Error(), "no model algorithm: NATS's meta group runs NATS's own raft") {
		t.Errorf("nats: %v", err)
	}
}

// The simulator names the model cluster a system scenario could run as.
func TestModelClusterOfEtcdParsesAsRaft(t *testing.T) {
	sc, err := Load("../scenarios/etcd-follower-rejoins-no-prevote.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := sc.Cluster.System.ModelCluster(len(sc.Cluster.IDs), sc.Cluster.Options)
	cluster, ok := strings.CutPrefix(m, "its model is cluster: ")
	if !ok {
		t.Fatalf("model %q", m)
	}
	model, err := Parse("model.yaml", []byte("name: m\ncluster: "+cluster+"\nsteps:\n  - wait: stable\n"))
	if err != nil {
		t.Fatalf("%s: %v", cluster, err)
	}
	back, err := OnSystem(model, sc.Cluster.System)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sc.Cluster.Options {
		if back.Cluster.Options[k] != v {
			t.Errorf("model and back: %s %s, want %s", k, back.Cluster.Options[k], v)
		}
	}
}
