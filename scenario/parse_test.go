package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// The parser looks algorithms up in the registry; these stand-ins keep the
// package's tests independent of the real algorithms.
func init() {
	stub := func(cfg election.Config) (election.Machine, error) { return nil, errors.New("stub") }
	claims := func(election.QuorumMode) []election.Property { return nil }
	election.Register(election.Algorithm{Name: "stub-bully", New: stub, Claims: claims, Quorums: []election.QuorumMode{election.NoQuorum, election.Majority}})
	election.Register(election.Algorithm{Name: "stub-ring", New: stub, Claims: claims})
}

const good = `name: bully-leader-crash
description: kill the leader
cluster:
  algorithm: stub-bully
  nodes: 5
  quorum: majority
  timing: {heartbeat: 50ms, suspicion: 300ms}
steps:
  - wait: stable
  - expect: {leader: 5, within: 2s}
  - kill: leader
  - wait: stable
    within: 3s
  - expect: {leader: highest, on: [1, 2]}
  - restart: down
  - partition: {groups: [[1,2,3],[4,5]]}
  - expect: {leaders: [3, 5], on: all}
  - partition: {shape: isolate, target: leader}
  - partition: {shape: bridge}
  - partition: {cut: [1, 2]}
  - partition: {one-way: [5, 1]}
  - heal
  - heal: {}
  - loss: {target: all, percent: 20}
  - delay: {target: [1, 2], ms: 100, jitter_ms: 10}
  - pause: 3
  - resume: paused
  - wait: 1500ms
  - expect: {leader: none, on: [4, 5], for: 2s}
repeat: 3
checkers: [agreement, no-split-brain]
expect_checkers: {no-split-brain: fail}
liveness_bound: 4s
`

func TestParseReadsEveryStepForm(t *testing.T) {
	s, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "bully-leader-crash" || s.Repeat != 3 || s.LivenessBound != 4*time.Second {
		t.Errorf("header: got name %q repeat %d liveness %v", s.Name, s.Repeat, s.LivenessBound)
	}
	c := s.Cluster
	if len(c.IDs) != 5 || c.IDs[4] != 5 || c.Quorum != election.Majority {
		t.Errorf("cluster: %+v", c)
	}
	if c.Timing.Heartbeat != 50*time.Millisecond || c.Timing.Suspicion != 300*time.Millisecond || c.Timing.Answer != election.DefaultTiming.Answer {
		t.Errorf("timing defaults not filled: %+v", c.Timing)
	}
	if len(s.Steps) != 20 {
		t.Fatalf("got %d steps, want 20", len(s.Steps))
	}
	want := []string{
		"wait stable (within 10s)",
		"expect leader 5 on all-live within 2s",
		"kill leader",
		"wait stable (within 3s)",
		"expect leader highest on [1,2] within 5s",
		"restart down",
		"partition [1,2,3]|[4,5]",
		"expect leaders [3,5] on all within 5s",
		"partition isolate leader",
		"partition bridge",
		"partition cut 1-2",
		"partition one-way 5->1",
		"heal",
		"heal",
		"loss 20% all",
		"delay 100ms±10ms [1,2]",
		"pause [3]",
		"resume paused",
		"wait 1.5s",
		"expect leader none on [4,5] within 5s for 2s",
	}
	for i, w := range want {
		if got := s.Steps[i].String(); got != w {
			t.Errorf("step %d: got %q, want %q", i+1, got, w)
		}
	}
	if s.Steps[2].Line != 11 {
		t.Errorf("kill step line: got %d, want 11", s.Steps[2].Line)
	}
	if s.Expected("no-split-brain") || !s.Expected("agreement") {
		t.Errorf("expected verdicts wrong: %v", s.ExpectCheckers)
	}
}

func TestParseErrorsNameFileLineFieldAndWhatIsValid(t *testing.T) {
	base := "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps:\n"
	cases := []struct {
		name, yaml string
		// want is file:line: field: and a fragment of the message.
		want, fragment string
	}{
		{"unknown top-level field", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nstepz: []\n", "bad.yaml:3: stepz:", "valid: name, description"},
		{"missing steps", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\n", "bad.yaml:1: steps:", "missing"},
		{"bad name", "name: Bully Crash\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n", "bad.yaml:1: name:", "lower-case"},
		{"unknown algorithm", "name: x\ncluster: {algorithm: bullyy, nodes: 3}\nsteps: [heal]\n", "bad.yaml:2: cluster.algorithm:", "stub-bully"},
		{"quorum unsupported", "name: x\ncluster: {algorithm: stub-ring, nodes: 3, quorum: majority}\nsteps: [heal]\n", "bad.yaml:2: cluster.quorum:", "does not run with quorum majority (it runs with none)"},
		{"bad quorum word", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, quorum: most}\nsteps: [heal]\n", "bad.yaml:2: cluster.quorum:", "none or majority"},
		{"ids count mismatch", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, ids: [1, 2]}\nsteps: [heal]\n", "bad.yaml:2: cluster.ids:", "one ID per node"},
		{"duplicate id", "name: x\ncluster: {algorithm: stub-bully, ids: [1, 2, 2]}\nsteps: [heal]\n", "bad.yaml:2: cluster.ids:", "listed twice"},
		{"timing without unit", "name: x\ncluster:\n  algorithm: stub-bully\n  nodes: 3\n  timing: {heartbeat: 100}\nsteps: [heal]\n", "bad.yaml:5: cluster.timing.heartbeat:", "like 500ms"},
		{"suspicion below heartbeat", "name: x\ncluster:\n  algorithm: stub-bully\n  nodes: 3\n  timing: {heartbeat: 1s, suspicion: 500ms}\nsteps: [heal]\n", "bad.yaml:5: cluster.timing:", "must be longer"},
		{"unknown op", base + "  - kil: leader\n", "bad.yaml:4: steps[1].kil:", "valid: within, wait"},
		{"two ops in a step", base + "  - kill: leader\n    heal: {}\n", "bad.yaml:4: steps[1]:", "give each its own"},
		{"unknown target", base + "  - heal\n  - kill: leadr\n", "bad.yaml:5: steps[2].kill:", "valid targets: leader, follower"},
		{"target not a member", base + "  - kill: 7\n", "bad.yaml:4: steps[1].kill:", "not in the cluster (members: [1,2,3])"},
		{"restart the leader", base + "  - restart: leader\n", "bad.yaml:4: steps[1].restart:", "valid targets: down, one, all"},
		{"wait garbage", base + "  - wait: forever\n", "bad.yaml:4: steps[1].wait:", "stable or a duration"},
		{"within on a fixed wait", base + "  - wait: 2s\n    within: 3s\n", "bad.yaml:5: steps[1].within:", "wait: stable only"},
		{"within on a kill", base + "  - kill: leader\n    within: 3s\n", "bad.yaml:5: steps[1].within:", "belongs to wait"},
		{"expect nothing", base + "  - expect: {on: all}\n", "bad.yaml:4: steps[1].expect:", "say what to expect"},
		{"expect bad leader", base + "  - expect: {leader: boss}\n", "bad.yaml:4: steps[1].expect.leader:", "none, highest or any"},
		{"expect bad on", base + "  - expect: {leader: 3, on: everyone}\n", "bad.yaml:4: steps[1].expect.on:", "all-live, all or a list"},
		{"expect unknown key", base + "  - expect: {leader: 3, after: 2s}\n", "bad.yaml:4: steps[1].expect.after:", "valid: leader, leaders, on, within, for"},
		{"partition two forms", base + "  - partition: {cut: [1, 2], shape: halves}\n", "bad.yaml:4: steps[1].partition:", "exactly one of"},
		{"partition one group", base + "  - partition: {groups: [[1, 2, 3]]}\n", "bad.yaml:4: steps[1].partition.groups:", "at least two groups"},
		{"partition unknown shape", base + "  - partition: {shape: thirds}\n", "bad.yaml:4: steps[1].partition.shape:", "valid: halves, majorities-ring, bridge, isolate"},
		{"isolate without target", base + "  - partition: {shape: isolate}\n", "bad.yaml:4: steps[1].partition.target:", "isolate whom"},
		{"target on halves", base + "  - partition: {shape: halves, target: leader}\n", "bad.yaml:4: steps[1].partition.target:", "isolate and shape: bridge only"},
		{"cut needs two", base + "  - partition: {cut: [1, 2, 3]}\n", "bad.yaml:4: steps[1].partition.cut:", "exactly two"},
		{"loss percent", base + "  - loss: {target: all, percent: 120}\n", "bad.yaml:4: steps[1].loss.percent:", "[1, 100]"},
		{"loss without target", base + "  - loss: {percent: 20}\n", "bad.yaml:4: steps[1].loss.target:", "missing"},
		{"delay without ms", base + "  - delay: {target: all}\n", "bad.yaml:4: steps[1].delay.ms:", "milliseconds"},
		{"heal with args", base + "  - heal: {all: true}\n", "bad.yaml:4: steps[1].heal:", "takes nothing"},
		{"unknown checker", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\ncheckers: [agreemnt]\n", "bad.yaml:4: checkers[0]:", "valid: agreement"},
		{"expect_checkers value", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\nexpect_checkers: {no-split-brain: broken}\n", "bad.yaml:4: expect_checkers.no-split-brain:", "pass or fail"},
		{"repeat zero", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\nrepeat: 0\n", "bad.yaml:4: repeat:", "≥ 1"},
		{"repeat too many", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\nrepeat: 10001\n", "bad.yaml:4: repeat:", "from 1 to 10000"},
		{"yaml syntax", "name: x\ncluster: [\n", "bad.yaml:2: yaml:", "did not find"},
		{"empty file", "", "bad.yaml:0: scenario:", "empty"},
		{"partition all on one side", base + "  - heal\n  - partition: {groups: [[1, 2, 3], [3]]}\n", "bad.yaml:5: steps[2].partition:", "cuts no link"},
		{"partition a node from itself", base + "  - partition: {groups: [[2], [2]]}\n", "bad.yaml:4: steps[1].partition:", "cuts no link"},
		{"isolate everyone", base + "  - partition: {shape: isolate, target: [1, 2, 3]}\n", "bad.yaml:4: steps[1].partition:", "cuts no link"},
		{"pause a killed node", base + "  - kill: [3]\n  - wait: 1s\n  - pause: [3]\n", "bad.yaml:6: steps[3].pause:", "node 3 is down (put down at line 4"},
		{"resume after kill all", base + "  - pause: [2]\n  - kill: all\n  - resume: [2]\n", "bad.yaml:6: steps[3].resume:", "restart it before you resume it"},
		{"second document", base + "  - heal\n---\nname: y\n", "bad.yaml:6: ---:", "a second YAML document"},
		{"second document broken", base + "  - heal\n---\nname: [\n", "bad.yaml:", "did not find"},
		{"too many ids", "name: x\ncluster: {algorithm: stub-bully, ids: [" + idsUpTo(MaxNodes+1) + "]}\nsteps: [heal]\n", "bad.yaml:2: cluster.ids:", "at most 1024"},
		{"too many nodes", "name: x\ncluster: {algorithm: stub-bully, nodes: 1025}\nsteps: [heal]\n", "bad.yaml:2: cluster.nodes:", "at most 1024"},
		{"name too long", "name: " + strings.Repeat("a", MaxNameLen+1) + "\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n", "bad.yaml:1: name:", "1 to 63"},
		{"negative seed", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\nseed: -1\n", "bad.yaml:4: seed:", "want a whole number from 0 to"},
		{"placement one group", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, placement: [[1, 2, 3]]}\nsteps: [heal]\n", "bad.yaml:2: cluster.placement:", "at least two"},
		{"placement node twice", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, placement: [[1, 2], [2, 3]]}\nsteps: [heal]\n", "bad.yaml:2: cluster.placement:", "node 2 is in group 1 and group 2"},
		{"placement misses a node", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, placement: [[1], [2]]}\nsteps: [heal]\n", "bad.yaml:2: cluster.placement:", "node 3 is in no group"},
		{"placement not ids", "name: x\ncluster: {algorithm: stub-bully, nodes: 3, placement: [[1, 2], three]}\nsteps: [heal]\n", "bad.yaml:2: cluster.placement[1]:", "list of node IDs"},
		{"seed not a number", "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\nseed: soon\n", "bad.yaml:4: seed:", "got"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("no error for:\n%s", c.yaml)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, c.fragment) {
				t.Errorf("error %q\nwant it to contain %q and %q", msg, c.want, c.fragment)
			}
		})
	}
}

func TestParseReportsEveryErrorAtOnce(t *testing.T) {
	src := "name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps:\n  - kill: 9\n  - wait: soon\n  - pause: nobody\n"
	_, err := Parse("bad.yaml", []byte(src))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %T %v", err, err)
	}
	if len(es) != 3 {
		t.Fatalf("want 3 errors (lines 4, 5, 6), got %d:\n%v", len(es), err)
	}
	for i, e := range es {
		if e.Line != 4+i {
			t.Errorf("error %d on line %d, want %d: %v", i, e.Line, 4+i, e)
		}
	}
}

func TestLoadAllExpandsDirectoriesAndRejectsDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "name: a\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n")
	write("b.yml", "name: b\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n")
	write("notes.txt", "not a scenario")
	got, err := LoadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("got %d scenarios", len(got))
	}
	write("c.yaml", "name: a\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n")
	if _, err := LoadAll(dir); err == nil || !strings.Contains(err.Error(), `name "a" is already used`) {
		t.Fatalf("duplicate name not reported: %v", err)
	}
}

func idsUpTo(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(parts, ", ")
}

// The limits are where they say: a name of MaxNameLen characters and a
// cluster of MaxNodes IDs are read; a trailing --- with nothing after it
// is no second document; partitions that cut links pass.
func TestLimitsThemselvesAreAccepted(t *testing.T) {
	for _, y := range []string{
		"name: " + strings.Repeat("a", MaxNameLen) + "\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n",
		"name: x\ncluster: {algorithm: stub-bully, ids: [" + idsUpTo(MaxNodes) + "]}\nsteps: [heal]\n",
		"name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps: [heal]\n---\n",
		"name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps:\n  - partition: {groups: [[1, 2], [3]]}\n  - partition: {shape: isolate, target: [3]}\n  - partition: {one-way: [1, 2]}\n",
		"name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps:\n  - kill: [3]\n  - restart: [3]\n  - pause: [3]\n  - kill: [2]\n  - restart: down\n  - resume: [3]\n  - pause: [2]\n",
		"name: x\ncluster: {algorithm: stub-bully, nodes: 3}\nsteps:\n  - kill: [3]\n  - restart: one\n  - pause: [3]\n  - kill: leader\n  - resume: [3]\n",
	} {
		if _, err := Parse("ok.yaml", []byte(y)); err != nil {
			t.Errorf("%v\n%s", err, y)
		}
	}
}

// TestParseReadsPlacementAndTheEnginesShape: cluster.placement is one ID
// list per engine, the shape engines needs no target (two nodes are
// enough), and Format writes both back.
func TestParseReadsPlacementAndTheEnginesShape(t *testing.T) {
	src := "name: x\ncluster: {algorithm: stub-bully, nodes: 2, placement: [[2], [1]]}\nsteps:\n  - partition: {shape: engines}\n  - heal\n"
	sc, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Cluster.Placement.String(); got != "[2] | [1]" {
		t.Errorf("placement %s, want [2] | [1]", got)
	}
	if pt := sc.Steps[0].Fault.Partition; pt == nil || pt.Shape != "engines" {
		t.Errorf("step 1: %+v, want the shape engines", sc.Steps[0])
	}
	out, err := Format(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "placement: [[2], [1]]") {
		t.Errorf("Format lost the placement:\n%s", out)
	}
	again, err := Parse("p.yaml", out)
	if err != nil || again.Cluster.Placement.String() != sc.Cluster.Placement.String() {
		t.Errorf("re-parsed: %v, %v", again.Cluster.Placement, err)
	}
}
