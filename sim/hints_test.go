package sim

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// hintProbe shows every failure hint it gets as a view: Leader is the peer
// the hint was about, Epoch counts hints.
type hintProbe struct {
	hints uint64
	view  election.View
}

func (p *hintProbe) View() election.View { return p.view }

func (p *hintProbe) Step(ev election.Event) []election.Effect {
	if ev.Kind != election.EventPeerDown {
		return nil
	}
	p.hints++
	p.view = election.View{Leader: ev.Peer, Epoch: p.hints, Role: election.Follower}
	return []election.Effect{{Kind: election.EffectView, View: p.view}}
}

func init() {
	election.Register(election.Algorithm{
		Name: "test-hints", Title: "hint probe (test only)", Topology: "complete",
		New:    func(election.Config) (election.Machine, error) { return &hintProbe{}, nil },
		Claims: func(election.QuorumMode) []election.Property { return nil },
	})
}

// hintsAbout lists, per receiver, when it was hinted about peer.
func hintsAbout(recs []history.Record, peer election.NodeID) map[election.NodeID][]time.Duration {
	out := map[election.NodeID][]time.Duration{}
	for _, r := range recs {
		if r.Kind == history.KindView && r.View.Leader == peer {
			out[r.Node] = append(out[r.Node], r.Time.Sub(history.SimOrigin))
		}
	}
	return out
}

func TestKilledNodesPeersAreHintedWithinTheCrashDelay(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 3}, &mem)
	s.Start()
	s.RunFor(time.Second)
	if err := s.Kill(5); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	got := hintsAbout(mem.Records(), 5)
	for _, id := range election.FirstIDs(4) {
		if len(got[id]) != 1 {
			t.Fatalf("node %d was hinted about the killed 5 at %v, want once", id, got[id])
		}
		if d := got[id][0] - time.Second; d < DefaultHints.Crash.Min || d > DefaultHints.Crash.Max {
			t.Errorf("node %d hinted %v after the kill, want within [%v, %v]", id, d, DefaultHints.Crash.Min, DefaultHints.Crash.Max)
		}
	}
}

func TestAPauseShorterThanThePingTimeoutGivesNoHintALongerOneDoes(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 4}, &mem)
	s.Start()
	s.RunFor(time.Second)
	s.Pause(5)
	s.RunFor(DefaultHints.Silence.Min - time.Millisecond)
	s.Resume(5)
	s.RunFor(2 * time.Second)
	if got := hintsAbout(mem.Records(), 5); len(got) != 0 {
		t.Fatalf("a pause of %v (under the ping timeout) hinted %v", DefaultHints.Silence.Min-time.Millisecond, got)
	}
	at := s.Now()
	s.Pause(5)
	s.RunFor(2 * time.Second)
	got := hintsAbout(mem.Records(), 5)
	for _, id := range election.FirstIDs(4) {
		if len(got[id]) != 1 || got[id][0]-at < DefaultHints.Silence.Min || got[id][0]-at > DefaultHints.Silence.Max {
			t.Errorf("node %d hinted at %v after a long pause from %v, want once within the ping timeout", id, got[id], at)
		}
	}
}

func TestACutLinkHintsBothEndsUnlessHealedFirst(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 5}, &mem)
	s.Start()
	s.Cut(1, 2)
	s.Cut(2, 1)
	s.RunFor(100 * time.Millisecond)
	s.Heal()
	s.RunFor(2 * time.Second)
	if got := hintsAbout(mem.Records(), 2); len(got) != 0 {
		t.Fatalf("a cut healed within 100ms hinted %v", got)
	}
	s.Cut(1, 2)
	s.Cut(2, 1)
	s.RunFor(2 * time.Second)
	if about2, about1 := hintsAbout(mem.Records(), 2), hintsAbout(mem.Records(), 1); len(about2[1]) != 1 || len(about1[2]) != 1 || len(about2) != 1 || len(about1) != 1 {
		t.Fatalf("the link 1-2 cut both ways: hints about 2 %v, about 1 %v; want 1 hinted about 2 and 2 about 1, once each, and no one else", about2, about1)
	}
}

// TestAOneWayCutHintsNoOne: a one-way cut is a message-level cut at the
// receiver, as in containers: the route between the two stays up, so
// neither end hears of it.
func TestAOneWayCutHintsNoOne(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 5}, &mem)
	s.Start()
	s.Cut(1, 2)
	s.RunFor(2 * time.Second)
	if about2, about1 := hintsAbout(mem.Records(), 2), hintsAbout(mem.Records(), 1); len(about2) != 0 || len(about1) != 0 {
		t.Fatalf("a one-way cut 1->2 held: hints about 2 %v, about 1 %v; want none", about2, about1)
	}
}

func TestHintsOffGivesNone(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 6, Hints: Hints{Off: true}}, &mem)
	s.Start()
	s.Kill(5)
	s.Pause(4)
	s.Apply(chaos.Fault{Op: chaos.Partition, Groups: [][]election.NodeID{{1}, {2, 3}}}, "")
	s.RunFor(3 * time.Second)
	for _, r := range mem.Records() {
		if r.Kind == history.KindView {
			t.Fatalf("hints off, yet %v", r)
		}
	}
}

// TestAThawedNodeHearsOfThePeersThatClosedItsRoutes: while node 5 is paused
// past the ping timeout its peers close their routes to it; when it thaws it
// reads those closes at once (in containers 23-39 ms after docker unpause).
// A pause under the ping timeout closed nothing and tells it nothing.
func TestAThawedNodeHearsOfThePeersThatClosedItsRoutes(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 8}, &mem)
	s.Start()
	s.RunFor(time.Second)
	s.Pause(5)
	s.RunFor(DefaultHints.Silence.Min - time.Millisecond)
	s.Resume(5)
	s.RunFor(2 * time.Second)
	for _, r := range mem.Records() {
		if r.Kind == history.KindView && r.Node == 5 {
			t.Fatalf("a pause under the ping timeout, yet the thawed node 5 was hinted: %v", r)
		}
	}
	s.Pause(5)
	s.RunFor(2 * time.Second)
	thawed := s.Now()
	s.Resume(5)
	s.RunFor(time.Second)
	for _, id := range election.FirstIDs(4) {
		got := hintsAbout(mem.Records(), id)[5]
		if len(got) != 1 || got[0]-thawed < DefaultHints.Crash.Min || got[0]-thawed > DefaultHints.Crash.Max {
			t.Errorf("thawed node 5 was hinted about %d at %v (thawed at %v), want once within the crash delay", id, got, thawed)
		}
	}
}

// TestAKillBehindACutIsHeardOnlyWhenTheRouteTimesOut: the dying node's
// closing packets are dropped by the cut like everything else, so the peer
// behind the cut hears only from the route's ping timeout, heal or no heal
// (a dead node never answers a ping); the others hear at once.
func TestAKillBehindACutIsHeardOnlyWhenTheRouteTimesOut(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-hints", Seed: 9}, &mem)
	s.Start()
	s.RunFor(time.Second)
	cut := s.Now()
	s.Cut(5, 1)
	s.Cut(1, 5)
	s.RunFor(100 * time.Millisecond)
	killed := s.Now()
	if err := s.Kill(5); err != nil {
		t.Fatal(err)
	}
	s.RunFor(100 * time.Millisecond)
	s.Heal()
	s.RunFor(2 * time.Second)
	got := hintsAbout(mem.Records(), 5)
	if len(got[1]) != 1 || got[1][0]-cut < DefaultHints.Silence.Min || got[1][0]-cut > DefaultHints.Silence.Max {
		t.Errorf("node 1, cut off from 5 before 5 died, was hinted at %v (cut at %v), want once within the ping timeout of the cut", got[1], cut)
	}
	for _, id := range []election.NodeID{2, 3, 4} {
		if len(got[id]) != 1 || got[id][0]-killed > DefaultHints.Crash.Max {
			t.Errorf("node %d was hinted about the killed 5 at %v (killed at %v), want once within the crash delay", id, got[id], killed)
		}
	}
	if h := hintsAbout(mem.Records(), 1); len(h) != 0 {
		t.Errorf("5 died: nobody is left to be hinted about 1, yet %v", h)
	}
}
