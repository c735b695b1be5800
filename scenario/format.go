package scenario

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// Format writes sc as a scenario file that Parse reads back to the same
// scenario: the explorer saves the schedules it shrinks this way, so a
// schedule found in the simulator is a file anyone can run in containers.
// header, when not empty, opens the file as comment lines.
func Format(sc *Scenario, header string) ([]byte, error) {
	root := mapping(false)
	if header != "" {
		root.HeadComment = header
	}
	add(root, "name", str(sc.Name))
	if sc.Description != "" {
		add(root, "description", &yaml.Node{Kind: yaml.ScalarNode, Value: sc.Description, Style: yaml.FoldedStyle})
	}
	add(root, "cluster", clusterNode(sc.Cluster))
	steps := &yaml.Node{Kind: yaml.SequenceNode}
	for _, st := range sc.Steps {
		n, err := StepNode(st)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: line %d: %w", sc.Name, st.Line, err)
		}
		steps.Content = append(steps.Content, n)
	}
	add(root, "steps", steps)
	if sc.Repeat > 1 {
		add(root, "repeat", str(strconv.Itoa(sc.Repeat)))
	}
	if len(sc.Checkers) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, c := range sc.Checkers {
			seq.Content = append(seq.Content, str(string(c)))
		}
		add(root, "checkers", seq)
	}
	if len(sc.ExpectCheckers) > 0 {
		m := mapping(true)
		for _, c := range check.Names { // a fixed order: the file is stable
			if want, ok := sc.ExpectCheckers[c]; ok {
				add(m, string(c), str(verdictText(want)))
			}
		}
		add(root, "expect_checkers", m)
	}
	if sc.LivenessBound > 0 {
		add(root, "liveness_bound", str(durationText(sc.LivenessBound)))
	}
	if sc.Seed != nil {
		add(root, "seed", str(strconv.FormatInt(*sc.Seed, 10)))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func verdictText(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func clusterNode(c Cluster) *yaml.Node {
	m := mapping(false)
	if c.System != nil {
		return systemClusterNode(m, c)
	}
	if len(c.Program) > 0 {
		argv := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range c.Program {
			argv.Content = append(argv.Content, str(a))
		}
		add(m, "program", argv)
		if c.Image != "" {
			add(m, "image", str(c.Image))
		}
		if c.ProgramTimeout > 0 {
			add(m, "program_timeout", str(durationText(c.ProgramTimeout)))
		}
	} else {
		add(m, "algorithm", str(c.Algorithm))
	}
	sequential := true
	for i, id := range c.IDs {
		sequential = sequential && id == election.NodeID(i+1)
	}
	if sequential {
		add(m, "nodes", str(strconv.Itoa(len(c.IDs))))
	} else {
		add(m, "ids", idsNode(c.IDs))
	}
	if len(c.Placement) > 0 {
		pl := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, g := range c.Placement {
			pl.Content = append(pl.Content, idsNode(g))
		}
		add(m, "placement", pl)
	}
	// The quorum mode and every option are written as they are, the
	// defaults too: a file must mean the same run whatever the defaults
	// of whoever reads it (a program's mode defaults to none when read,
	// whatever it was registered in; a later version may change an
	// option's default).
	if c.Quorum != election.QuorumDefault {
		add(m, "quorum", str(string(c.Quorum)))
	}
	if len(c.Options) > 0 {
		o := mapping(true)
		for _, k := range slices.Sorted(maps.Keys(c.Options)) {
			add(o, k, str(c.Options[k]))
		}
		add(m, "options", o)
	}
	t := c.Timing.WithDefaults()
	timing := mapping(true)
	add(timing, "heartbeat", str(durationText(t.Heartbeat)))
	add(timing, "suspicion", str(durationText(t.Suspicion)))
	add(timing, "answer", str(durationText(t.Answer)))
	add(m, "timing", timing)
	return m
}

// systemClusterNode is a system's cluster: its name (or file), its
// members, the options the scenario gave and a probe interval that is not
// the system's default.
func systemClusterNode(m *yaml.Node, c Cluster) *yaml.Node {
	name := c.System.Name
	if f := c.System.File(); strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") {
		name = f
	}
	add(m, "system", str(name))
	add(m, "ids", idsNode(c.IDs))
	if len(c.SystemOptions) > 0 {
		o := mapping(true)
		for _, k := range slices.Sorted(maps.Keys(c.SystemOptions)) {
			add(o, k, str(c.SystemOptions[k]))
		}
		add(m, "options", o)
	}
	if d := time.Duration(c.System.Probe.Interval); d != 0 && d != system.DefaultInterval {
		add(m, "probe_interval", str(durationText(d)))
	}
	return m
}

// StepNode is one step as the YAML a person would write: - kill: leader,
// - heal, - partition: {shape: isolate, target: leader}.
func StepNode(st Step) (*yaml.Node, error) {
	one := func(key string, v *yaml.Node) *yaml.Node {
		m := mapping(false)
		add(m, key, v)
		return m
	}
	switch st.Op {
	case OpWait:
		if !st.Stable {
			return one("wait", str(durationText(st.Duration))), nil
		}
		m := one("wait", str("stable"))
		if st.Within != DefaultStableWithin {
			add(m, "within", str(durationText(st.Within)))
		}
		return m, nil
	case OpExpect:
		return one("expect", expectNode(st.Expect)), nil
	}
	if st.Fault == nil {
		return nil, fmt.Errorf("step %q has no fault", st.Op)
	}
	f := st.Fault
	switch f.Op {
	case chaos.Heal:
		return str("heal"), nil
	case chaos.Partition:
		return one("partition", partitionNode(f.Partition)), nil
	}
	if k, ok := chaos.KindOf(f.Op); ok && len(k.Params) > 0 {
		m := mapping(true)
		add(m, "target", targetNode(f.Target))
		for _, pr := range k.Params {
			if t := pr.Text(*f); t != "" {
				add(m, pr.Key, str(t))
			}
		}
		return one(string(f.Op), m), nil
	}
	return one(string(f.Op), targetNode(f.Target)), nil
}

func partitionNode(p *chaos.PartitionSpec) *yaml.Node {
	m := mapping(true)
	switch {
	case len(p.Groups) > 0:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, g := range p.Groups {
			seq.Content = append(seq.Content, idsNode(g))
		}
		add(m, "groups", seq)
	case p.Shape != "":
		add(m, "shape", str(string(p.Shape)))
		if p.Target.Kind != "" {
			add(m, "target", targetNode(p.Target))
		}
	case len(p.Cut) == 2:
		add(m, "cut", idsNode(p.Cut))
	case len(p.OneWay) == 2:
		add(m, "one-way", idsNode(p.OneWay))
	}
	return m
}

func expectNode(e *Expectation) *yaml.Node {
	m := mapping(true)
	switch e.Kind {
	case ExpectLeader:
		add(m, "leader", str(strconv.Itoa(int(e.Leader))))
	case ExpectHighest, ExpectAny, ExpectNone:
		add(m, "leader", str(string(e.Kind)))
	case ExpectLeaders:
		add(m, "leaders", idsNode(e.Leaders))
	}
	switch e.On {
	case OnAll:
		add(m, "on", str(string(OnAll)))
	case OnIDs:
		add(m, "on", idsNode(e.OnIDs))
	}
	if e.Within != DefaultExpectWithin {
		add(m, "within", str(durationText(e.Within)))
	}
	if e.For > 0 {
		add(m, "for", str(durationText(e.For)))
	}
	return m
}

// targetNode writes one ID as a number, several as a list.
func targetNode(t chaos.Target) *yaml.Node {
	if t.Kind != chaos.TargetIDs {
		return str(string(t.Kind))
	}
	if len(t.IDs) == 1 {
		return str(strconv.Itoa(int(t.IDs[0])))
	}
	return idsNode(t.IDs)
}

func idsNode(ids []election.NodeID) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, id := range ids {
		seq.Content = append(seq.Content, str(strconv.Itoa(int(id))))
	}
	return seq
}

// durationText is d as the files write it: 1.5s, 250ms, 1m30s.
func durationText(d time.Duration) string {
	s := d.String()
	// 1m30s is fine; 1.5s too. Only trim what String adds for whole
	// minutes and hours (2m0s → 2m).
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}

func mapping(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
