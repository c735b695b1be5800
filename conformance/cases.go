package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// suite is the suite in one quorum mode.
type suite struct {
	alg  election.Algorithm
	q    election.QuorumMode
	opts Options
	// explored is RandomFaultSchedules' result, once it has one.
	explored *explore.Result
}

func newSuite(alg election.Algorithm, q election.QuorumMode, opts Options) *suite {
	return &suite{alg: alg, q: q, opts: opts}
}

func (s *suite) progress(name string, done int) {
	if s.opts.Progress == nil {
		return
	}
	p := Progress{Quorum: s.q, Case: name}
	if name == RandomFaultSchedules {
		p.Done, p.Total = done, s.opts.Schedules
	}
	s.opts.Progress(p)
}

// arrangement is the ring order: a seeded shuffle of 1..N, so ring
// algorithms do not meet only the sorted ring.
func (s *suite) arrangement() []election.NodeID {
	ids := election.FirstIDs(s.opts.N)
	r := rand.New(rand.NewPCG(uint64(s.opts.Seed), 0))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

func (s *suite) newSim(c *caseRun, members []election.NodeID, sink history.Sink) *sim.Sim {
	c.t.Helper()
	sm, err := sim.New(sim.Options{Algorithm: s.alg.Name, Members: members, Quorum: s.q, Seed: s.opts.Seed}, sink)
	if err != nil {
		c.fatalf("", "%v", err)
	}
	c.sims = append(c.sims, sm)
	return sm
}

// agreed returns the leader every live node views, if they all view the
// same live node and that node views itself as leader.
func agreed(st chaos.State, members []election.NodeID) (election.NodeID, bool) {
	var l election.NodeID
	for _, id := range members {
		if !st.Live(id) {
			continue
		}
		v := st.Views[id].Leader
		if v == election.None || (l != election.None && v != l) {
			return election.None, false
		}
		l = v
	}
	if l == election.None || !st.Live(l) || st.Views[l].Role != election.Leader {
		return election.None, false
	}
	return l, true
}

func highestLive(st chaos.State, members []election.NodeID) election.NodeID {
	var h election.NodeID
	for _, id := range members {
		if st.Live(id) && id > h {
			h = id
		}
	}
	return h
}

func (s *suite) bound(sm *sim.Sim) time.Duration { return check.DefaultLivenessBound(sm.Timing()) }

func (s *suite) claims(p election.Property) bool { return s.alg.Claim(s.q, p) }

func describeViews(st chaos.State, members []election.NodeID) string {
	out := ""
	for _, id := range members {
		status := "up"
		switch {
		case !st.Up[id]:
			status = "down"
		case st.Paused[id]:
			status = "paused"
		}
		if status == "down" {
			out += fmt.Sprintf(" %d(down)", id) // a down node holds no view
			continue
		}
		out += fmt.Sprintf(" %d(%s):%v", id, status, st.Views[id])
	}
	return out
}

// quietWithin is how long a fault-free election may take to go quiet (no
// election or announce message for sim.QuietWindow) before the suite looks
// for why: far longer than any election of a few nodes.
const quietWithin = time.Minute

// untilQuiet runs a fault-free election until it goes quiet. One that is
// still going after quietWithin gets another quietWithin; one that is
// still going then ends the case, naming the election and announce types
// it kept sending: a type sent periodically (a heartbeat, a lease renewal)
// listed in election_types or announce_types keeps a run from ever going
// quiet, which is the program's description and not its election at
// fault.
func (s *suite) untilQuiet(c *caseRun, sm *sim.Sim, members []election.NodeID) {
	if sm.RunUntilQuiet(quietWithin) {
		return
	}
	before := sm.Counts().ByType
	if sm.RunUntilQuiet(quietWithin) {
		return
	}
	after := sm.Counts().ByType
	var busy []string
	for _, t := range append(slices.Clone(s.alg.ElectionTypes), s.alg.AnnounceTypes...) {
		if n := after[t] - before[t]; n > 0 {
			busy = append(busy, fmt.Sprintf("%s %d times", t, n))
		}
	}
	msg := fmt.Sprintf("ring %v: still electing after %v of virtual time", members, 2*quietWithin)
	if len(busy) > 0 {
		msg += fmt.Sprintf("; in the last %v it sent %s, listed as election or announce messages. "+
			"A message sent periodically (a heartbeat, a lease renewal) is maintenance: list it in neither election_types nor announce_types (docs/protocol.md), or no run of it ever goes quiet",
			quietWithin, strings.Join(busy, ", "))
	}
	c.fatalf(check.Liveness, "%s", msg)
}

// faultFree: every node starts at once; they agree, on the highest ID if
// claimed, and every claimed checker passes on the history.
func (s *suite) faultFree(c *caseRun) {
	members := s.arrangement()
	var mem history.Memory
	sm := s.newSim(c, members, &mem)
	sm.Start()
	s.untilQuiet(c, sm, members)
	st := sm.State()
	l, ok := agreed(st, members)
	if !ok {
		c.fatalf(check.Agreement, "ring %v: no agreement once quiet at %v:%s", members, sm.Now(), describeViews(st, members))
	}
	if s.claims(election.HighestWins) && l != election.NodeID(s.opts.N) {
		c.fatalf(check.BullyMax, "ring %v: leader %d, but the algorithm claims bully-max and %d is the highest ID", members, l, s.opts.N)
	}
	for _, v := range check.Run(mem.Records(), check.Options{Algorithm: s.alg, Quorum: s.q, Members: members, Timing: sm.Timing()}) {
		if !v.Pass && v.Checker != check.MessageComplexity { // the formula has its own test
			c.errorf(v.Checker, "ring %v: claimed checker %s fails on a fault-free run: %s", members, v.Checker, v.Summary)
		}
	}
}

// formula: the election messages of a fault-free run meet the published
// count, on the best, worst and a random arrangement.
func (s *suite) formula(c *caseRun) {
	if s.alg.Formula == nil {
		c.skipf("%s publishes no message-count formula", s.alg.Name)
	}
	n := s.opts.N
	inc := election.FirstIDs(n)
	dec := slices.Clone(inc)
	slices.Reverse(dec)
	for _, ids := range [][]election.NodeID{inc, dec, s.arrangement()} {
		sm := s.newSim(c, ids, nil)
		sm.Start()
		s.untilQuiet(c, sm, ids)
		got := sm.Counts().Election
		f := s.alg.Formula(ids)
		if f.Exact && float64(got) != f.Value || !f.Exact && float64(got) > f.Value {
			rel := "exactly"
			if !f.Exact {
				rel = "at most"
			}
			c.errorf(check.MessageComplexity, "ring %v: %d election messages, the formula %s says %s %v (by type %v)", ids, got, f.Name, rel, f.Value, sm.Counts().ByType)
		}
	}
}

// crash: kill the leader; the live nodes agree on another; restart it; if
// bully-max is claimed it leads again.
func (s *suite) crash(c *caseRun) {
	members := s.arrangement()
	sm := s.newSim(c, members, nil)
	sm.Start()
	if !sm.RunUntil(s.bound(sm), func(st chaos.State) bool { _, ok := agreed(st, members); return ok }) {
		c.fatalf(check.Liveness, "no first leader within %v:%s", s.bound(sm), describeViews(sm.State(), members))
	}
	// Let the leader settle in (heartbeats flowing, leases granted).
	sm.RunFor(2 * sm.Timing().Suspicion)
	old, ok := agreed(sm.State(), members)
	if !ok {
		c.fatalf(check.Agreement, "the first agreement did not last:%s", describeViews(sm.State(), members))
	}
	if err := sm.Kill(old); err != nil {
		c.fatalf("", "%v", err)
	}
	killedAt := sm.Now()
	if !sm.RunUntil(s.bound(sm), func(st chaos.State) bool { l, ok := agreed(st, members); return ok && l != old }) {
		c.fatalf(check.Liveness, "leader %d killed at %v: no new leader agreed by every live node within %v:%s", old, killedAt, s.bound(sm), describeViews(sm.State(), members))
	}
	st := sm.State()
	l, _ := agreed(st, members)
	if want := highestLive(st, members); s.claims(election.HighestWins) && l != want {
		c.fatalf(check.BullyMax, "leader %d killed: new leader %d, want the highest live ID %d", old, l, want)
	}
	c.logf("leader %d killed at %v; %d agreed after %v", old, killedAt, l, sm.Now()-killedAt)

	sm.RunFor(2 * sm.Timing().Suspicion)
	if err := sm.Restart(old); err != nil {
		c.fatalf("", "%v", err)
	}
	want := func(st chaos.State) bool {
		l, ok := agreed(st, members)
		return ok && (!s.claims(election.HighestWins) || l == highestLive(st, members))
	}
	if !sm.RunUntil(s.bound(sm), want) {
		// Agreement on another leader refutes bully-max; no agreement
		// at all, liveness.
		refuted := check.Liveness
		if _, ok := agreed(sm.State(), members); ok {
			refuted = check.BullyMax
		}
		c.fatalf(refuted, "old leader %d restarted: no agreement (claims bully-max: %v) within %v:%s", old, s.claims(election.HighestWins), s.bound(sm), describeViews(sm.State(), members))
	}
}

// exploreOptions is the exploration of RandomFaultSchedules.
func (s *suite) exploreOptions() explore.Options {
	return explore.Options{
		Algorithm: s.alg.Name, N: s.opts.N, Quorum: s.q,
		Schedules: s.opts.Schedules, Seed: s.opts.Seed,
	}
}

// explore: random fault schedules; every claimed checker must pass on each.
func (s *suite) explore(c *caseRun) {
	opts := s.exploreOptions()
	opts.Progress = func(done int) { s.progress(RandomFaultSchedules, done) }
	res, err := explore.Run(opts)
	if err != nil {
		c.fatalf("", "%v", err)
	}
	s.explored = &res
	c.logf("%d schedules: failures %v, split-brain schedules %d, epoch conflicts %d",
		res.Schedules, res.Failures, res.SplitBrainSchedules, res.EpochConflictSchedules)
	for _, sc := range res.Failing {
		ref := &Schedule{Index: sc.Index, Seed: sc.Seed, Faults: sc.Faults, Replay: sc.Replay, Nondeterministic: sc.Nondeterministic}
		for _, v := range sc.Verdicts {
			if !slices.Contains(sc.Failed, v.Checker) {
				continue
			}
			c.scheduleFailed(v.Checker, ref, "schedule %d (seed %d): %s: %s\n  replay: %s\n  faults: %v", sc.Index, sc.Seed, v.Checker, v.Summary, sc.Replay, sc.Faults)
		}
	}
}

// determinismSample is how many explored schedules ReplaysAreDeterministic
// plays twice, besides the fault-free election: the first ones, whether
// they passed or failed.
const determinismSample = 3

// determinism: for an algorithm that is not seeded by construction (a
// program, which may read a clock or an unseeded generator), the
// fault-free election and the first explored schedules, each played twice
// with full histories, must give the same records. Without it a replay
// command or a saved schedule need not mean the run it came from, and a
// quiet nondeterminism would pass every other case.
func (s *suite) determinism(c *caseRun) {
	if s.alg.Seeded {
		c.skipf("%s is seeded by construction (election.Algorithm.Seeded)", s.alg.Name)
	}
	members := s.arrangement()
	var plays [2]history.Memory
	for i := range plays {
		sm := s.newSim(c, members, &plays[i])
		sm.Start()
		sm.RunUntilQuiet(quietWithin) // goes quiet or not, twice alike
		sm.Close()
	}
	if d := explore.Compare(s.opts.Seed, plays[0].Records(), plays[1].Records()); d != nil {
		c.errorf("", "the fault-free election on ring %v, played twice: %s", members, d)
	}
	opts := s.exploreOptions()
	for i := range min(determinismSample, s.opts.Schedules) {
		seed := explore.ScheduleSeed(s.opts.Seed, i)
		d, err := explore.CheckDeterminism(opts, seed)
		if err != nil {
			c.fatalf("", "%v", err)
		}
		if d != nil {
			c.errorf("", "schedule %d, played twice: %s\n  replay: %s", i, d, explore.ReplayCommand(opts, seed))
		}
	}
	c.logf("the fault-free election and %d schedules replay record for record", min(determinismSample, s.opts.Schedules))
}
