package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

func TestSystemClusterKeepsTheServersDefaults(t *testing.T) {
	s, err := Parse("etcd.yaml", []byte(`name: etcd-x
cluster: {system: etcd, nodes: 3, options: {election_ms: 500}, probe_interval: 10ms}
steps:
  - wait: stable
  - kill: leader
`))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cluster
	if c.System == nil || c.Algorithm != "etcd" || c.Quorum != election.Majority {
		t.Fatalf("cluster %+v", c)
	}
	if len(c.SystemOptions) != 1 || c.SystemOptions["election_ms"] != "500" {
		t.Errorf("given options %v: only election_ms was given", c.SystemOptions)
	}
	if c.Options["heartbeat_ms"] != "100" || c.Options["prevote"] != "true" {
		t.Errorf("options in force %v lack the server's defaults", c.Options)
	}
	if c.Timing.Suspicion != 500*time.Millisecond || c.Timing.Heartbeat != 100*time.Millisecond {
		t.Errorf("timing %v", c.Timing)
	}
	if time.Duration(c.System.Probe.Interval) != 10*time.Millisecond {
		t.Errorf("probe interval %v", c.System.Probe.Interval)
	}
	back, err := Format(s, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("again.yaml", back)
	if err != nil {
		t.Fatalf("%v\n%s", err, back)
	}
	if again.Cluster.SystemOptions["election_ms"] != "500" || len(again.Cluster.SystemOptions) != 1 {
		t.Errorf("formatted and read back: %v\n%s", again.Cluster.SystemOptions, back)
	}
}

func TestSystemRefusesBeforeAnythingStarts(t *testing.T) {
	for src, want := range map[string]string{
		"cluster: {system: etcd, nodes: 3}\nsteps:\n  - wait: stable\n  - clock: {target: leader, rate: 2}\n": "x.yaml:6: steps[2].clock: system etcd cannot take a clock fault: etcd is a Go program",
		"cluster: {system: etcd, algorithm: raft, nodes: 3}\nsteps: [wait: stable]\n":                         "cluster.system",
		"cluster: {system: etcd, nodes: 3, timing: {heartbeat: 1s}}\nsteps: [wait: stable]\n":                 "cluster.timing",
		"cluster: {system: etcd, nodes: 3, options: {election: 5}}\nsteps: [wait: stable]\n":                  "cluster.options.election",
		"cluster: {system: etcd, nodes: 3, quorum: none}\nsteps: [wait: stable]\n":                            "cluster.quorum",
		"cluster: {system: zookeeper, nodes: 3}\nsteps: [wait: stable]\n":                                     "unknown system",
		"cluster: {algorithm: raft, nodes: 3, probe_interval: 5ms}\nsteps: [wait: stable]\n":                  "cluster.probe_interval",
	} {
		_, err := Parse("x.yaml", []byte("name: x\ndescription: d\n"+src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error with %q, got %v", src, want, err)
		}
	}
}
