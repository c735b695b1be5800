package program_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/program"
)

// TestAHostedProgramIsJudgedByItsNodesWord: a program that runs in a
// cluster's nodes is registered from what they said of it: its claims and
// message classes, its one quorum mode, and no way to start it here. The
// same description gives the same name; another gets one of its own.
func TestAHostedProgramIsJudgedByItsNodesWord(t *testing.T) {
	h := program.Hosted{Command: []string{"python3", "/program/hosted-bully.py"}, Quorum: election.Majority,
		Claims: []election.Property{election.Agreement, election.NoSplitBrain}, ElectionTypes: []string{"VOTE"}, AnnounceTypes: []string{"LEAD"}}
	name, err := program.RegisterHosted(h)
	if err != nil {
		t.Fatal(err)
	}
	if name != "program-hosted-bully-majority" {
		t.Errorf("registered as %s, want the name its nodes give it, program-hosted-bully-majority", name)
	}
	alg, err := election.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alg.Claims(election.Majority), h.Claims) || !alg.IsElection("VOTE") || !alg.IsAnnounce("LEAD") || alg.IsElection("LEAD") {
		t.Errorf("registered %+v: want the nodes' claims and message classes", alg)
	}
	if q, err := alg.ResolveQuorum(election.QuorumDefault); err != nil || q != election.Majority {
		t.Errorf("default quorum %v (%v), want majority, the nodes' mode", q, err)
	}
	if _, err := alg.ResolveQuorum(election.NoQuorum); err == nil {
		t.Error("quorum none accepted for a program its nodes run with a majority")
	}
	_, err = election.New(name, election.Config{ID: 1, Members: []election.NodeID{1}, Timing: election.DefaultTiming, Rand: election.Seed{1, 1}.Rand()})
	if err == nil || !strings.Contains(err.Error(), "runs in the nodes of the cluster it was read from, not in this process") {
		t.Errorf("a machine of a hosted program: %v; want a refusal that says where it runs", err)
	}

	again, err := program.RegisterHosted(h)
	if err != nil || again != name {
		t.Errorf("the same description again: %q, %v; want %q", again, err, name)
	}
	h.Claims = []election.Property{election.Agreement}
	other, err := program.RegisterHosted(h)
	if err != nil || other == name {
		t.Errorf("another description: %q, %v; want a name of its own", other, err)
	}
}

// TestAHostedProgramsDescriptionIsChecked: what a log line says is read,
// not trusted blindly: unknown properties and modes are refused, naming
// what is wrong.
func TestAHostedProgramsDescriptionIsChecked(t *testing.T) {
	for _, c := range []struct {
		h    program.Hosted
		want string
	}{
		{program.Hosted{Quorum: election.NoQuorum}, "no command"},
		{program.Hosted{Command: []string{"/program/x"}, Quorum: election.QuorumDefault}, "quorum"},
		{program.Hosted{Command: []string{"/program/x"}, Quorum: election.NoQuorum, Claims: []election.Property{"always-right"}}, `claims[0]: "always-right" is not a property`},
		{program.Hosted{Command: []string{"/program/x"}, Quorum: election.NoQuorum, ElectionTypes: []string{""}}, "an empty message type"},
	} {
		if _, err := program.RegisterHosted(c.h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error saying %q", c.h, err, c.want)
		}
	}
}
