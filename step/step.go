// Package step drives a simulated cluster of election machines one step at
// a time, for tests that read like lecture notes: deliver the next message,
// fire a node's timer now, hand a node a failure hint, apply a fault in the
// words of `ringleader fault`, show every node's view, and judge the
// history so far with the real checkers of package check.
//
// It is a thin hand on package sim, not a world of its own: messages,
// timers, cuts, pauses and crashes behave exactly as the simulator makes
// them (Sim.Next processes the event the simulator would process next),
// faults go through scenario.ParseWords, chaos.Spec.Resolve and Sim.Apply
// as in any run, and the history is the one the checkers judge in every
// run. The same driver serves Go tests (its methods) and transcript files
// (Do, one command line at a time; see docs/simulator.md).
package step

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/scenario"
	"github.com/ringleader-dev/ringleader/sim"
)

// Driver is one simulated cluster under a test's hand.
type Driver struct {
	Sim  *sim.Sim
	opts sim.Options
	hist *history.Memory
	// shown counts the history records already reported by a command.
	shown int
	// rng draws the random targets of faults (one, minority, …).
	rng *rand.Rand
	// counted is the counts at the last ResetCounts.
	counted sim.Counts
	// countedRecs is the length of the history at the last ResetCounts.
	countedRecs int
}

// New builds a cluster and boots every node: Build, then Start. Unlike a scenario run, the
// network gives no failure hints unless opts.Hints says so (the zero
// value here means off): every hint a test relies on is one it gave.
// The zero Delay is the simulator's, a constant 1 ms.
func New(opts sim.Options) (*Driver, error) {
	d, err := Build(opts)
	if err != nil {
		return nil, err
	}
	d.Start()
	return d, nil
}

// Build builds a cluster without booting it, so that a test can shape the
// network first (a cut or partition applies before the nodes exist).
func Build(opts sim.Options) (*Driver, error) {
	if opts.Hints == (sim.Hints{}) {
		opts.Hints.Off = true
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	d := &Driver{opts: opts, hist: &history.Memory{}, rng: rand.New(rand.NewPCG(uint64(opts.Seed), 0x57e9))}
	s, err := sim.New(opts, d.hist)
	if err != nil {
		return nil, err
	}
	d.Sim = s
	return d, nil
}

// Start boots every node at the current instant, in ring order.
func (d *Driver) Start() { d.Sim.Start() }

// Members in ring order.
func (d *Driver) Members() []election.NodeID { return d.Sim.Members() }

// Timing with defaults filled in.
func (d *Driver) Timing() election.Timing { return d.Sim.Timing() }

// Now is the virtual time.
func (d *Driver) Now() time.Duration { return d.Sim.Now() }

// View is node id's latest view (zero when it is down or has none).
func (d *Driver) View(id election.NodeID) election.View {
	if !d.Sim.Up(id) {
		return election.View{}
	}
	return d.Sim.View(id)
}

// Records is the history so far.
func (d *Driver) Records() []history.Record { return d.hist.Records() }

// Next processes the next pending event; false when nothing is pending.
func (d *Driver) Next() (sim.Pending, sim.Outcome, bool) { return d.Sim.Next() }

// RunFor processes every event due within dur.
func (d *Driver) RunFor(dur time.Duration) { d.Sim.RunFor(dur) }

// Stabilize runs until no election message is in flight and no view has
// changed for the simulator's quiet window; false if that took longer
// than max.
func (d *Driver) Stabilize(max time.Duration) bool { return d.Sim.RunUntilQuiet(max) }

// Fire fires node id's armed timer now.
func (d *Driver) Fire(id election.NodeID, timer string) error { return d.Sim.Fire(id, timer) }

// FireAll fires timer now on every running node that has it armed, in
// ring order, and says how many did.
func (d *Driver) FireAll(timer string) int {
	fired := 0
	for _, id := range d.Members() {
		if slices.ContainsFunc(d.Sim.Timers(id), func(t sim.Timer) bool { return t.Name == timer }) && !d.Sim.Paused(id) {
			if d.Sim.Fire(id, timer) == nil {
				fired++
			}
		}
	}
	return fired
}

// Armed reports whether node id has the named timer armed.
func (d *Driver) Armed(id election.NodeID, timer string) bool {
	return slices.ContainsFunc(d.Sim.Timers(id), func(t sim.Timer) bool { return t.Name == timer })
}

// Hint tells node to that peer is down (election.EventPeerDown), now,
// whether or not it is: the runtime's hints can be wrong.
func (d *Driver) Hint(to, peer election.NodeID) error {
	return d.Sim.Inject(to, election.Event{Kind: election.EventPeerDown, Peer: peer})
}

// Receive hands node to the message m now, as if it had just arrived: a
// stale, forged or malformed message no network would have delivered then.
func (d *Driver) Receive(to election.NodeID, m election.Message) error {
	m.To = to
	return d.Sim.Inject(to, election.Event{Kind: election.EventReceive, Msg: m})
}

// Fault applies one fault written as `ringleader fault` takes it ("kill
// leader", "partition 1,2 3,4,5", "cut 1 2 --one-way"): parsed by
// scenario.ParseWords, resolved against the cluster's state now, applied
// and recorded as every backend does. It returns the resolved fault.
func (d *Driver) Fault(words ...string) (string, error) {
	st, err := scenario.ParseWords(words, d.Members())
	if err != nil {
		return "", err
	}
	f, err := st.Fault.Resolve(d.Sim.State(), d.Members(), d.rng)
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(words, " "), err)
	}
	if err := d.Sim.Apply(f, st.Fault.TargetText()); err != nil {
		return "", err
	}
	return resolved(f), nil
}

// Counts are the messages sent since the last ResetCounts (or the start).
func (d *Driver) Counts() map[string]int {
	c := d.Sim.Counts()
	for t, k := range d.counted.ByType {
		c.ByType[t] -= k
		if c.ByType[t] == 0 {
			delete(c.ByType, t)
		}
	}
	return c.ByType
}

// ElectionMessages is how many of Counts the algorithm counts as election
// messages.
func (d *Driver) ElectionMessages() int {
	c, total := d.Counts(), 0
	for _, t := range d.Sim.Algorithm().ElectionTypes {
		total += c[t]
	}
	return total
}

// ResetCounts starts counting messages afresh.
func (d *Driver) ResetCounts() {
	d.counted = d.Sim.Counts()
	d.countedRecs = len(d.Records())
}

// Sent lists the messages sent since the last ResetCounts (or the start),
// in order. It reads the history, so messages are listed only when the
// cluster records them (Options.OmitMessages unset).
func (d *Driver) Sent() []election.Message {
	var out []election.Message
	for _, r := range d.Records()[d.countedRecs:] {
		if r.Kind == history.KindSend {
			out = append(out, *r.Msg)
		}
	}
	return out
}

// Agreed reports whether every node in ids is running and views leader as
// its leader, leader itself in the leader role.
func (d *Driver) Agreed(leader election.NodeID, ids ...election.NodeID) bool {
	for _, id := range ids {
		v := d.View(id)
		want := election.Follower
		if id == leader {
			want = election.Leader
		}
		if !d.Sim.Up(id) || v.Leader != leader || v.Role != want {
			return false
		}
	}
	return true
}

// Check runs the named checkers (none: those the algorithm claims) over the
// history so far, judged at its end.
func (d *Driver) Check(names ...check.Name) []check.Verdict {
	return check.Run(d.Records(), check.Options{
		Algorithm: d.Sim.Algorithm(),
		Quorum:    d.opts.Quorum,
		Members:   d.Members(),
		Timing:    d.Timing(),
	}, names...)
}

// LeaderIntervals are the stretches in which each node led, from the
// history as the checkers read it.
func (d *Driver) LeaderIntervals() []check.LeaderInterval {
	return check.LeaderIntervals(check.NewTimeline(d.Records(), d.Members()))
}
