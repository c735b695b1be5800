package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestComplexityRunsNoFailureDetectorUnlessAskedForHeartbeats: without
// --heartbeats only election and announce messages are sent; with it the
// failure detector's traffic is counted as maintenance, and the election
// messages are the same.
func TestComplexityRunsNoFailureDetectorUnlessAskedForHeartbeats(t *testing.T) {
	type row struct {
		Messages    int            `json:"messages"`
		Announce    int            `json:"announce_messages"`
		Maintenance int            `json:"maintenance_messages"`
		ByType      map[string]int `json:"by_type"`
	}
	run := func(extra ...string) row {
		args := append([]string{"sim", "complexity", "--algorithm", "hs", "--n", "32", "--json"}, extra...)
		r := ringleader(t, args...)
		r.wantCode(t, 0, args...)
		var c row
		if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		return c
	}
	plain, hb := run(), run("--heartbeats")
	if plain.Maintenance != 0 || plain.ByType["HEARTBEAT"] != 0 || plain.ByType["ACK"] != 0 {
		t.Errorf("without --heartbeats: maintenance %d, by type %v; want none", plain.Maintenance, plain.ByType)
	}
	if hb.ByType["HEARTBEAT"] == 0 || hb.ByType["ACK"] == 0 {
		t.Errorf("with --heartbeats: by type %v, want heartbeats and acknowledgements", hb.ByType)
	}
	if plain.Messages != hb.Messages || plain.Announce != hb.Announce {
		t.Errorf("election/announce %d/%d without --heartbeats, %d/%d with: want the same", plain.Messages, plain.Announce, hb.Messages, hb.Announce)
	}
}

// TestComplexityCapsNameTheFlagThatRaisesThem: a run stopped by a cap
// exits 1 with one line naming the cap and the flag.
func TestComplexityCapsNameTheFlagThatRaisesThem(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--max-messages", "100", "cap of 100 messages"},
		{"--max-time", "50ms", "virtual-time cap of 50ms"},
		// Bully's start sends n² messages at once: 4.4 million for 2,100.
		{"--max-memory", "64MiB", "memory budget of 64MiB"},
	} {
		alg, n := "changroberts", "200"
		if c.flag == "--max-memory" {
			alg, n = "bully", "2100"
		}
		args := []string{"sim", "complexity", "--algorithm", alg, "--n", n, "--arrangement", "worst", c.flag, c.value}
		r := ringleader(t, args...)
		r.wantCode(t, 1, args...)
		if !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "raise the cap with "+c.flag) {
			t.Errorf("%s %s: stderr %q, want it to say %q and name %s", c.flag, c.value, r.stderr, c.want, c.flag)
		}
	}
	args := []string{"sim", "complexity", "--algorithm", "hs", "--n", "8", "--max-messages", "0"}
	ringleader(t, args...).wantCode(t, 2, args...)
}

// A size no budget holds is refused before its IDs are laid out (10¹¹ of
// them were 800 GB, and the runtime's fatal "out of memory"), naming --n
// and the flag that raises the budget; so is a budget that is not a size.
func TestComplexityRefusesAClusterBeyondItsMemoryBudget(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "100000000000"}, "--n 100000000000: 100000000000 nodes need at least 23.28TiB"},
		{[]string{"--n", "1000", "--max-memory", "100KiB"}, "over the memory budget of 100KiB; lower --n or raise --max-memory"},
		{[]string{"--n", "8", "--max-memory", "-3"}, `--max-memory "-3": want a size`},
	} {
		args := append([]string{"sim", "complexity", "--algorithm", "peterson"}, c.args...)
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, c.want)
	}
}
