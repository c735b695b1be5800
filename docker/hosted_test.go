package docker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/internal/dockertest"
	"github.com/ringleader-dev/ringleader/program"
)

// TestAttachJudgesAClusterOfProgramsByItsNodesWord: a second backend
// attaches to a running cluster whose nodes host examples/bully-go. It
// learns the program from the nodes (their environment and their boot
// lines), never from running it, so its claims and message classes are
// the ones the nodes' probes found; a kill of the leader through it is
// recorded, and the checkers judge the history by those claims.
func TestAttachJudgesAClusterOfProgramsByItsNodesWord(t *testing.T) {
	dockertest.Parallel(t)
	bin := filepath.Join(t.TempDir(), "bully-go")
	build := exec.Command("go", "build", "-o", bin, "../examples/bully-go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/bully-go: %v\n%s", err, out)
	}
	// The owner runs the program as a harness run does: registered here
	// to start the cluster.
	owned, err := program.Register([]string{bin}, election.NoQuorum, ids(1, 2, 3), election.Timing{}, program.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(program.CloseAll)
	owner, _ := startSpec(t, func(run string) chaos.ClusterSpec {
		s := spec(run, 3)
		s.Algorithm, s.Program = owned, []string{bin}
		return s
	})
	await(t, owner, "all on 3", allSee(ids(1, 2, 3), 3))

	ctx := context.Background()
	described, err := Describe(ctx, owner.Run(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := New(WithBuild(false), WithProgress(testWriter{t}))
	t.Cleanup(func() { a.Close(ctx) })
	mem := &history.Memory{}
	got, err := a.Attach(ctx, owner.Run(), mem)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Program, []string{"/program/bully-go"}) || got.Algorithm == "" || got.Algorithm == owned || got.Algorithm != described.Algorithm || got.Quorum != election.NoQuorum {
		t.Fatalf("attached to %+v (described as %+v); want the nodes' /program/bully-go under a name of its own (not the owner's %s), quorum none", got, described, owned)
	}
	alg, err := election.Lookup(got.Algorithm)
	if err != nil {
		t.Fatal(err)
	}
	bully, _ := election.Lookup("bully")
	if !slices.Equal(alg.Claims(election.NoQuorum), bully.Claims(election.NoQuorum)) || !slices.Equal(alg.ElectionTypes, bully.ElectionTypes) || !slices.Equal(alg.AnnounceTypes, bully.AnnounceTypes) {
		t.Errorf("attached program %s claims %v, election %v, announce %v; the Go Bully it serves claims %v, %v, %v",
			alg.Name, alg.Claims(election.NoQuorum), alg.ElectionTypes, alg.AnnounceTypes, bully.Claims(election.NoQuorum), bully.ElectionTypes, bully.AnnounceTypes)
	}

	apply(t, a, chaos.Fault{Op: chaos.Kill, Nodes: ids(3)})
	await(t, a, "1 and 2 on 2 after the attached kill", allSee(ids(1, 2), 2))

	recs := mem.Records()
	checkFaultRecords(t, recs, []chaos.Op{chaos.Kill})
	names := check.Claimed(alg, election.NoQuorum)
	if len(names) == 0 {
		t.Fatal("the program claims nothing: nothing would be judged")
	}
	for _, v := range check.Run(recs, check.Options{Algorithm: alg, Quorum: election.NoQuorum, Members: got.Members, Timing: got.Timing}, names...) {
		if !v.Pass {
			t.Errorf("%s: %s", v.Checker, v.Summary)
		} else {
			t.Logf("%s: %s", v.Checker, v.Summary)
		}
	}
}
