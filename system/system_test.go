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
	// What etcd 3.7.3 answered on /debug/vars (memstats left out).
	a, err := etcd.Probe.Read([]byte(`{"cmdline":["/etcd"],"raft.status":{"id":"111","term":3,"vote":"222","commit":4,"lead":"222","raftState":"StateFollower","applied":4,"progress":{},"leadtransferee":"0"}}`))
	if err != nil || a.ID != "111" || a.Leader != "222" || a.Term != 3 {
		t.Fatalf("etcd: %+v %v", a, err)
	}
	ids := map[string]election.NodeID{"111": 1, "222": 2}
	v, err := etcd.Probe.View(a, 1, ids)
	if err != nil || v != (election.View{Leader: 2, Epoch: 3, Role: election.Follower}) {
		t.Errorf("etcd view %v %v", v, err)
	}
	a, _ = etcd.Probe.Read([]byte(`{"raft.status":{"id":"111","term":4,"lead":"0","raftState":"StatePreCandidate"}}`))
	if v, _ := etcd.Probe.View(a, 1, ids); v.Leader != election.None || v.Role != election.Candidate || v.Epoch != 4 {
		t.Errorf("lead 0 reads %v", v)
	}
	a, _ = etcd.Probe.Read([]byte(`{"raft.status":{"id":"111","term":4,"raftState":"StateFollower"}}`))
	if v, _ := etcd.Probe.View(a, 1, ids); v.Leader != election.None || v.Role != election.Follower {
		t.Errorf("a leader left out reads %v", v)
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
		"no id":       `{"raft.status":{"lead":"1"}}`,
		"object lead": `{"raft.status":{"id":"1","lead":{"a":1},"term":1}}`,
		"object id":   `{"raft.status":{"id":{"x":1},"lead":"1","term":1}}`,
		"bad term":    `{"raft.status":{"id":"1","lead":"1","term":-3}}`,
		"huge":        `{"raft.status":{"id":"` + strings.Repeat("9", MaxAnswer) + `"}}`,
		"long string": `{"raft.status":{"id":"` + strings.Repeat("x", 300) + `","lead":"1","term":1}}`,
	} {
		if a, err := etcd.Probe.Read([]byte(body)); err == nil {
			t.Errorf("%s: adopted %+v", name, a)
		} else if len(err.Error()) > 300 {
			t.Errorf("%s: error not bounded (%d bytes)", name, len(err.Error()))
		}
	}
	a, _ := etcd.Probe.Read([]byte(`{"raft.status":{"id":"1","lead":"999","term":1}}`))
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

// A model names the server's options its settings map to; one that names
// an option the system lacks, or maps without naming the model, is
// refused with the field.
func TestModelFieldsAreChecked(t *testing.T) {
	base := "name: s\nversion: 1\nimage: s:1\npeer: x\ntiming: {heartbeat: 1s, election: 4s}\nprobe: {port: 80, path: /, id: id, leader: leader}\n" +
		"options:\n  - {name: e, kind: int, default: \"10\", args: [\"--e={value}\"]}\n"
	for _, tc := range []struct{ model, want string }{
		{"model: {algorithm: raft, heartbeat: e, election: nope}", `model.election: "nope": want the name of an int option`},
		{"model: {algorithm: raft, heartbeat: e, election: e, options: {prevote: pv}}", `model.options.prevote: "pv" is not an option of system s`},
		{"model: {heartbeat: e}", "model.algorithm: missing"},
	} {
		_, err := Parse("s.yaml", []byte(base+tc.model+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.model, err, tc.want)
		}
	}
	if _, err := Parse("s.yaml", []byte(base+"model: {note: its own protocol}\n")); err != nil {
		t.Errorf("a model note alone: %v", err)
	}
}
