package sim

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func newSim(t *testing.T, opts Options, sink history.Sink) *Sim {
	t.Helper()
	if opts.Members == nil {
		opts.Members = election.FirstIDs(5)
	}
	s, err := New(opts, sink)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func allAgreeOn(s *Sim, want election.NodeID) bool {
	st := s.State()
	for _, id := range s.Members() {
		if st.Live(id) && st.Views[id].Leader != want {
			return false
		}
	}
	return true
}

func TestFaultFreeRunElectsHighestAndEveryoneAgrees(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid", Members: []election.NodeID{3, 1, 4, 5, 2}}, nil)
	s.Start()
	if !s.RunUntilQuiet(10 * time.Second) {
		t.Fatal("never quiet")
	}
	if !allAgreeOn(s, 5) {
		t.Fatalf("views %v, want every node on 5", s.State().Views)
	}
	c := s.Counts()
	// Every node floods its ID once at start: n(n-1) ELECTIONs, plus
	// replies from nodes that know better.
	if c.ByType["ELECTION"] < 20 || c.Election != c.ByType["ELECTION"] {
		t.Fatalf("counts %+v: want at least 20 ELECTION, all classed as election", c)
	}
}

func TestLeaderKillIsNoticedAndNextHighestTakesOver(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid"}, nil)
	s.Start()
	s.RunFor(time.Second)
	if err := s.Kill(5); err != nil {
		t.Fatal(err)
	}
	if s.Up(5) || s.State().Live(5) {
		t.Fatal("node 5 still up after kill")
	}
	if !s.RunUntil(10*time.Second, func(st chaos.State) bool {
		for _, id := range []election.NodeID{1, 2, 3, 4} {
			if st.Views[id].Leader != 4 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("views %v: want 1-4 on 4 after 5 died", s.State().Views)
	}
}

func TestRestartBuildsFromPersistedState(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid"}, nil)
	s.Start()
	s.RunFor(time.Second)
	if got := s.Durable(3).Epoch; got != 1 {
		t.Fatalf("durable epoch %d after first boot, want 1", got)
	}
	s.Kill(3)
	if err := s.Restart(3); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	if got := s.View(3).Epoch; got != 2 {
		t.Fatalf("view epoch %d after restart, want 2 (the machine saw its persisted epoch 1)", got)
	}
	// Restarting a running node is a recorded no-op (chaos.Decide): it
	// keeps its machine and its view.
	if err := s.Restart(3); err != nil || s.View(3).Epoch != 2 {
		t.Fatalf("restart of the running node 3: %v, view %+v; want a no-op", err, s.View(3))
	}
}

// faultStory plays one run through every kind of fault on s: a partition
// (and then degrade, if given, while it holds), a pause and a kill, and
// their undoing, failing t if the simulator reports an error.
func faultStory(t *testing.T, s *Sim, degrade func()) {
	t.Helper()
	s.Start()
	s.RunFor(700 * time.Millisecond)
	s.Partition([]election.NodeID{1, 2}, []election.NodeID{3, 4, 5})
	if degrade != nil {
		degrade()
	}
	s.RunFor(2 * time.Second)
	s.Pause(2)
	s.Kill(5)
	s.RunFor(time.Second)
	s.Heal()
	s.Resume(2)
	s.Restart(5)
	s.RunFor(2 * time.Second)
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
}

func TestSameSeedGivesByteIdenticalHistory(t *testing.T) {
	run := func(seed int64) []byte {
		var buf bytes.Buffer
		w := history.NewWriter(&buf)
		s := newSim(t, Options{Algorithm: "test-maxid", Seed: seed, Delay: Exponential(time.Millisecond, 4*time.Millisecond), Loss: 0.05}, w)
		faultStory(t, s, nil)
		return buf.Bytes()
	}
	a, b := run(7), run(7)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two runs of seed 7 differ (%d and %d bytes)", len(a), len(b))
	}
	if bytes.Equal(a, run(8)) {
		t.Fatal("seeds 7 and 8 gave the same history: the seed does not reach the network")
	}
}

func TestResetSimulatorRunsAsANewOne(t *testing.T) {
	// A run that leaves everything behind: cuts, a paused node, a dead
	// one, a degraded one, timers and messages still queued.
	play := func(s *Sim) {
		faultStory(t, s, func() {
			s.Apply(chaos.Fault{Op: chaos.Delay, Nodes: election.FirstIDs(3), Params: chaos.ParamsOf(chaos.DelayMS.OfDur(20*time.Millisecond), chaos.DelayJitter.OfDur(5*time.Millisecond))}, "")
		})
	}
	opts := Options{Algorithm: "test-maxid", Seed: 7, Delay: Uniform(500*time.Microsecond, 5*time.Millisecond), Loss: 0.05}
	fresh := func(seed int64) ([]byte, Counts) {
		var buf bytes.Buffer
		o := opts
		o.Seed = seed
		s := newSim(t, o, history.NewWriter(&buf))
		play(s)
		return buf.Bytes(), s.Counts()
	}
	s := newSim(t, opts, nil)
	play(s)
	for _, seed := range []int64{7, 8, 9} {
		var buf bytes.Buffer
		if err := s.Reset(seed, history.NewWriter(&buf)); err != nil {
			t.Fatal(err)
		}
		play(s)
		want, counts := fresh(seed)
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("seed %d: the reset simulator's history differs from a new one's (%d and %d bytes)", seed, buf.Len(), len(want))
		}
		if got := s.Counts(); !reflect.DeepEqual(got, counts) {
			t.Fatalf("seed %d: counts %+v after a reset, %+v new", seed, got, counts)
		}
	}
}

// TestResetSimulatorKeepsOneTypeTable: the message types a simulator has
// seen are kept across Reset, not added again by every run. They were,
// and a simulator reset for some 7,000 schedules (one explorer worker)
// passed 65,535 types and panicked.
func TestResetSimulatorKeepsOneTypeTable(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid", Seed: 1}, nil)
	s.Start()
	s.RunFor(time.Second)
	seen := len(s.names)
	if seen == 0 {
		t.Fatal("the run sent no message")
	}
	for seed := int64(2); seed < 50; seed++ {
		if err := s.Reset(seed, nil); err != nil {
			t.Fatal(err)
		}
		s.Start()
		s.RunFor(time.Second)
	}
	if len(s.names) != seen || len(s.types) != seen {
		t.Fatalf("after 48 resets the simulator holds %d type names and %d type counts, want %d", len(s.names), len(s.types), seen)
	}
}

// timersFired runs the one-node test algorithm alg for a second and lists
// the timers that fired, in order, as "<name>@<virtual time>": the test
// algorithms report a fired timer as a view whose leader is its letter
// (1 = a).
func timersFired(t *testing.T, alg string) []string {
	t.Helper()
	var mem history.Memory
	s := newSim(t, Options{Algorithm: alg, Members: election.FirstIDs(1)}, &mem)
	s.Start()
	s.RunFor(time.Second)
	var got []string
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			got = append(got, string(rune('a'+r.View.Leader-1))+"@"+r.Time.Sub(history.SimOrigin).String())
		}
	}
	return got
}

func TestTimerSetReplacesAndCancelDisarms(t *testing.T) {
	got := timersFired(t, "test-timers")
	want := []string{"a@20ms", "c@30ms"} // a re-armed to 20ms, b cancelled
	if !slices.Equal(got, want) {
		t.Fatalf("timers fired %v, want %v", got, want)
	}
}

// TestTimerRearmedWhileQueued: a timer re-armed while its first event is
// still queued fires once, at its latest deadline, and in the place its
// latest arming gives it among the timers due at the same instant.
func TestTimerRearmedWhileQueued(t *testing.T) {
	got := timersFired(t, "test-rearm")
	want := []string{"v@5ms", "x@10ms", "w@15ms", "z@20ms", "y@20ms", "u@30ms"}
	if !slices.Equal(got, want) {
		t.Fatalf("timers fired %v, want %v", got, want)
	}
}

func TestKilledNodeTimersVanish(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-timers", Members: election.FirstIDs(1)}, &mem)
	s.Start()
	s.RunFor(10 * time.Millisecond)
	s.Kill(1)
	s.RunFor(time.Second)
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			t.Fatalf("a timer of a killed node fired: %+v", r)
		}
	}
}

func TestPausedNodeHandlesWhatWaitedInABurstOnResume(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-timers", Members: election.FirstIDs(1)}, &mem)
	s.Start()
	s.Pause(1)
	s.RunFor(100 * time.Millisecond) // a and c expire while frozen
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			t.Fatalf("a paused node acted: %+v", r)
		}
	}
	s.Resume(1)
	s.RunFor(time.Millisecond)
	var times []time.Duration
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			times = append(times, r.Time.Sub(history.SimOrigin))
		}
	}
	if len(times) != 2 || times[0] != 100*time.Millisecond || times[1] != 100*time.Millisecond {
		t.Fatalf("timers fired at %v, want both at the resume instant 100ms", times)
	}
}

func TestMessagesToAPausedNodeQueueAndArriveOnResume(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(3)}, &mem)
	s.Start()
	if err := s.Pause(3); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	recvBy := func(id election.NodeID) (n int, at time.Duration) {
		for _, r := range mem.Records() {
			if r.Kind == history.KindRecv && r.Node == id {
				n++
				at = r.Time.Sub(history.SimOrigin)
			}
		}
		return
	}
	if n, _ := recvBy(3); n != 0 {
		t.Fatalf("paused node 3 received %d messages", n)
	}
	// A cut made while the messages wait does not lose them: they had
	// crossed the network already.
	s.Cut(1, 3)
	s.Resume(3)
	s.RunFor(time.Millisecond)
	if n, at := recvBy(3); n != 50 || at != time.Second {
		t.Fatalf("node 3 received %d messages, last at %v; want 50 at the resume instant 1s", n, at)
	}
	if v := s.View(3); v.Role == election.Candidate {
		t.Fatalf("held messages were delivered out of order: %v", v)
	}
}

func TestLinksAreFIFOUnderRandomDelay(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(4), Delay: Uniform(time.Millisecond, 50*time.Millisecond), Seed: 3}, nil)
	s.Start()
	s.RunFor(time.Second)
	for _, id := range []election.NodeID{2, 3, 4} {
		if v := s.View(id); v.Role == election.Candidate {
			t.Fatalf("node %d got message %d out of order", id, v.Epoch)
		}
	}
	if c := s.Counts(); c.Delivered != 150 {
		t.Fatalf("delivered %d, want 150", c.Delivered)
	}
}

// heard returns who received from whom.
func heard(mem *history.Memory) map[[2]election.NodeID]int {
	out := map[[2]election.NodeID]int{}
	for _, r := range mem.Records() {
		if r.Kind == history.KindRecv {
			out[[2]election.NodeID{r.Msg.From, r.Node}]++
		}
	}
	return out
}

func TestOneWayCutLosesOneDirectionOnly(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-maxid", Members: election.FirstIDs(3)}, &mem)
	s.Cut(3, 1) // 1 never hears 3; 3 hears 1
	s.Start()
	s.RunFor(3 * time.Second)
	h := heard(&mem)
	if h[[2]election.NodeID{3, 1}] != 0 || h[[2]election.NodeID{1, 3}] == 0 {
		t.Fatalf("deliveries %v: want none 3->1 and some 1->3", h)
	}
	if v := s.View(1); v.Leader == 3 {
		t.Fatalf("node 1 views %v though it cannot hear 3", v)
	}
	st := s.State()
	if st.Reachable(3, 1) || !st.Reachable(1, 3) {
		t.Fatalf("state cuts %v, want only 3->1", st.Cut)
	}
}

func TestNonTransitivePartition(t *testing.T) {
	// 1 and 3 cannot talk; 2 talks to both (a bridge).
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-maxid", Members: election.FirstIDs(3)}, &mem)
	if err := s.Partition([]election.NodeID{1, 2}, []election.NodeID{2, 3}); err != nil {
		t.Fatal(err)
	}
	if got := s.Cuts(); len(got) != 2 || got[0] != [2]election.NodeID{1, 3} || got[1] != [2]election.NodeID{3, 1} {
		t.Fatalf("cuts %v, want 1->3 and 3->1", got)
	}
	s.Start()
	s.RunFor(3 * time.Second)
	h := heard(&mem)
	for _, l := range [][2]election.NodeID{{1, 2}, {2, 1}, {2, 3}, {3, 2}} {
		if h[l] == 0 {
			t.Errorf("nothing delivered %d->%d across the bridge", l[0], l[1])
		}
	}
	if h[[2]election.NodeID{1, 3}]+h[[2]election.NodeID{3, 1}] != 0 {
		t.Fatalf("deliveries %v cross the cut 1-3", h)
	}
	if s.View(2).Leader != 3 {
		t.Fatalf("the bridge 2 views %v, want 3", s.View(2))
	}
}

func TestDeadRecipientLosesMessages(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(2)}, nil)
	s.Start()
	s.Kill(2) // the 50 messages are on the wire
	s.RunFor(time.Second)
	if c := s.Counts(); c.Lost != 50 || c.Delivered != 0 {
		t.Fatalf("counts %+v, want 50 lost to the dead node", c)
	}
}

func TestLossDropsAboutTheConfiguredFraction(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(11), Loss: 0.5, Seed: 1}, nil)
	s.Start()
	s.RunFor(time.Second)
	c := s.Counts()
	if c.Lost+c.Delivered != 500 || c.Lost < 150 || c.Lost > 350 {
		t.Fatalf("counts %+v: want 500 sent with roughly half lost", c)
	}
}

func TestFaultsAreRecordedAsInvokeThenOkOrFail(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-maxid", Members: election.FirstIDs(3)}, &mem)
	s.Start()
	s.RunFor(10 * time.Millisecond)
	s.Stop(2)
	if err := s.Pause(2); err == nil {
		t.Fatal("pausing a stopped node succeeded")
	}
	var got []string
	stopRecord := false
	for _, r := range mem.Records() {
		switch r.Kind {
		case history.KindFault:
			got = append(got, r.Fault.Op+":"+string(r.Fault.Phase))
			if r.Process != history.NemesisProcess || !r.Time.Equal(history.SimOrigin.Add(10*time.Millisecond)) {
				t.Errorf("fault record %+v: want nemesis at 10ms", r)
			}
		case history.KindStop:
			stopRecord = r.Node == 2
		}
	}
	want := []string{"stop:invoke", "stop:ok", "pause:invoke", "pause:fail"}
	if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("fault records %v, want %v", got, want)
	}
	if !stopRecord {
		t.Fatal("a graceful stop wrote no stop record for node 2")
	}
}

func TestRunUntilQuietStopsAfterTheElection(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid"}, nil)
	s.Start()
	if !s.RunUntilQuiet(time.Minute) {
		t.Fatal("not quiet within a minute")
	}
	// Heartbeats go on for ever; quiet must not wait for them.
	if s.Now() > 10*time.Second {
		t.Fatalf("quiet only at %v", s.Now())
	}
}

func TestBackendDrivesTheSimThroughTheChaosInterface(t *testing.T) {
	ctx := context.Background()
	var mem history.Memory
	b := &Backend{}
	spec := chaos.ClusterSpec{Name: "t", Algorithm: "test-maxid", Members: election.FirstIDs(5), Seed: 1}
	if err := b.Start(ctx, spec, &mem); err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	leaderIs := func(id election.NodeID) func(chaos.State) bool {
		return func(st chaos.State) bool {
			for _, m := range spec.Members {
				if st.Live(m) && st.Views[m].Leader != id {
					return false
				}
			}
			return true
		}
	}
	if ok, err := b.Await(ctx, 5*time.Second, leaderIs(5)); !ok || err != nil {
		t.Fatalf("no agreement on 5: %v %v", b.State().Views, err)
	}
	before := b.Now()
	if err := b.Apply(ctx, chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1, 2, 3, 4}, {5}}}, "leader"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Await(ctx, 5*time.Second, leaderIs(4)); ok {
		t.Fatal("5 still live and viewing itself; the condition cannot hold")
	}
	if got := b.Now().Sub(before); got != 5*time.Second {
		t.Fatalf("Await advanced %v of virtual time, want the full 5s", got)
	}
	if err := b.Apply(ctx, chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{5}}, "leader"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Await(ctx, 5*time.Second, leaderIs(4)); !ok {
		t.Fatalf("no agreement on 4 after 5 died: %v", b.State().Views)
	}
	if err := b.Apply(ctx, chaos.Fault{Op: chaos.Restart, Nodes: []election.NodeID{9}}, "9"); err == nil {
		t.Fatal("restarting a non-member succeeded")
	}
}

func TestNewRejectsWhatCannotRun(t *testing.T) {
	cases := map[string]Options{
		"unknown algorithm": {Algorithm: "nope", Members: election.FirstIDs(3)},
		"no members":        {Algorithm: "test-maxid"},
		"duplicate id":      {Algorithm: "test-maxid", Members: []election.NodeID{1, 1}},
		"quorum":            {Algorithm: "test-maxid", Members: election.FirstIDs(3), Quorum: election.Majority},
		"loss":              {Algorithm: "test-maxid", Members: election.FirstIDs(3), Loss: 2},
		"delay":             {Algorithm: "test-maxid", Members: election.FirstIDs(3), Delay: Uniform(5, 1)},
	}
	for name, o := range cases {
		if _, err := New(o, nil); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestParseDist(t *testing.T) {
	for in, want := range map[string]Dist{
		"2ms":             Constant(2 * time.Millisecond),
		"uniform:1ms-5ms": Uniform(time.Millisecond, 5*time.Millisecond),
		"exp:1ms-3ms":     Exponential(time.Millisecond, 3*time.Millisecond),
	} {
		got, err := ParseDist(in)
		if err != nil || got != want {
			t.Errorf("ParseDist(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "uniform:5ms", "uniform:5ms-1ms", "gauss:1ms-2ms"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) succeeded", bad)
		}
	}
}

func TestArrange(t *testing.T) {
	best, _ := Arrange("best", 4, 0)
	worst, _ := Arrange("worst", 4, 0)
	if fmt.Sprint(best) != "[1 2 3 4]" || fmt.Sprint(worst) != "[4 3 2 1]" {
		t.Fatalf("best %v worst %v", best, worst)
	}
	a, _ := Arrange("random", 50, 7)
	b, _ := Arrange("random", 50, 7)
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(Must(Arrange("best", 50, 0))) {
		t.Fatal("random arrangement is not a seeded shuffle")
	}
	if _, err := Arrange("sideways", 4, 0); err == nil || !strings.Contains(err.Error(), "best, worst, random") {
		t.Fatalf("bad arrangement error %v should list the valid ones", err)
	}
}

func Must(ids []election.NodeID, err error) []election.NodeID {
	if err != nil {
		panic(err)
	}
	return ids
}

func TestParseIDsNamesTheBadElement(t *testing.T) {
	ids, err := ParseIDs("3,1, 4")
	if err != nil || fmt.Sprint(ids) != "[3 1 4]" {
		t.Fatalf("ParseIDs = %v, %v", ids, err)
	}
	for in, want := range map[string]string{
		"3,x,4": `element 2 ("x")`,
		"3,0":   `element 2 ("0")`,
		"3,1,3": "element 3 (3) repeats element 1",
		"":      `element 1 ("")`,
	} {
		if _, err := ParseIDs(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIDs(%q) error %v, want it to say %s", in, err, want)
		}
	}
}

func TestRunComplexityCountsAFaultFreeElection(t *testing.T) {
	c, err := RunComplexity(Options{Algorithm: "test-maxid"}, []election.NodeID{2, 5, 1, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Agreed || c.Leader != 5 || !c.Quiet || c.Messages != c.ByType["ELECTION"] || c.Messages < 20 || c.Formula != nil {
		t.Fatalf("%+v", c)
	}
}

func TestStartTwiceDoesNotReviveTheDead(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-maxid", Members: election.FirstIDs(3)}, nil)
	s.Start()
	s.Kill(3)
	s.Start()
	if s.Up(3) {
		t.Fatal("a second Start booted a killed node; only Restart should")
	}
}

func TestDelayFaultSlowsOnlyTheNamedNode(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(3)}, &mem)
	if err := s.Apply(chaos.Fault{Op: chaos.Delay, Nodes: []election.NodeID{3}, Params: chaos.ParamsOf(chaos.DelayMS.OfDur(40*time.Millisecond), chaos.DelayJitter.OfDur(10*time.Millisecond))}, "3"); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(time.Second)
	first := map[election.NodeID]time.Duration{}
	for _, r := range mem.Records() {
		if r.Kind == history.KindRecv {
			if _, ok := first[r.Node]; !ok {
				first[r.Node] = r.Time.Sub(history.SimOrigin)
			}
		}
	}
	if first[2] != time.Millisecond || first[3] < 41*time.Millisecond || first[3] > 51*time.Millisecond {
		t.Fatalf("first arrivals %v: want 1ms at 2 and 41-51ms at the delayed 3", first)
	}
	if v := s.View(3); v.Role == election.Candidate {
		t.Fatalf("jitter reordered the link to 3: %v", v)
	}
}

func TestLossFaultIsPerNodeAndHealed(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(3), Seed: 2}, nil)
	s.Apply(chaos.Fault{Op: chaos.Loss, Nodes: []election.NodeID{3}, Params: chaos.ParamsOf(chaos.LossPercent.Of(1))}, "3")
	s.Start()
	s.RunFor(time.Second)
	if c := s.Counts(); c.Delivered != 50 || c.Lost != 50 {
		t.Fatalf("counts %+v: want node 2's 50 delivered and node 3's 50 lost", c)
	}
}

func TestRestartedNodeStartsWithoutAView(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-timers", Members: election.FirstIDs(1)}, &mem)
	s.Start()
	s.RunFor(time.Second)
	if _, ok := s.State().Views[1]; !ok {
		t.Fatal("no view after the timers fired")
	}
	s.Kill(1)
	s.Restart(1)
	if v, ok := s.State().Views[1]; ok {
		t.Fatalf("restarted node still shows the dead process's view %v", v)
	}
	s.RunFor(time.Second)
	views := 0
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			views++
		}
	}
	if views != 4 {
		t.Fatalf("%d view records, want 4: the second boot's views repeat the first's and must be recorded too", views)
	}
}

// TestRestartHandsBackTheDurableBlob: the opaque blob a machine persisted
// is what its next boot gets, byte for byte.
func TestRestartHandsBackTheDurableBlob(t *testing.T) {
	s := newSim(t, Options{Algorithm: "test-blob", Members: election.FirstIDs(2)}, nil)
	s.Start()
	s.RunFor(time.Millisecond)
	for boot := 1; boot <= 3; boot++ {
		if got := s.Durable(1).Blob; !slices.Equal(got, []byte{0, 1, 2}[:boot]) {
			t.Fatalf("after boot %d node 1 persisted %v, want %v", boot, got, []byte{0, 1, 2}[:boot])
		}
		s.Kill(1)
		if err := s.Restart(1); err != nil {
			t.Fatal(err)
		}
		s.RunFor(time.Millisecond)
		if got := s.View(1).Epoch; got != uint64(boot) {
			t.Fatalf("boot %d started with a %d-byte blob, want %d", boot+1, got, boot)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestPersistOverTheBlobBoundIsRefused: a machine that persists more than
// election.MaxDurableBlob keeps its old state and the run reports why.
func TestPersistOverTheBlobBoundIsRefused(t *testing.T) {
	opts := election.Options{"size": strconv.Itoa(election.MaxDurableBlob + 1)}
	s := newSim(t, Options{Algorithm: "test-blob", Members: election.FirstIDs(2), Options: opts}, nil)
	s.Start()
	s.RunFor(time.Millisecond)
	if got := len(s.Durable(1).Blob); got != 0 {
		t.Errorf("node 1 kept a %d-byte blob, want the refused persist to leave nothing", got)
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "MaxDurableBlob") {
		t.Errorf("Err() = %v, want the refused persist naming MaxDurableBlob", err)
	}
}

// TestMadeUpTypesFillNoMoreThanOneRun: a machine that makes up a type per
// message fills the type table within one run, never across runs on a
// reset simulator: two runs of 40,000 new types each need room for 40,000.
func TestMadeUpTypesFillNoMoreThanOneRun(t *testing.T) {
	opts := election.Options{"types": "40000"}
	s := newSim(t, Options{Algorithm: "test-types", Members: election.FirstIDs(2), Options: opts, Seed: 1}, nil)
	for seed := int64(1); seed <= 2; seed++ {
		if seed > 1 {
			if err := s.Reset(seed, nil); err != nil {
				t.Fatal(err)
			}
		}
		s.Start()
		s.RunFor(time.Millisecond)
		if err := s.Err(); err != nil {
			t.Fatalf("run %d: %v", seed, err)
		}
		if got := s.Counts().Total(); got != 40000 {
			t.Fatalf("run %d sent %d messages, want 40000", seed, got)
		}
	}
	if len(s.names) != 40000 {
		t.Errorf("the table holds %d type names after the second run, want its 40000", len(s.names))
	}
}

// TestTypesBeyondTheTableAreRefused: a run's MaxTypes+1st type is not
// sent. A machine that can fail by itself (a program) crashes for it, with
// the stop record a failed program gets; any other machine's run reports
// it through Err. Neither is a panic.
func TestTypesBeyondTheTableAreRefused(t *testing.T) {
	opts := election.Options{"types": strconv.Itoa(MaxTypes + 5)}
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-types-crasher", Members: election.FirstIDs(2), Options: opts, OmitMessages: true}, &mem)
	s.Start()
	s.RunFor(time.Millisecond)
	if got := s.Counts().Total(); got != MaxTypes {
		t.Errorf("the program's node sent %d messages, want the %d the table has room for", got, MaxTypes)
	}
	crashes := s.Crashes()
	if len(crashes) != 1 || crashes[0].Node != 1 || !strings.Contains(crashes[0].Err.Error(), "sim.MaxTypes") {
		t.Fatalf("crashes %v, want node 1's, naming sim.MaxTypes", crashes)
	}
	if s.State().Live(1) {
		t.Error("node 1 is live after its machine broke the protocol")
	}
	var stop *history.Record
	for _, r := range mem.Records() {
		if r.Kind == history.KindStop && r.Node == 1 {
			stop = &r
		}
	}
	if stop == nil || !strings.HasPrefix(stop.Reason, history.ReasonProgramFailed+": ") {
		t.Errorf("node 1's stop record %+v, want one whose reason begins %q", stop, history.ReasonProgramFailed)
	}

	s = newSim(t, Options{Algorithm: "test-types", Members: election.FirstIDs(2), Options: opts}, nil)
	s.Start()
	s.RunFor(time.Millisecond)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "sim.MaxTypes") {
		t.Errorf("Err() = %v, want the refused type naming sim.MaxTypes", err)
	}
	if len(s.Crashes()) != 0 || !s.State().Live(1) {
		t.Error("a built-in machine's node crashed for a refused type; its run reports it instead")
	}
}

// TestBackendCutsAlongItsPlacement: the simulator groups nodes by the
// cluster's placement, so the partition shape engines cuts one group from
// the other and each side elects its own highest.
func TestBackendCutsAlongItsPlacement(t *testing.T) {
	ctx := context.Background()
	var mem history.Memory
	b := &Backend{}
	spec := chaos.ClusterSpec{Name: "t", Algorithm: "test-maxid", Members: election.FirstIDs(5), Seed: 1, Placement: chaos.Placement{{1, 3, 5}, {2, 4}}}
	if err := b.Start(ctx, spec, &mem); err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	f, err := chaos.Spec{Op: chaos.Partition, Partition: &chaos.PartitionSpec{Shape: chaos.Engines}}.Resolve(b.State(), spec.Members, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(ctx, f, "engines"); err != nil {
		t.Fatal(err)
	}
	sides := func(st chaos.State) bool {
		return st.Views[1].Leader == 5 && st.Views[3].Leader == 5 && st.Views[2].Leader == 4 && st.Views[4].Leader == 4
	}
	if ok, _ := b.Await(ctx, 10*time.Second, sides); !ok {
		t.Fatalf("views %v: want {1,3,5} led by 5 and {2,4} by 4", b.State().Views)
	}
}
