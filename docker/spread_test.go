package docker

import (
	"strings"
	"testing"
)

func TestAdmitSpreadCountsEnginesThatShareAMachineTogether(t *testing.T) {
	rig := func(nodes int) []*machine {
		return []*machine{{host: "build", kernel: "6.18", cpus: 2, engines: []string{"unix:///a", "unix:///b"}, nodes: nodes}}
	}
	if err := admitSpread(rig(32), ""); err != nil {
		t.Fatalf("32 nodes across two engines on 2 cores: %v", err)
	}
	err := admitSpread(rig(48), "")
	if err == nil {
		t.Fatal("48 nodes across two engines on one 2-core machine were admitted")
	}
	for _, want := range []string{"48 nodes", "unix:///a and unix:///b", "host build", "2 CPU(s) × 16 nodes per CPU = 32", "Run 32 or fewer", NodesPerCoreEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if err := admitSpread(rig(64), "32"); err != nil {
		t.Errorf("with %s=32 the machine holds 64: %v", NodesPerCoreEnv, err)
	}
	if err := admitSpread(rig(10), "many"); err == nil || !strings.Contains(err.Error(), NodesPerCoreEnv) {
		t.Errorf("a malformed override is not named: %v", err)
	}
}

func TestAdmitSpreadLeavesAMachineWithOneEngineToTheOneEngineRule(t *testing.T) {
	hosts := []*machine{
		{host: "a", kernel: "6.18", cpus: 2, engines: []string{"tcp://a:2376"}, nodes: 64},
		{host: "b", kernel: "6.18", cpus: 2, engines: []string{"tcp://b:2376"}, nodes: 64},
	}
	if err := admitSpread(hosts, ""); err != nil {
		t.Fatalf("two machines with one engine each: %v", err)
	}
}
