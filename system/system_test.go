package system

import (
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
)

func TestBuiltinsParse(t *testing.T) {
	for _, name := range Builtins() {
		s, err := Lookup(name, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name != name || s.Version == "" || s.Probe.Interval != Duration(DefaultInterval) {
			t.Errorf("%s: %+v", name, s)
		}
		if s.Refusal("clock") == "" {
			t.Errorf("%s takes clock faults; a Go server cannot", name)
		}
	}
	if _, err := Lookup("zookeeper", ""); err == nil || !strings.Contains(err.Error(), "etcd") {
		t.Errorf("unknown system: %v", err)
	}
}

func TestEtcdCommandLineLeavesDefaultsToTheServer(t *testing.T) {
	s, _ := Lookup("etcd", "")
	all := []Member{{1, "node1", "10.0.0.2"}, {2, "node2", "10.0.0.3"}}
	got := strings.Join(s.CommandLine(all[1], all, "run1", election.Options{"prevote": "false"}), " ")
	for _, want := range []string{"--name=m2", "--initial-cluster=m1=http://10.0.0.2:2380,m2=http://10.0.0.3:2380", "--advertise-client-urls=http://10.0.0.3:2379", "--pre-vote=false", "--initial-cluster-token=run1"} {
		if !strings.Contains(got, want) {
			t.Errorf("command line lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "--election-timeout") {
		t.Errorf("an option not given is passed: %s", got)
	}
	hb, el, err := s.Timings(election.Options{"election_ms": "500"})
	if err != nil || hb.Milliseconds() != 100 || el.Milliseconds() != 500 {
		t.Errorf("timings %v %v %v", hb, el, err)
	}
}

func TestProbeReadsEtcdAndNATS(t *testing.T) {
	etcd, _ := Lookup("etcd", "")
	a, err := etcd.Probe.Read([]byte(`{"header":{"cluster_id":"1","member_id":"111","revision":"1","raft_term":"3"},"version":"3.7.3","leader":"222","raftIndex":"8","raftTerm":"3"}`))
	if err != nil || a.ID != "111" || a.Leader != "222" || a.Term != 3 {
		t.Fatalf("etcd: %+v %v", a, err)
	}
	ids := map[string]election.NodeID{"111": 1, "222": 2}
	v, err := etcd.Probe.View(a, 1, ids)
	if err != nil || v != (election.View{Leader: 2, Epoch: 3, Role: election.Follower}) {
		t.Errorf("etcd view %v %v", v, err)
	}
	a, _ = etcd.Probe.Read([]byte(`{"header":{"member_id":"111"},"raftTerm":"4"}`)) // protobuf's JSON leaves out leader 0
	if v, _ := etcd.Probe.View(a, 1, ids); v.Leader != election.None || v.Role != election.Undecided {
		t.Errorf("leader 0 reads %v", v)
	}
	nats, _ := Lookup("nats-jetstream", "")
	a, err = nats.Probe.Read([]byte(`{"$SYS":{"_meta_":{"id":"S1Nunr6R","state":"LEADER","leader":"S1Nunr6R","term":7}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := nats.Probe.View(a, 3, map[string]election.NodeID{"S1Nunr6R": 3}); err != nil || v != (election.View{Leader: 3, Epoch: 7, Role: election.Leader}) {
		t.Errorf("nats view %v %v", v, err)
	}
}

func TestProbeRefusesGarbage(t *testing.T) {
	etcd, _ := Lookup("etcd", "")
	for name, body := range map[string]string{
		"not json":    "<html>",
		"array":       "[1,2]",
		"no id":       `{"leader":"1"}`,
		"object lead": `{"header":{"member_id":"1"},"leader":{"a":1},"raftTerm":"1"}`,
		"object id":   `{"header":{"member_id":{"x":1}},"leader":"1","raftTerm":"1"}`,
		"bad term":    `{"header":{"member_id":"1"},"leader":"1","raftTerm":"-3"}`,
		"huge":        `{"header":{"member_id":"` + strings.Repeat("9", MaxAnswer) + `"}}`,
		"long string": `{"header":{"member_id":"` + strings.Repeat("x", 300) + `"},"leader":"1","raftTerm":"1"}`,
	} {
		if a, err := etcd.Probe.Read([]byte(body)); err == nil {
			t.Errorf("%s: adopted %+v", name, a)
		} else if len(err.Error()) > 300 {
			t.Errorf("%s: error not bounded (%d bytes)", name, len(err.Error()))
		}
	}
	a, _ := etcd.Probe.Read([]byte(`{"header":{"member_id":"1"},"leader":"999","raftTerm":"1"}`))
	if _, err := etcd.Probe.View(a, 1, map[string]election.NodeID{"1": 1}); err == nil {
		t.Error("a leader no member claimed was adopted")
	}
}

func TestParseRefusesWithTheField(t *testing.T) {
	for bad, want := range map[string]string{
		"name: x\nimage: i\nversion: 1\nprobe: {port: 1, path: /, id: a, leader: b}\nbogus: 1\n":                 "bogus",
		"name: x\nimage: i\nversion: 1\nprobe: {port: 0, path: /, id: a, leader: b}\n":                           "probe.port",
		"name: x\nimage: i\nversion: 1\ncommand: [\"{nope}\"]\nprobe: {port: 1, path: /, id: a, leader: b}\n":    "{nope}",
		"name: x\nimage: i\nversion: 1\nprobe: {port: 1, path: /, id: a, leader: b}\nclaims: [bully-max]\n":      "claims",
		"name: x\nimage: i\nversion: 1\nprobe: {port: 1, path: /, id: a, leader: b, interval: fast}\n":           "interval",
		"name: x\nimage: i\nversion: 1\ntiming: {election: nope}\nprobe: {port: 1, path: /, id: a, leader: b}\n": "timing.election",
	} {
		_, err := Parse("my.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "my.yaml") {
			t.Errorf("%q: want an error naming %s, got %v", bad, want, err)
		}
	}
}
