package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func jam(s *Sim, id election.NodeID) error {
	return s.Apply(chaos.Fault{Op: chaos.Jam, Nodes: []election.NodeID{id}}, "")
}

type linkMsg struct {
	at  time.Time
	msg election.Message
}

// byLink lists the messages of kind (send or recv) on each link, in order.
func byLink(mem *history.Memory, kind history.Kind) map[[2]election.NodeID][]linkMsg {
	out := map[[2]election.NodeID][]linkMsg{}
	for _, r := range mem.Records() {
		if r.Kind == kind && r.Msg != nil {
			l := [2]election.NodeID{r.Msg.From, r.Msg.To}
			out[l] = append(out[l], linkMsg{r.Time, *r.Msg})
		}
	}
	return out
}

// TestJamHoldsThenDeliversInOrderAtHeal: nothing to or from a jammed node
// is received while the jam holds, nothing is lost, and at the heal every
// held message is received at that instant, each link's in the order it
// was sent; links not touching the node are untouched.
func TestJamHoldsThenDeliversInOrderAtHeal(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(4), Delay: Uniform(time.Millisecond, 50*time.Millisecond), Seed: 5}, &mem)
	if err := jam(s, 2); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(time.Second)
	healAt := s.Time()
	for l, recvs := range byLink(&mem, history.KindRecv) {
		if l[0] == 2 || l[1] == 2 {
			t.Fatalf("link %d->%d received %d messages while 2 was jammed", l[0], l[1], len(recvs))
		}
	}
	lostBefore := s.Counts().Lost
	if err := s.Heal(); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Second)
	if s.Counts().Lost != lostBefore || lostBefore != 0 {
		t.Fatalf("lost %d messages (%d before the heal): a jam loses none", s.Counts().Lost, lostBefore)
	}
	sends, recvs := byLink(&mem, history.KindSend), byLink(&mem, history.KindRecv)
	held := 0
	for l, sent := range sends {
		got := recvs[l]
		if len(got) != len(sent) {
			t.Fatalf("link %d->%d: sent %d, received %d", l[0], l[1], len(sent), len(got))
		}
		for i := range sent {
			if !reflect.DeepEqual(got[i].msg, sent[i].msg) {
				t.Fatalf("link %d->%d: message %d received out of order: %v, sent %v", l[0], l[1], i, got[i].msg, sent[i].msg)
			}
			if l[0] == 2 || l[1] == 2 {
				if !got[i].at.Equal(healAt) {
					t.Fatalf("link %d->%d: message %d received at %v, want at the heal %v", l[0], l[1], i, got[i].at, healAt)
				}
				held++
			}
		}
	}
	if held == 0 {
		t.Fatal("nothing was held: the probe sent nothing to or from node 2")
	}
}

// TestJamHeldMessagesAndDownNodes: what a killed sender sent and a live
// receiver holds arrives at the heal; what a receiver held when it was
// killed is lost with it.
func TestJamHeldMessagesAndDownNodes(t *testing.T) {
	var mem history.Memory
	s := newSim(t, Options{Algorithm: "test-fifo", Members: election.FirstIDs(3)}, &mem)
	if err := jam(s, 1); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.RunFor(500 * time.Millisecond)
	sends := byLink(&mem, history.KindSend)
	if len(sends[[2]election.NodeID{1, 2}]) == 0 {
		t.Fatalf("node 1 sent nothing to 2: sends %v", sends)
	}
	if err := s.Kill(1); err != nil { // the sender: what 2 and 3 hold of it still arrives
		t.Fatal(err)
	}
	if err := s.Kill(2); err != nil { // a receiver: what it held is lost
		t.Fatal(err)
	}
	lost := s.Counts().Lost
	if want := len(sends[[2]election.NodeID{1, 2}]) + len(sends[[2]election.NodeID{3, 2}]); lost < len(sends[[2]election.NodeID{1, 2}]) || want == 0 {
		t.Fatalf("lost %d after killing receiver 2, want at least what 1 sent it (%d)", lost, len(sends[[2]election.NodeID{1, 2}]))
	}
	if err := s.Heal(); err != nil {
		t.Fatal(err)
	}
	s.RunFor(time.Millisecond)
	recvs := byLink(&mem, history.KindRecv)
	if got, want := len(recvs[[2]election.NodeID{1, 3}]), len(sends[[2]election.NodeID{1, 3}]); got != want {
		t.Fatalf("3 received %d of the %d messages killed node 1 sent it during the jam", got, want)
	}
	if n := len(recvs[[2]election.NodeID{1, 2}]); n != 0 {
		t.Fatalf("killed receiver 2 received %d messages", n)
	}
}
