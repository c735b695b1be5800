package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"

	"github.com/ringleader-dev/ringleader/election"
)

// Arrangements name the ring orders Arrange builds.
var Arrangements = []string{"best", "worst", "random"}

// Arrange returns IDs 1..n in a named ring order: best is increasing
// clockwise (each node's successor is larger, so a Chang–Roberts message
// dies after one hop: 2n−1 messages), worst is decreasing (each message
// travels until it wraps past the maximum: n(n+1)/2), random is a shuffle
// drawn from seed.
func Arrange(kind string, n int, seed int64) ([]election.NodeID, error) {
	if n < 1 {
		return nil, fmt.Errorf("--n %d: need at least one node", n)
	}
	ids := election.FirstIDs(n)
	switch kind {
	case "best":
	case "worst":
		slices.Reverse(ids)
	case "random":
		r := rand.New(rand.NewPCG(uint64(seed), 0x72696e67)) // "ring"
		r.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	default:
		return nil, fmt.Errorf("--arrangement %q: want one of %s", kind, strings.Join(Arrangements, ", "))
	}
	return ids, nil
}

// ParseIDs reads a comma-separated ring order such as "3,1,4,5,2". The
// error names the bad element and its position.
func ParseIDs(s string) ([]election.NodeID, error) {
	parts := strings.Split(s, ",")
	ids := make([]election.NodeID, 0, len(parts))
	seen := map[election.NodeID]int{}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--ids %q: element %d (%q) is not a positive integer", s, i+1, p)
		}
		id := election.NodeID(v)
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("--ids %q: element %d (%d) repeats element %d", s, i+1, v, j)
		}
		seen[id] = i + 1
		ids = append(ids, id)
	}
	return ids, nil
}

// Complexity is the outcome of one fault-free election in which every node
// starts at once.
type Complexity struct {
	Algorithm string            `json:"algorithm"`
	N         int               `json:"n"`
	IDs       []election.NodeID `json:"ids"`
	// Leader every node agreed on; 0 if they did not agree (Agreed false).
	Leader election.NodeID `json:"leader"`
	Agreed bool            `json:"agreed"`
	// Messages are election messages, the announcement excluded;
	// maintenance (heartbeats, acknowledgements) is counted apart.
	Messages            int               `json:"messages"`
	AnnounceMessages    int               `json:"announce_messages"`
	MaintenanceMessages int               `json:"maintenance_messages"`
	ByType              map[string]int    `json:"by_type"`
	Formula             *election.Formula `json:"formula"`
	// MatchesFormula: equal to an exact formula, or within a bound.
	MatchesFormula *bool `json:"matches_formula,omitempty"`
	// ElectedAfter is the virtual time of the last election or announce
	// message or view change: how long the election took.
	ElectedAfterMillis float64 `json:"elected_after_ms"`
	// Quiet is false if the run hit its virtual-time limit still electing.
	Quiet bool `json:"quiet"`
}

// RunComplexity runs one fault-free election of ids (ring order) and
// counts its messages, within the default Limits. opts.Algorithm must be
// set; Members is replaced by ids. Nothing is recorded but the counts: the
// simulator runs without a history sink.
func RunComplexity(opts Options, ids []election.NodeID) (Complexity, error) {
	return RunComplexityWithin(opts, ids, Limits{})
}

// RunComplexityWithin is RunComplexity bounded by lim. A run that reaches
// a cap still electing returns the counts so far (Quiet false) and a
// *CapError naming the cap.
func RunComplexityWithin(opts Options, ids []election.NodeID, lim Limits) (Complexity, error) {
	if lim.MaxTime <= 0 {
		lim.MaxTime = DefaultMaxTime
	}
	if lim.MaxMessages == 0 {
		lim.MaxMessages = DefaultMaxMessages
	}
	if lim.ProgressEvery <= 0 {
		lim.ProgressEvery = 2 * time.Second
	}
	w := &watch{lim: lim, start: time.Now()}
	w.last = w.start
	opts.Members = ids
	s, err := New(opts, nil)
	if err != nil {
		return Complexity{}, err
	}
	if lim.MaxMessages > 0 {
		s.maxSent = lim.MaxMessages
	}
	s.Start()
	quiet, capped := s.runUntilQuiet(lim.MaxTime, w)
	if !quiet && capped == nil {
		capped = &CapError{Cap: "time", Limit: int64(lim.MaxTime), At: w.progress(s)}
	}
	c := s.Counts()
	out := Complexity{
		Algorithm: s.alg.Name, N: len(ids), IDs: ids,
		Messages: c.Election, AnnounceMessages: c.Announce, MaintenanceMessages: c.Maintenance,
		ByType:             c.ByType,
		ElectedAfterMillis: float64(s.lastActivity) / float64(time.Millisecond),
		Quiet:              quiet,
	}
	out.Leader, out.Agreed = s.agreedLeader()
	if s.alg.Formula != nil {
		f := s.alg.Formula(ids)
		out.Formula = &f
		ok := float64(c.Election) == f.Value || !f.Exact && float64(c.Election) <= f.Value
		out.MatchesFormula = &ok
	}
	if capped != nil {
		return out, capped
	}
	return out, nil
}

// agreedLeader is the leader every live node views, if they agree.
func (s *Sim) agreedLeader() (election.NodeID, bool) {
	var l election.NodeID
	for i := range s.nodes {
		n := &s.nodes[i]
		if !n.up || n.paused {
			continue
		}
		v := s.views[i].Leader // as state.Views has it, or will
		if v == election.None || l != election.None && v != l {
			return election.None, false
		}
		l = v
	}
	return l, l != election.None
}

// Limits bound a complexity run and let it report progress.
type Limits struct {
	// MaxTime caps virtual time; zero: DefaultMaxTime.
	MaxTime time.Duration
	// MaxMessages caps the messages sent (every class): a run may send
	// that many, and the first message over it stops the run, unsent,
	// with a *CapError whose At.Sent is the cap. Zero:
	// DefaultMaxMessages, negative: no cap.
	MaxMessages int
	// Progress, when set, is called about every ProgressEvery of wall
	// time while the run goes on (not at all for a run shorter than
	// that).
	Progress func(Progress)
	// ProgressEvery is the wall time between Progress calls; zero: 2 s.
	ProgressEvery time.Duration
}

// The default caps: a day of virtual time, and a billion messages (a
// couple of minutes of simulation on one core).
const (
	DefaultMaxTime     = 24 * time.Hour
	DefaultMaxMessages = 1_000_000_000
)

// Progress is a running simulation's state, for a progress line.
type Progress struct {
	Virtual   time.Duration // virtual time so far
	Sent      int           // messages sent
	Delivered int           // messages delivered
	Elapsed   time.Duration // wall time since the run started
}

// CapError says which cap stopped a run.
type CapError struct {
	// Cap is "time" (Limits.MaxTime), "messages" (Limits.MaxMessages)
	// or "memory" (Options.MaxMemory, in bytes).
	Cap   string
	Limit int64
	// Held is, for the memory cap, what the process held when the
	// simulator looked (bytes).
	Held int64
	// At is where the run stood.
	At Progress
}

func (e *CapError) Error() string {
	switch e.Cap {
	case "time":
		return fmt.Sprintf("stopped at the virtual-time cap of %v with the election still running (%d messages sent)", time.Duration(e.Limit), e.At.Sent)
	case "memory":
		return fmt.Sprintf("stopped at the memory budget of %s (the process held %s), at %v of virtual time with %d messages sent, before the machine ran out",
			units.BytesSize(float64(e.Limit)), units.BytesSize(float64(e.Held)), e.At.Virtual.Round(time.Millisecond), e.At.Sent)
	}
	return fmt.Sprintf("stopped at the cap of %d messages, at %v of virtual time, with the election still running (it was about to send one more)", e.Limit, e.At.Virtual)
}

// watch carries Limits through a run.
type watch struct {
	lim   Limits
	start time.Time
	last  time.Time
}

func (w *watch) progress(s *Sim) Progress {
	p := Progress{Virtual: s.now, Sent: s.counts.Total(), Delivered: s.counts.Delivered}
	if w != nil {
		p.Elapsed = time.Since(w.start)
	}
	return p
}

// report calls Progress when ProgressEvery has passed since the last call.
func (w *watch) report(s *Sim) {
	if w.lim.Progress != nil {
		if now := time.Now(); now.Sub(w.last) >= w.lim.ProgressEvery {
			w.last = now
			w.lim.Progress(w.progress(s))
		}
	}
}
