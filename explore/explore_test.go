package explore

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// floodMax: every node floods the highest ID it has seen; no heartbeats,
// no failure detection. It claims agreement, which crashes break, so the
// explorer has something to find.
type floodMax struct {
	cfg  election.Config
	best election.NodeID
	view election.View
}

func (m *floodMax) View() election.View { return m.view }

func (m *floodMax) Step(ev election.Event) []election.Effect {
	var out []election.Effect
	switch ev.Kind {
	case election.EventStart:
		m.best = m.cfg.ID
		out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "ELECTION", Candidate: m.cfg.ID}})
	case election.EventReceive:
		if ev.Msg.Candidate > m.best {
			m.best = ev.Msg.Candidate
		} else if ev.Msg.Candidate < m.best {
			out = append(out, election.Effect{Kind: election.EffectSend, Msg: election.Message{Type: "ELECTION", To: ev.Msg.From, Candidate: m.best}})
		}
	}
	role := election.Follower
	if m.best == m.cfg.ID {
		role = election.Leader
	}
	if v := (election.View{Leader: m.best, Role: role}); v != m.view {
		m.view = v
		out = append(out, election.Effect{Kind: election.EffectView, View: v})
	}
	return out
}

func init() {
	election.Register(election.Algorithm{
		Name: "test-floodmax", Title: "max flooding without failure detection (test only)", Topology: "complete",
		New:           func(cfg election.Config) (election.Machine, error) { return &floodMax{cfg: cfg}, nil },
		ElectionTypes: []string{"ELECTION"},
		Claims: func(election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement}
		},
	})
}

func TestScheduleZeroIsTheTopSeed(t *testing.T) {
	if got := ScheduleSeed(42, 0); got != 42 {
		t.Fatalf("ScheduleSeed(42, 0) = %d", got)
	}
	seen := map[int64]bool{}
	for i := 0; i < 1000; i++ {
		s := ScheduleSeed(42, i)
		if seen[s] || (i > 0 && s < 0) {
			t.Fatalf("schedule %d seed %d repeats or is negative", i, s)
		}
		seen[s] = true
	}
}

func TestExplorerFindsBrokenAgreementAndItsReplayReproducesIt(t *testing.T) {
	opts := Options{Algorithm: "test-floodmax", N: 4, Schedules: 60, Seed: 9, Workers: 2}
	res, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures[check.Agreement] == 0 || !res.Failed() || len(res.Replay) == 0 {
		t.Fatalf("no agreement failure found in 60 schedules of an algorithm without failure detection: %+v", res)
	}
	// Nothing stops two flooding nodes from both leading across a cut.
	if res.SplitBrainSchedules == 0 || len(res.SplitBrain) == 0 {
		t.Fatalf("no split brain found: %+v", res)
	}
	bad := res.Failing[0]
	again, err := One(opts, bad.Seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	again.Index = bad.Index
	if !reflect.DeepEqual(again.Faults, bad.Faults) || !reflect.DeepEqual(again.Failed, bad.Failed) {
		t.Fatalf("replaying seed %d gave\n%v %v\nwant\n%v %v", bad.Seed, again.Faults, again.Failed, bad.Faults, bad.Failed)
	}
	want := "ringleader sim explore --algorithm test-floodmax --n 4 --schedules 1 --seed "
	if len(bad.Replay) <= len(want) || bad.Replay[:len(want)] != want {
		t.Fatalf("replay command %q", bad.Replay)
	}
	// A one-schedule run with that seed is that schedule.
	single, err := Run(Options{Algorithm: "test-floodmax", N: 4, Schedules: 1, Seed: bad.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if single.FailedSchedules != 1 || !reflect.DeepEqual(single.Failing[0].Faults, bad.Faults) {
		t.Fatalf("--schedules 1 --seed %d did not replay the failing schedule: %+v", bad.Seed, single)
	}
}

func TestExplorationDoesNotDependOnParallelism(t *testing.T) {
	a, err := Run(Options{Algorithm: "test-floodmax", N: 5, Schedules: 30, Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(Options{Algorithm: "test-floodmax", N: 5, Schedules: 30, Seed: 3, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Failures, b.Failures) || a.SplitBrainSchedules != b.SplitBrainSchedules || !reflect.DeepEqual(a.Replay, b.Replay) {
		t.Fatalf("1 worker: %v %d %v\n3 workers: %v %d %v", a.Failures, a.SplitBrainSchedules, a.Replay, b.Failures, b.SplitBrainSchedules, b.Replay)
	}
}

func TestSchedulesUseEveryKindOfFault(t *testing.T) {
	kinds := map[string]bool{}
	for i := 0; i < 40; i++ {
		sc, err := One(Options{Algorithm: "test-floodmax", N: 5}, ScheduleSeed(1, i), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sc.Faults {
			for _, k := range []string{"kill", "stop", "restart", "pause", "resume", "partition", "heal", "loss", "delay"} {
				if containsWord(f, k) {
					kinds[k] = true
				}
			}
			if containsWord(f, "FAILED") {
				t.Fatalf("schedule %d: the generator drew a fault that cannot apply: %s", i, f)
			}
		}
	}
	if len(kinds) != 9 {
		t.Fatalf("40 schedules used only %v", kinds)
	}
}

// The schedules are played and counted a chunk at a time, so that memory
// does not grow with their number; where the chunks end changes nothing:
// the same counts, the same schedules kept in the same order, the same
// replays, with one worker or several, in a shard or whole.
func TestExplorationDoesNotDependOnWhereChunksEnd(t *testing.T) {
	o := Options{Algorithm: "test-floodmax", N: 5, Schedules: 61, Seed: 5, Workers: 3, Keep: 50}
	whole, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if whole.FailedSchedules < 10 {
		t.Fatalf("%d failing schedules of 61: the test wants more to keep", whole.FailedSchedules)
	}
	defer func(n int) { chunkSchedules = n }(chunkSchedules)
	for _, chunk := range []int{1, 7, 60} {
		chunkSchedules = chunk
		for _, workers := range []int{1, 4} {
			o.Workers = workers
			got, err := Run(o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, whole) {
				t.Errorf("chunks of %d, %d workers:\n%+v\nwant, in one chunk:\n%+v", chunk, workers, got, whole)
			}
		}
	}
	// A shard's part, in chunks of 7, is what it is in one chunk.
	o.Shard = Shard{Index: 2, Count: 3}
	chunkSchedules = 7
	a, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	chunkSchedules = 4096
	b, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || a.Schedules != 20 {
		t.Errorf("shard 2/3 of 61 in chunks of 7 and of 4096 differ, or hold %d schedules, not 20:\n%+v\n%+v", a.Schedules, a, b)
	}
}

func TestBadOptionsAreRejected(t *testing.T) {
	for name, o := range map[string]Options{
		"unknown algorithm": {Algorithm: "nope", N: 3, Schedules: 1},
		"no nodes":          {Algorithm: "test-floodmax", N: 0, Schedules: 1},
		"quorum":            {Algorithm: "test-floodmax", N: 3, Schedules: 1, Quorum: election.Majority},
	} {
		if _, err := Run(o); err == nil {
			t.Errorf("%s: Run succeeded", name)
		}
	}
}

// An exploration whose simulators pass their memory budget ends with the
// simulator's memory CapError, naming the schedule, rather than growing
// until the kernel kills it; clusters that cannot fit in the budget even
// at sim.MinNodeBytes a node, one per worker, are refused before any is
// built.
func TestExplorationStopsAtItsMemoryBudget(t *testing.T) {
	o := Options{Algorithm: "bully", N: 200, Schedules: 4, Workers: 2, MaxMemory: 2 * 200 * sim.MinNodeBytes}
	_, err := Run(o)
	var ce *sim.CapError
	if !errors.As(err, &ce) || ce.Cap != "memory" || !strings.Contains(err.Error(), "schedule with seed") {
		t.Fatalf("Run past its budget: %v, want the schedule's memory CapError", err)
	}
	o.MaxMemory = 2*200*sim.MinNodeBytes - 1
	if _, err := Run(o); err == nil || !strings.Contains(err.Error(), "--n 200 with 2 workers") {
		t.Errorf("two clusters of 200 in less than their floor: %v, want a refusal naming --n and the workers", err)
	}
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w && (i == 0 || s[i-1] == ' ') {
			return true
		}
	}
	return false
}

func TestKindsRestrictTheFaultsDrawn(t *testing.T) {
	o := Options{Algorithm: "test-floodmax", N: 5, Kinds: []string{"kill", "restart"}}
	for i := 0; i < 20; i++ {
		sc, err := One(o, ScheduleSeed(5, i), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sc.Faults {
			if !containsWord(f, "kill") && !containsWord(f, "restart") {
				t.Fatalf("schedule %d drew %q with kinds kill,restart", i, f)
			}
		}
		if want := " --kinds kill,restart"; sc.Replay[len(sc.Replay)-len(want):] != want {
			t.Fatalf("replay %q does not carry the kinds", sc.Replay)
		}
	}
	if _, err := Run(Options{Algorithm: "test-floodmax", N: 3, Schedules: 1, Kinds: []string{"meteor"}}); err == nil {
		t.Fatal("an unknown fault kind was accepted")
	}
}

func init() {
	election.Register(election.Algorithm{
		Name: "test-floodmax-majority", Title: "max flooding, majority-only with options (test only)", Topology: "complete",
		New:     func(cfg election.Config) (election.Machine, error) { return &floodMax{cfg: cfg}, nil },
		Claims:  func(election.QuorumMode) []election.Property { return []election.Property{election.Agreement} },
		Quorums: []election.QuorumMode{election.Majority},
		Options: []election.OptionSpec{{Name: "fast", Kind: election.OptionBool, Default: "false"}, {Name: "k", Kind: election.OptionInt, Default: "1"}},
	})
}

// TestExplorationRecordsAndReplaysItsOptions: an exploration resolves the
// quorum mode and options, records them in its result, and its replay
// commands spell out every one of them, defaults too, so that the command
// means the same run whatever the defaults of the binary that reads it.
func TestExplorationRecordsAndReplaysItsOptions(t *testing.T) {
	res, err := Run(Options{Algorithm: "test-floodmax-majority", N: 3, Schedules: 2, Seed: 1, Options: election.Options{"fast": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Quorum != "majority" || res.Options.String() != "fast=true,k=1" {
		t.Errorf("result records quorum %q options %q, want majority and fast=true,k=1", res.Quorum, res.Options.String())
	}
	cmd := ReplayCommand(Options{Algorithm: "test-floodmax-majority", Members: []election.NodeID{1, 2, 3}, Quorum: election.Majority, MaxFaults: 12, Options: res.Options}, 7)
	if !strings.HasSuffix(cmd, "--seed 7 --quorum majority --option fast=true --option k=1") {
		t.Errorf("replay command %q: want the quorum mode and every option in force", cmd)
	}
	if _, err := Run(Options{Algorithm: "test-floodmax-majority", N: 3, Schedules: 1, Quorum: election.NoQuorum}); err == nil || !strings.Contains(err.Error(), "does not run with quorum none") {
		t.Errorf("quorum none: %v, want the refusal", err)
	}
}
