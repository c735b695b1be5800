package sim

import (
	"fmt"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/toyelection"
)

// Test-only algorithms. They are registered in this test binary alone; the
// real algorithms live in their own packages.

// timerProbe exercises timer semantics: on start it arms "a" twice (the
// second replaces the first), arms and cancels "b", and arms "c". Each
// firing becomes a view whose Epoch counts firings and whose Leader encodes
// the timer (1 = a, 2 = b, 3 = c), so the history shows what fired when.
type timerProbe struct {
	cfg   election.Config
	fired uint64
	view  election.View
}

func (p *timerProbe) View() election.View { return p.view }

func (p *timerProbe) Step(ev election.Event) []election.Effect {
	ms := p.cfg.Timing.Heartbeat / 10
	switch ev.Kind {
	case election.EventStart:
		return []election.Effect{
			{Kind: election.EffectSetTimer, Timer: "a", After: 1 * ms},
			{Kind: election.EffectSetTimer, Timer: "a", After: 2 * ms},
			{Kind: election.EffectSetTimer, Timer: "b", After: 1 * ms},
			{Kind: election.EffectCancelTimer, Timer: "b"},
			{Kind: election.EffectSetTimer, Timer: "c", After: 3 * ms},
		}
	case election.EventTimer:
		p.fired++
		p.view = election.View{Leader: election.NodeID(ev.Timer[0] - 'a' + 1), Epoch: p.fired, Role: election.Candidate}
		return []election.Effect{{Kind: election.EffectView, View: p.view}}
	}
	return nil
}

// rearmProbe re-arms timers while their first events are still queued:
// on start it arms v (5 ms), x (10 ms), y (20 ms), u (25 ms) and w
// (30 ms); when x fires it arms z for 20 ms, re-arms y for 20 ms (after
// z, so y must now fire after z), pulls w in to 15 ms, and cancels u and
// arms it again for 30 ms. Firings show as views, as with timerProbe.
type rearmProbe struct {
	timerProbe
}

func (p *rearmProbe) Step(ev election.Event) []election.Effect {
	ms := p.cfg.Timing.Heartbeat / 100
	set := func(name string, after time.Duration) election.Effect {
		return election.Effect{Kind: election.EffectSetTimer, Timer: name, After: after}
	}
	switch ev.Kind {
	case election.EventStart:
		return []election.Effect{set("v", 5*ms), set("x", 10*ms), set("y", 20*ms), set("u", 25*ms), set("w", 30*ms)}
	case election.EventTimer:
		out := p.timerProbe.Step(ev)
		if ev.Timer == "x" {
			out = append(out, set("z", 10*ms), set("y", 10*ms), set("w", 5*ms),
				election.Effect{Kind: election.EffectCancelTimer, Timer: "u"}, set("u", 20*ms))
		}
		return out
	}
	return nil
}

// fifoProbe: the first member sends 50 numbered messages to every other
// member on start; a receiver that sees a number out of order shows it in
// its view (Role Candidate, Epoch the number it got).
type fifoProbe struct {
	cfg  election.Config
	next uint64
	view election.View
}

func (p *fifoProbe) View() election.View { return p.view }

func (p *fifoProbe) Step(ev election.Event) []election.Effect {
	var out []election.Effect
	switch ev.Kind {
	case election.EventStart:
		p.next = 1
		if p.cfg.ID == p.cfg.Members[0] {
			for i := uint64(1); i <= 50; i++ {
				out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "NUM", Seq: i}})
			}
		}
	case election.EventReceive:
		if ev.Msg.Seq != p.next {
			p.view = election.View{Leader: ev.Msg.From, Epoch: ev.Msg.Seq, Role: election.Candidate}
			out = append(out, election.Effect{Kind: election.EffectView, View: p.view})
		}
		p.next = ev.Msg.Seq + 1
	}
	return out
}

func init() {
	election.Register(election.Algorithm{
		Name: "test-maxid", Title: "max-ID flooding (test only)", Topology: "complete",
		New:           toyelection.NewMaxID,
		ElectionTypes: []string{"ELECTION"},
		Claims: func(q election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins}
		},
	})
	election.Register(election.Algorithm{
		Name: "test-timers", Title: "timer probe (test only)", Topology: "complete",
		New:    func(cfg election.Config) (election.Machine, error) { return &timerProbe{cfg: cfg}, nil },
		Claims: func(election.QuorumMode) []election.Property { return nil },
	})
	election.Register(election.Algorithm{
		Name: "test-rearm", Title: "timer re-arm probe (test only)", Topology: "complete",
		New:    func(cfg election.Config) (election.Machine, error) { return &rearmProbe{timerProbe{cfg: cfg}}, nil },
		Claims: func(election.QuorumMode) []election.Property { return nil },
	})
	election.Register(election.Algorithm{
		Name: "test-fifo", Title: "FIFO probe (test only)", Topology: "complete",
		New:    func(cfg election.Config) (election.Machine, error) { return &fifoProbe{cfg: cfg}, nil },
		Claims: func(election.QuorumMode) []election.Property { return nil },
	})
}

// blobProbe persists an opaque blob on start: the bytes it was restarted
// with plus one more, so a restart shows whether the blob came back, and
// with Config.Options size set, a blob of that many bytes instead. Its view
// epoch is the length of the blob it booted with.
type blobProbe struct {
	cfg  election.Config
	view election.View
}

func (p *blobProbe) View() election.View { return p.view }

func (p *blobProbe) Step(ev election.Event) []election.Effect {
	if ev.Kind != election.EventStart {
		return nil
	}
	blob := append(p.cfg.Durable.Blob, byte(len(p.cfg.Durable.Blob)))
	if n := p.cfg.Options.Int("size"); n > 0 {
		blob = make([]byte, n)
	}
	p.view = election.View{Epoch: uint64(len(p.cfg.Durable.Blob)), Role: election.Undecided}
	return []election.Effect{{Kind: election.EffectView, View: p.view}, {Kind: election.EffectPersist, Durable: &election.Durable{Blob: blob}}}
}

func init() {
	election.Register(election.Algorithm{
		Name: "test-blob", Title: "durable blob probe (test only)", Topology: "complete",
		New:     func(cfg election.Config) (election.Machine, error) { return &blobProbe{cfg: cfg}, nil },
		Claims:  func(election.QuorumMode) []election.Property { return nil },
		Options: []election.OptionSpec{{Name: "size", Kind: election.OptionInt, Default: "0", Help: "persist a blob of this many bytes instead"}},
	})
}

// typesProbe makes up message types: on start, the first member sends the
// second Config.Options "types" messages, each of a type of its own named
// by the run's seed and a count, so that every run's types are new.
type typesProbe struct {
	cfg election.Config
}

func (p *typesProbe) View() election.View { return election.View{} }

func (p *typesProbe) Step(ev election.Event) []election.Effect {
	if ev.Kind != election.EventStart || p.cfg.ID != p.cfg.Members[0] {
		return nil
	}
	n := p.cfg.Options.Int("types")
	out := make([]election.Effect, n)
	for i := range out {
		out[i] = election.Effect{Kind: election.EffectSend, Msg: election.Message{
			Type: fmt.Sprintf("T%d-%d", p.cfg.Seed[0], i), To: p.cfg.Members[1]}}
	}
	return out
}

// failingTypesProbe is typesProbe in a machine that can fail by itself,
// as a program's can (election.Crasher): it never does on its own.
type failingTypesProbe struct{ typesProbe }

func (p *failingTypesProbe) Crashed() error { return nil }

func init() {
	opts := []election.OptionSpec{{Name: "types", Kind: election.OptionInt, Default: "0", Help: "how many types the first member makes up"}}
	election.Register(election.Algorithm{
		Name: "test-types", Title: "made-up message types (test only)", Topology: "complete",
		New:     func(cfg election.Config) (election.Machine, error) { return &typesProbe{cfg: cfg}, nil },
		Claims:  func(election.QuorumMode) []election.Property { return nil },
		Options: opts,
	})
	election.Register(election.Algorithm{
		Name: "test-types-crasher", Title: "made-up message types, a machine that can fail (test only)", Topology: "complete",
		New: func(cfg election.Config) (election.Machine, error) {
			return &failingTypesProbe{typesProbe{cfg: cfg}}, nil
		},
		Claims:  func(election.QuorumMode) []election.Property { return nil },
		Options: opts,
	})
}
