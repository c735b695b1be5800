package raft_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
	"github.com/ringleader-dev/ringleader/wire"
)

// TestPayloadsRideTheWire: every message a faulty 5-node run sends (raft's
// protobuf in Payload) passes the wire's validation and size bound, and
// comes back from Decode as it was sent; every raft type shows up.
func TestPayloadsRideTheWire(t *testing.T) {
	var mem history.Memory
	sm, err := sim.New(sim.Options{Algorithm: "raft", Members: five, Seed: 5}, &mem)
	must(t, err)
	sm.Start()
	sm.RunFor(2 * time.Second)
	l := sm.State().CommonLeader(five)
	must(t, sm.Kill(l))
	sm.RunFor(3 * time.Second)
	must(t, sm.Restart(l))
	sm.RunFor(2 * time.Second)
	seen := map[string]int{}
	for _, r := range mem.Records() {
		if r.Kind != history.KindSend || r.Msg == nil {
			continue
		}
		b, err := wire.Encode("c", *r.Msg)
		if err != nil {
			t.Fatalf("%s: %v", r.Msg.Type, err)
		}
		got, err := wire.Decode(b, "c", five)
		if err != nil {
			t.Fatalf("%s (%d bytes): %v", r.Msg.Type, len(b), err)
		}
		if !slices.Equal(got.Payload, r.Msg.Payload) || got.Type != r.Msg.Type || got.Epoch != r.Msg.Epoch {
			t.Fatalf("%s came back as %+v", r.Msg.Type, got)
		}
		seen[r.Msg.Type]++
	}
	for _, typ := range []string{"MsgPreVote", "MsgPreVoteResp", "MsgVote", "MsgVoteResp", "MsgApp", "MsgAppResp", "MsgHeartbeat", "MsgHeartbeatResp"} {
		if seen[typ] == 0 {
			t.Errorf("no %s sent (saw %v)", typ, seen)
		}
	}
}
