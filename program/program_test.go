package program_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/sim"
)

// bin is where TestMain built the example programs.
var bin string

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "badprog" {
		badProgram(os.Args[2]) // the test binary plays a bad program
		return
	}
	dir, err := os.MkdirTemp("", "ringleader-program-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "bully-go"), "../examples/bully-go").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build examples/bully-go: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	program.CloseAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

func bullyGo() []string { return []string{filepath.Join(bin, "bully-go")} }

// register registers argv in mode q for a 5-node cluster.
func register(t *testing.T, argv []string, q election.QuorumMode) string {
	t.Helper()
	name, err := program.Register(argv, q, election.FirstIDs(5), election.Timing{}, program.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func registerB(argv []string) (string, error) {
	return program.Register(argv, election.NoQuorum, election.FirstIDs(5), election.Timing{}, program.Options{})
}

// play runs one simulated history of alg under a fixed fault schedule and
// returns it as JSON lines, with the simulator (reset to a new seed
// between calls, as the explorer does).
func play(t *testing.T, s *sim.Sim, seed int64) []byte {
	t.Helper()
	var mem history.Memory
	if err := s.Reset(seed, &mem); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(2 * time.Second)
	must(t, s.Kill(5))
	s.RunFor(2 * time.Second)
	must(t, s.Partition([]election.NodeID{1, 2}, []election.NodeID{3, 4}))
	s.RunFor(2 * time.Second)
	must(t, s.Pause(4))
	s.RunFor(time.Second)
	must(t, s.Resume(4))
	must(t, s.Heal())
	must(t, s.Restart(5))
	s.RunFor(3 * time.Second)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if c := s.Crashes(); len(c) > 0 {
		t.Fatalf("seed %d: a program crashed: %v", seed, c[0].Err)
	}
	var b bytes.Buffer
	w := history.NewWriter(&b)
	for _, r := range mem.Records() {
		must(t, w.Append(r))
	}
	return b.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newSim(t *testing.T, alg string, q election.QuorumMode) *sim.Sim {
	t.Helper()
	s, err := sim.New(sim.Options{Algorithm: alg, Members: election.FirstIDs(5), Quorum: q, Delay: sim.ScenarioNetwork}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGoProgramEqualsInProcess is the pipe's cross-check: the project's
// own Bully, run as an external program (examples/bully-go), writes the
// same history, byte for byte, as the in-process Bully for the same seeds,
// under kills, a partition, a pause and a restart, in both quorum modes.
func TestGoProgramEqualsInProcess(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		t.Run(q.Text(), func(t *testing.T) {
			name := register(t, bullyGo(), q)
			in, out := newSim(t, "bully", q), newSim(t, name, q)
			for seed := int64(1); seed <= 8; seed++ {
				want, got := play(t, in, seed), play(t, out, seed)
				if len(want) < 1000 {
					t.Fatalf("seed %d: a history of %d bytes: the schedule did nothing", seed, len(want))
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("seed %d: the program's history differs from the in-process Bully's at byte %d\nprogram:    %.300s\nin-process: %.300s",
						seed, firstDiff(got, want), got[firstDiff(got, want):], want[firstDiff(got, want):])
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRegisterReadsClaimsFromTheProbe: the claims of a registered program
// are what its answer to start said (Bully's, per mode).
func TestRegisterReadsClaimsFromTheProbe(t *testing.T) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		name := register(t, bullyGo(), q)
		a, err := election.Lookup(name)
		must(t, err)
		b, _ := election.Lookup("bully")
		got, _ := json.Marshal(a.Claims(q))
		want, _ := json.Marshal(b.Claims(q))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: claims %s, want Bully's %s", name, got, want)
		}
		if len(a.ElectionTypes) == 0 || a.AnnounceTypes[0] != "COORDINATOR" {
			t.Errorf("%s: message classes %v / %v, want Bully's", name, a.ElectionTypes, a.AnnounceTypes)
		}
	}
}

// TestOneProcessPerNodeSlotForEverySchedule: the explorer plays every
// schedule on the same processes (a start resets a program), however
// many schedules, kills and restarts there are.
func TestOneProcessPerNodeSlotForEverySchedule(t *testing.T) {
	argv := append(bullyGo(), "reuse") // a command of its own: its own count
	name := register(t, argv, election.NoQuorum)
	p, _ := program.Lookup(name)
	// The probe start's process was started here, unpinned; the worker,
	// pinned to a CPU, starts its own there (TestPinnedWorkers…).
	before := p.Launched()
	res, err := explore.Run(explore.Options{Algorithm: name, N: 5, Schedules: 12, Seed: 4, Workers: 1})
	must(t, err)
	if res.Failed() {
		t.Fatalf("bully-go failed a claim: %+v", res.Failing[0])
	}
	if got := p.Launched() - before; got != 5 {
		t.Errorf("%d processes launched for 12 schedules of 5 nodes on one worker, want 5", got)
	}
	// And the next exploration in this process plays on the same five:
	// the last schedule's machines hand theirs back when a worker ends.
	before = p.Launched()
	_, err = explore.Run(explore.Options{Algorithm: name, N: 5, Schedules: 12, Seed: 5, Workers: 1})
	must(t, err)
	if got := p.Launched() - before; got != 0 {
		t.Errorf("a second exploration launched %d processes, want 0 (the first's are idle)", got)
	}
}

// TestServeAnswersForAnAlgorithmThatClaimsNothing: Serve answers the
// start of an algorithm without Claims with no claims (and plays it).
func TestServeAnswersForAnAlgorithmThatClaimsNothing(t *testing.T) {
	alg, err := election.Lookup("bully")
	must(t, err)
	alg.Claims = nil
	cfg := election.Config{ID: 1, Members: election.FirstIDs(3), Quorum: election.NoQuorum, Timing: election.DefaultTiming}
	var in, out bytes.Buffer
	must(t, json.NewEncoder(&in).Encode(program.Request{V: program.Version, Seq: 1, Event: election.Event{Kind: election.EventStart}, Init: program.InitOf(cfg)}))
	must(t, program.Serve(&in, &out, alg))
	a, err := program.DecodeAnswer(bytes.TrimSuffix(out.Bytes(), []byte("\n")), 1, 1)
	must(t, err)
	if a.Claims != nil || len(a.Effects) == 0 || len(a.ElectionTypes) == 0 {
		t.Errorf("answer %+v: want no claims, Bully's effects and its election types", a)
	}
}
