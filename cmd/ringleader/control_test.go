//go:build !nodeimage

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/trust"
)

// TestControlFlagsAreCheckedBeforeAnythingIsSent: a bad request exits 2
// naming the flag, before any connection is tried.
func TestControlFlagsAreCheckedBeforeAnythingIsSent(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clock-rate", "2"}, "--node"},
		{[]string{"--node", "1"}, "nothing to change"},
		{[]string{"--node", "1", "--clock-rate", "0"}, "--clock-rate"},
		{[]string{"--node", "1", "--clock-rate", "2", "--clock-jump", "1s"}, "give one per request"},
		{[]string{"--node", "1", "--clock-jump", "1500us"}, "whole number of milliseconds"},
		{[]string{"--node", "1", "--drop-from", "2,two"}, "--drop-from"},
		{[]string{"--node", "1", "--drop-from", "2,2"}, "twice"},
	} {
		args := append([]string{"control", "--server", "nats://127.0.0.1:1"}, tc.args...)
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		wantContains(t, "stderr", r.stderr, tc.want)
	}
}

// TestControlChangesARunningNode: with the cluster's secret, the command
// changes a running node's clock and drop set and prints its answer; a
// node that is not running is exit 1 with a clear error.
func TestControlChangesARunningNode(t *testing.T) {
	secret := trust.NewSecret()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	n, err := node.Start(context.Background(), node.Config{
		ID: 1, Peers: []node.Peer{{ID: 1, Host: "127.0.0.1", Port: port}, {ID: 2, Host: "127.0.0.1", Port: 1}},
		Algorithm: "bully", Cluster: "cmdtest", Secret: secret, ClientPort: -1, ClusterPort: port,
		ListenHost: "127.0.0.1", StateDir: t.TempDir(), Log: io.Discard, PeerWait: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(binary, append([]string{"control", "--server", n.ClientURL(), "--cluster", "cmdtest"}, args...)...)
		cmd.Env = []string{trust.SecretEnv + "=" + secret}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stdout.String(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stdout.String(), stderr.String()
	}
	code, out, errOut := run("--node", "1", "--clock-rate", "0.25", "--drop-from", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r control.Reply
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("answer %q: %v", out, err)
	}
	if !r.OK || r.Node != 1 || r.Rate != 0.25 || len(r.DropFrom) != 1 || r.DropFrom[0] != election.NodeID(2) {
		t.Fatalf("answer %+v, want ok, rate 0.25, drop set [2]", r)
	}
	code, _, errOut = run("--node", "2", "--clock-rate", "2")
	if code != 1 || !strings.Contains(errOut, "no node listens") {
		t.Fatalf("control of a node not running: exit %d, %q", code, errOut)
	}
}
