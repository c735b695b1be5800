package scenario_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

// majorityOnly is a test-only algorithm of the shape Raft will have: it
// runs only with a majority (its default) and takes options. Its machines
// report the Config they were built with, so a test sees what reached them.
const majorityOnly = "test-majority-only"

var (
	builtMu sync.Mutex
	built   []election.Config
)

type quietMachine struct{}

func (quietMachine) Step(election.Event) []election.Effect { return nil }
func (quietMachine) View() election.View                   { return election.View{Role: election.Undecided} }

func init() {
	election.Register(election.Algorithm{
		Name: majorityOnly, Title: "majority-only stand-in (test only)", Topology: "complete",
		New: func(cfg election.Config) (election.Machine, error) {
			builtMu.Lock()
			defer builtMu.Unlock()
			built = append(built, cfg)
			return quietMachine{}, nil
		},
		Claims:    func(election.QuorumMode) []election.Property { return nil },
		Quorums:   []election.QuorumMode{election.Majority},
		QuorumWhy: "a leader needs a majority's votes",
		Options: []election.OptionSpec{
			{Name: "prevote", Kind: election.OptionBool, Default: "true", Help: "ask before campaigning"},
			{Name: "lease", Kind: election.OptionDuration, Default: "300ms", Help: "how long a leader trusts its votes"},
		},
	})
}

func parseCluster(t *testing.T, cluster string) (*scenario.Scenario, error) {
	t.Helper()
	return scenario.Parse("opts.yaml", []byte("name: x\ncluster: "+cluster+"\nsteps: [heal]\n"))
}

// TestMajorityOnlyAlgorithmDefaultsAndRefusesNone: left out, the quorum
// is the algorithm's default (majority), not none; quorum none is refused
// at the line that asks for it, with the reason and the modes it runs in.
func TestMajorityOnlyAlgorithmDefaultsAndRefusesNone(t *testing.T) {
	sc, err := parseCluster(t, "{algorithm: "+majorityOnly+", nodes: 3}")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Cluster.Quorum != election.Majority {
		t.Errorf("quorum left out resolved to %q, want majority (the algorithm's default)", sc.Cluster.Quorum)
	}
	if got := sc.Cluster.Options.String(); got != "lease=300ms,prevote=true" {
		t.Errorf("options left out resolved to %q, want every default", got)
	}
	_, err = parseCluster(t, "{algorithm: "+majorityOnly+", nodes: 3, quorum: none}")
	want := "opts.yaml:2: cluster.quorum: algorithm test-majority-only does not run with quorum none: a leader needs a majority's votes (it runs with majority)"
	if err == nil || err.Error() != want {
		t.Errorf("quorum none: %v\nwant %s", err, want)
	}
}

// TestOptionsParseWithFileLineErrors: each bad option is reported at its
// own line, naming the algorithm, the option and what would be valid.
func TestOptionsParseWithFileLineErrors(t *testing.T) {
	cases := []struct{ cluster, want string }{
		{"{algorithm: " + majorityOnly + ", nodes: 3, options: {speed: 3}}",
			`opts.yaml:2: cluster.options.speed: algorithm test-majority-only has no option "speed" (options: prevote, lease)`},
		{"{algorithm: " + majorityOnly + ", nodes: 3, options: {prevote: maybe}}",
			`opts.yaml:2: cluster.options.prevote: algorithm test-majority-only option prevote (bool): "maybe" is not a bool (want true or false)`},
		{"{algorithm: " + majorityOnly + ", nodes: 3, options: {lease: [1s]}}",
			`opts.yaml:2: cluster.options.lease: want a value`},
		{"{algorithm: " + majorityOnly + ", nodes: 3, options: [prevote]}",
			`opts.yaml:2: cluster.options: want a mapping of option names to values`},
		{"{algorithm: " + majorityOnly + ", nodes: 3, options: {prevote: true, prevote: false}}",
			`cluster.options.prevote: given twice`},
		{"\n  algorithm: " + majorityOnly + "\n  nodes: 3\n  options:\n    lease: 2s\n    fast: true",
			`opts.yaml:7: cluster.options.fast: algorithm test-majority-only has no option "fast"`},
	}
	for _, c := range cases {
		_, err := parseCluster(t, c.cluster)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cluster %s:\n got %v\nwant %s", c.cluster, err, c.want)
		}
	}
}

// TestOptionsReachTheMachineAndSurviveFormat: options given in a file are
// resolved (the rest defaulted), written back by Format in full (the
// defaults in force too, so the file means the same run whatever the
// reader's defaults), and handed to every machine the simulator builds.
func TestOptionsReachTheMachineAndSurviveFormat(t *testing.T) {
	sc, err := parseCluster(t, "{algorithm: "+majorityOnly+", nodes: 3, options: {prevote: F}}")
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Cluster.Options.String(); got != "lease=300ms,prevote=false" {
		t.Fatalf("options %q, want lease=300ms,prevote=false", got)
	}
	text, err := scenario.Format(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "options: {lease: 300ms, prevote: false}") || !strings.Contains(string(text), "quorum: majority") {
		t.Errorf("Format wrote\n%s\nwant every option and the quorum mode in force: options: {lease: 300ms, prevote: false}, quorum: majority", text)
	}
	back, err := scenario.Parse("back.yaml", text)
	if err != nil {
		t.Fatalf("Format's output does not parse: %v\n%s", err, text)
	}
	if back.Cluster.Options.String() != sc.Cluster.Options.String() || back.Cluster.Quorum != election.Majority {
		t.Errorf("read back %v %s, want %v majority", back.Cluster.Options, back.Cluster.Quorum, sc.Cluster.Options)
	}

	builtMu.Lock()
	built = nil
	builtMu.Unlock()
	s, err := sim.New(sim.Options{Algorithm: sc.Cluster.Algorithm, Members: sc.Members(), Quorum: sc.Cluster.Quorum, Options: sc.Cluster.Options}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	builtMu.Lock()
	defer builtMu.Unlock()
	if len(built) != 3 {
		t.Fatalf("%d machines built, want 3", len(built))
	}
	for _, cfg := range built {
		if cfg.Quorum != election.Majority || cfg.Options.Bool("prevote") || cfg.Options.Duration("lease") != 300*time.Millisecond {
			t.Errorf("node %d built with quorum %s options %v; want majority, prevote false, lease 300ms", cfg.ID, cfg.Quorum, cfg.Options)
		}
	}
	if _, err := sim.New(sim.Options{Algorithm: majorityOnly, Members: sc.Members(), Quorum: election.NoQuorum}, nil); err == nil || !strings.Contains(err.Error(), "does not run with quorum none") {
		t.Errorf("sim with quorum none: %v, want the refusal", err)
	}
}
