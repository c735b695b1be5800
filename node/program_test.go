package node

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// buildProgram builds one of the shipped example programs.
func buildProgram(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// TestNodeHostsAProgram: three real nodes, each hosting the Go Bully as
// a child process over the program protocol, elect 3, survive its crash
// and give the lead back when it returns, as the in-process Bully does.
func TestNodeHostsAProgram(t *testing.T) {
	bin := buildProgram(t, "../examples/bully-go")
	c := newTestCluster(t, "", 1, 2, 3)
	c.program = []string{bin, "node-test"}
	c.startAll()
	c.awaitLeader(3)
	// The boot line says what the probe learnt of the program: what a
	// process attaching to the cluster judges it by.
	boot := c.awaitLog("node 1's boot line", func(l logLine) bool { return l.node == 1 && l.ok && l.rec.Kind == history.KindBoot })
	pb, ok := history.ParseProgramBoot([]byte(boot.raw))
	bully, _ := election.Lookup("bully")
	if !ok || pb.Program != bin+" node-test" || pb.Algorithm != "program-node-test" || pb.Quorum != "none" ||
		!slices.Equal(pb.Claims, bully.Claims(election.NoQuorum)) || !slices.Equal(pb.ElectionTypes, bully.ElectionTypes) || !slices.Equal(pb.AnnounceTypes, bully.AnnounceTypes) {
		t.Errorf("boot line %s\nread as %+v (ok %v); want the program, its name, none and Bully's claims and message types", boot.raw, pb, ok)
	}
	c.kill(3)
	c.awaitLeader(2)
	c.start(3)
	c.awaitLeader(3)
	c.stopAll()
	checkLogs(t, c.allLines(), c.logLevel)
}

// TestAProgramThatFailsEndsItsNode: a hosted program that exits ends its
// node as a crash: Run returns the failure, with the program's stderr, and
// the node logs a stop line whose reason is the failure: the history
// record the simulator writes for it too.
func TestAProgramThatFailsEndsItsNode(t *testing.T) {
	script := filepath.Join(t.TempDir(), "dies.sh")
	// Answers the probe start, then dies at its next event.
	body := "#!/bin/sh\nread line\necho '{\"v\":1,\"seq\":1,\"effects\":[]}'\nread line\necho 'giving up' >&2\nexit 7\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, "", 1)
	c.program = []string{script}
	err := Run(context.Background(), c.config(1))
	if err == nil || !strings.Contains(err.Error(), "exit status 7") || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("Run: %v; want the program's exit status and stderr", err)
	}
	c.awaitLog("the stop line naming the program's failure", func(l logLine) bool {
		rec, ok, err := history.ParseNodeLog([]byte(l.raw))
		failure, failed := rec.ProgramFailure()
		return err == nil && ok && failed && strings.Contains(failure, "exit status 7") && strings.Contains(failure, "giving up")
	})
}

// TestParseArgsReadsAProgram: --program (or RINGLEADER_PROGRAM) is a
// command line split at spaces; the quorum defaults to none and options
// are refused, naming the setting.
func TestParseArgsReadsAProgram(t *testing.T) {
	c, err := ParseArgs([]string{"--id", "1", "--peers", "1=a,2=b", "--program", "python3 examples/bully-python/bully.py"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Program, "|") != "python3|examples/bully-python/bully.py" || c.Quorum != election.NoQuorum {
		t.Fatalf("program %q, quorum %q; want the two words and none", c.Program, c.Quorum)
	}
	_, err = ParseArgs([]string{"--id", "1", "--peers", "1=a,2=b"}, env(map[string]string{"RINGLEADER_PROGRAM": "./mine", "RINGLEADER_OPTIONS": "x=1"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "RINGLEADER_OPTIONS: a program takes no options") {
		t.Fatalf("error %v, want options refused naming RINGLEADER_OPTIONS", err)
	}
}
