package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// The runner's tests use a stand-in algorithm and a scripted backend, so
// they prove the harness and nothing else.
func init() {
	election.Register(election.Algorithm{
		Name:     "fake-bully",
		Title:    "a scripted stand-in for Bully",
		Topology: "complete",
		New:      func(election.Config) (election.Machine, error) { return nil, errors.New("fake-bully has no machine") },
		Claims: func(election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins, election.Liveness}
		},
		Quorums: []election.QuorumMode{election.NoQuorum, election.Majority},
	})
}

// fakeBackend is a cluster in virtual time whose "algorithm" is a rule:
// electionTime after every fault, each component of live nodes that can all
// talk elects its highest ID (in quorum mode only a majority component does;
// a minority one becomes undecided). Until then views stay as they were, as
// in a real cluster that has not noticed yet.
type fakeBackend struct {
	mu           sync.Mutex
	electionTime time.Duration
	spec         chaos.ClusterSpec
	sink         history.Sink
	now          time.Time
	up, paused   map[election.NodeID]bool
	cut          map[[2]election.NodeID]bool
	views        map[election.NodeID]election.View
	seq          map[election.NodeID]uint64
	boots        map[election.NodeID]int
	converge     time.Time // zero: no election pending
	epoch        uint64

	startErr error
	// onApply runs before each fault (a test cancels its context here).
	onApply func(chaos.Fault)
	closes  int
	applied []chaos.Fault
}

func newFake() *fakeBackend {
	return &fakeBackend{electionTime: 700 * time.Millisecond, now: history.SimOrigin}
}

func (b *fakeBackend) Name() string { return "fake" }

func (b *fakeBackend) Start(ctx context.Context, spec chaos.ClusterSpec, sink history.Sink) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.startErr != nil {
		return b.startErr
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	b.spec, b.sink = spec, sink
	b.up, b.paused = map[election.NodeID]bool{}, map[election.NodeID]bool{}
	b.cut = map[[2]election.NodeID]bool{}
	b.views, b.seq, b.boots = map[election.NodeID]election.View{}, map[election.NodeID]uint64{}, map[election.NodeID]int{}
	for _, m := range spec.Members {
		b.boot(m)
	}
	b.converge = b.now.Add(b.electionTime)
	return nil
}

func (b *fakeBackend) boot(m election.NodeID) {
	b.up[m], b.paused[m] = true, false
	b.boots[m]++
	b.seq[m] = 0
	b.emit(history.Record{Kind: history.KindBoot, Node: m})
	b.setView(m, election.View{Role: election.Undecided})
}

func (b *fakeBackend) emit(r history.Record) {
	r.Time = b.now
	if r.Process == "" {
		r.Process = "node"
		b.seq[r.Node]++
		r.Boot, r.Seq = fmt.Sprintf("%d-%d", r.Node, b.boots[r.Node]), b.seq[r.Node]
	}
	_ = b.sink.Append(r)
}

func (b *fakeBackend) setView(m election.NodeID, v election.View) {
	if old, ok := b.views[m]; ok && old == v {
		return
	}
	b.views[m] = v
	b.emit(history.Record{Kind: history.KindView, Node: m, View: &v})
}

func (b *fakeBackend) stateLocked() chaos.State {
	return chaos.State{Views: b.views, Up: b.up, Paused: b.paused, Cut: b.cut}.Clone()
}

func (b *fakeBackend) State() chaos.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked()
}

func (b *fakeBackend) Now() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now
}

func (b *fakeBackend) Apply(ctx context.Context, f chaos.Fault, target string) error {
	if b.onApply != nil {
		b.onApply(f)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	b.emit(f.Record(b.now, target, history.FaultInvoke, "", nil))
	b.applied = append(b.applied, f)
	switch f.Op {
	case chaos.Kill, chaos.Stop:
		for _, n := range f.Nodes {
			b.up[n], b.paused[n] = false, false
		}
	case chaos.Restart:
		for _, n := range f.Nodes {
			b.boot(n)
		}
	case chaos.Pause:
		for _, n := range f.Nodes {
			b.paused[n] = true
		}
	case chaos.Resume:
		for _, n := range f.Nodes {
			b.paused[n] = false
		}
	case chaos.Partition:
		for _, l := range f.CutLinks(b.spec.Members) {
			b.cut[l] = true
		}
	case chaos.Heal:
		clear(b.cut)
	}
	b.emit(f.Record(b.now, target, history.FaultOK, "", nil))
	b.converge = b.now.Add(b.electionTime)
	return nil
}

// elect applies the rule to the current state.
func (b *fakeBackend) elect() {
	s := b.stateLocked()
	b.epoch++
	maj := len(b.spec.Members)/2 + 1
	for _, c := range check.Components(s, b.spec.Members) {
		if b.spec.Quorum == election.Majority && len(c.Nodes) < maj {
			for _, n := range c.Nodes {
				b.setView(n, election.View{Epoch: b.epoch, Role: election.Undecided})
			}
			continue
		}
		l := slices.Max(c.Nodes)
		for _, n := range c.Nodes {
			role := election.Follower
			if n == l {
				role = election.Leader
			}
			b.setView(n, election.View{Leader: l, Epoch: b.epoch, Role: role})
		}
	}
}

func (b *fakeBackend) Await(ctx context.Context, d time.Duration, cond func(chaos.State) bool) (bool, error) {
	if cond == nil {
		cond = func(chaos.State) bool { return false }
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	deadline := b.now.Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if cond(b.stateLocked()) {
			return true, nil
		}
		if b.converge.IsZero() || b.converge.After(deadline) {
			b.now = deadline
			return false, nil
		}
		b.now = b.converge
		b.converge = time.Time{}
		b.elect()
	}
}

func (b *fakeBackend) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closes++
	return nil
}
