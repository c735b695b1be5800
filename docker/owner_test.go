package docker

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLiveRunsDecidesByOwnerThenReaper holds the rules of liveRuns; it
// needs no engine (RINGLEADER_NO_DOCKER=1 runs it too).
func TestLiveRunsDecidesByOwnerThenReaper(t *testing.T) {
	me := self()
	if me.Start == "" || me.Machine == "" {
		t.Skip("no /proc here: owners cannot be checked on this machine")
	}
	reused := owner{Machine: me.Machine, PID: me.PID, Start: me.Start + "0"} // same PID, another start
	elsewhere := owner{Machine: "otherhost/boot", PID: 42, Start: "7"}
	node := func(run string, o *owner) labelled {
		l := map[string]string{LabelRun: run, LabelRole: RoleNode}
		if o != nil {
			l[LabelOwner] = o.String()
		}
		return labelled{Labels: l, Running: true}
	}
	reaperOf := func(run string, running bool) labelled {
		return labelled{Labels: map[string]string{LabelRun: run, LabelRole: RoleReaper}, Running: running}
	}
	live := liveRuns([]labelled{
		node("mine", &me),
		node("reused", &reused), reaperOf("reused", true), // the owner label decides, not the reaper
		node("remote", &elsewhere),
		node("old-attached", nil), reaperOf("old-attached", true),
		node("old-dead", nil), reaperOf("old-dead", false),
		node("compose", nil),
	})
	want := map[string]string{
		"mine":         "process " + strconv.Itoa(os.Getpid()),
		"remote":       "on host otherhost, which this machine cannot check",
		"old-attached": "its reaper is running",
	}
	for run, why := range want {
		if !strings.Contains(live[run], why) {
			t.Errorf("run %s: live reason %q, want one containing %q", run, live[run], why)
		}
	}
	for _, run := range []string{"reused", "old-dead", "compose"} {
		if why, ok := live[run]; ok {
			t.Errorf("run %s counted live (%s); no live process owns it", run, why)
		}
	}
}

func TestOwnerLabelRoundTrips(t *testing.T) {
	o := owner{Machine: "host-1/6f1e", PID: 1234, Start: "98765"}
	got, ok := parseOwner(o.String())
	if !ok || got != o {
		t.Errorf("parseOwner(%q) = %+v, %v; want %+v", o.String(), got, ok, o)
	}
	for _, bad := range []string{"", "x", "a:b", "m:zero:1", "m:0:1"} {
		if _, ok := parseOwner(bad); ok {
			t.Errorf("parseOwner(%q) accepted", bad)
		}
	}
}
