package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/outpath"
)

// Result is one run, as written to results.json.
type Result struct {
	Scenario    string `json:"scenario"`
	File        string `json:"file"`
	Description string `json:"description,omitempty"`
	Backend     string `json:"backend"`
	Algorithm   string `json:"algorithm"`
	// Program is the command line of the program the run hosted
	// (cluster.program), whose registered name Algorithm is: a later
	// process registers it again to judge the run (Rejudge).
	Program []string `json:"program,omitempty"`
	Quorum  string   `json:"quorum"`
	// Options are the algorithm's options, resolved (absent for an
	// algorithm without options).
	Options election.Options `json:"options,omitempty"`
	// System is the real server the run started (cluster.system),
	// its version and how it was observed; nil for an algorithm.
	System  *SystemResult     `json:"system,omitempty"`
	Members []election.NodeID `json:"members"`
	// Engines, for a run across several engines, says which held each
	// node: the engine's address and its nodes, in --engines order.
	Engines []EngineResult `json:"engines,omitempty"`
	Timing  Timing         `json:"timing"`
	// LivenessBoundMillis is the scenario's liveness_bound (0: the
	// default, ten suspicions), kept so that Rejudge judges as the run did.
	LivenessBoundMillis float64   `json:"liveness_bound_ms,omitempty"`
	Seed                int64     `json:"seed"`
	Rep                 int       `json:"rep"`
	Reps                int       `json:"reps"`
	Cluster             string    `json:"cluster"`
	Dir                 string    `json:"dir"`
	Started             time.Time `json:"started"`
	Finished            time.Time `json:"finished"`
	WallMillis          float64   `json:"wall_ms"`

	Steps        []StepResult    `json:"steps"`
	Expectations []ExpectResult  `json:"expectations"`
	Checkers     []CheckerResult `json:"checkers"`
	// Checkpoints counts the instants agreement and bully-max judged.
	Checkpoints int              `json:"checkpoints"`
	Failovers   []FailoverResult `json:"failovers"`
	// Returns are the resumes, restarts and heals, and how long the
	// cluster took to settle again after each (check.ReturnsOf).
	Returns    []FailoverResult `json:"returns"`
	SplitBrain SplitBrain       `json:"split_brain"`
	// Leadership: how many times a node took role leader, and the
	// highest epoch (raft's term) any node viewed.
	Leadership check.Leadership `json:"leadership"`
	Messages   *check.Counts    `json:"messages,omitempty"`
	// Elections are the stretches from the cluster leaving a settled
	// state to settling again, with their messages (check.Elections).
	Elections []check.Election `json:"elections"`

	// Pass: the run completed, every expectation held and every checker
	// gave the verdict the scenario expects.
	Pass bool `json:"pass"`
	// Failures says, one line each, why Pass is false.
	Failures []string `json:"failures,omitempty"`
	// Errors are problems running the scenario (start, a fault, close,
	// cancellation), as opposed to judgements.
	Errors []string `json:"errors,omitempty"`
	// CloseError is why closing the backend failed (the docker backend
	// names what it left); empty when the backend closed cleanly.
	CloseError string `json:"close_error,omitempty"`

	origin   time.Time
	records  []history.Record
	analysis *check.Analysis // what judge computed; the report draws it
}

// Timing is the cluster's timing in milliseconds.
type Timing struct {
	HeartbeatMillis float64 `json:"heartbeat_ms"`
	SuspicionMillis float64 `json:"suspicion_ms"`
	AnswerMillis    float64 `json:"answer_ms"`
}

func timingOf(t election.Timing) Timing {
	return Timing{ms(t.Heartbeat), ms(t.Suspicion), ms(t.Answer)}
}

// StepResult is one step: when it ran on the backend's clock (ms from the
// cluster's start), how long it took there and in wall time, what a
// symbolic target resolved to.
type StepResult struct {
	Index      int           `json:"index"`
	Line       int           `json:"line"`
	Op         string        `json:"op"`
	Text       string        `json:"text"`
	Resolved   string        `json:"resolved,omitempty"`
	At         time.Time     `json:"at"`
	Start      float64       `json:"start_ms"`
	Millis     float64       `json:"ms"`
	WallMillis float64       `json:"wall_ms"`
	Expect     *ExpectResult `json:"expect,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// ExpectResult is the outcome of an expect or wait: stable step: whether
// it held, how long after the step began (ms, backend clock), and the views
// seen (when it held) or why it did not.
type ExpectResult struct {
	Step   int       `json:"step"`
	Line   int       `json:"line"`
	Expect string    `json:"expect"`
	Within float64   `json:"within_ms"`
	Pass   bool      `json:"pass"`
	At     time.Time `json:"at"`
	After  float64   `json:"after_ms"`
	Seen   string    `json:"seen"`
}

// CheckerResult is a verdict next to the verdict the scenario expects.
type CheckerResult struct {
	check.Verdict
	Expected string `json:"expected"`
	Match    bool   `json:"match"`
}

// UnmarshalJSON reads the verdict (check.Verdict's own reader, which would
// otherwise stand for the whole value and drop Expected and Match) and the
// fields added here.
func (c *CheckerResult) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &c.Verdict); err != nil {
		return err
	}
	var more struct {
		Expected string `json:"expected"`
		Match    bool   `json:"match"`
	}
	if err := json.Unmarshal(b, &more); err != nil {
		return err
	}
	c.Expected, c.Match = more.Expected, more.Match
	return nil
}

// FailoverResult is a failover with its length in suspicion timeouts.
// Millis counts from when the fault took effect as the nodes show it (a
// killed node's last act after the invoke, or the invoke; see
// check.DateFaults), falling back on the engine's ok record; FromInvokeMillis
// counts from the invoke record. In the simulator the two are equal.
type FailoverResult struct {
	check.Failover
	Suspicions       float64 `json:"x_suspicion,omitempty"`
	FromInvokeMillis float64 `json:"ms_from_invoke,omitempty"`
}

// MarshalJSON writes the failover as check.Failover does (null times for
// one that did not recover) followed by the lengths added here, null too
// when it did not recover. Without it the embedded Failover's MarshalJSON
// would stand for the whole value.
func (f FailoverResult) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(f.Failover)
	if err != nil {
		return nil, err
	}
	extra := struct {
		Suspicions       *float64 `json:"x_suspicion"`
		FromInvokeMillis *float64 `json:"ms_from_invoke"`
	}{}
	if f.Recovered {
		extra.Suspicions, extra.FromInvokeMillis = &f.Suspicions, &f.FromInvokeMillis
	}
	more, err := json.Marshal(extra)
	if err != nil {
		return nil, err
	}
	// Both are objects: {base…} + {more…} → {base…,more…}.
	return append(append(base[:len(base)-1], ','), more[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes (and results.json files
// written before it, which left the lengths out rather than null).
func (f *FailoverResult) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &f.Failover); err != nil {
		return err
	}
	var extra struct {
		Suspicions       float64 `json:"x_suspicion"`
		FromInvokeMillis float64 `json:"ms_from_invoke"`
	}
	if err := json.Unmarshal(b, &extra); err != nil {
		return err
	}
	f.Suspicions, f.FromInvokeMillis = extra.Suspicions, extra.FromInvokeMillis
	return nil
}

// SplitBrain is how long two or more nodes held role leader at once, as
// the no-split-brain checker counts it: only while every one of them could
// act. Stale is the time a frozen (paused) leader believed it led beside
// another: not an acting split brain, but the stale-leader problem leases
// exist for.
type SplitBrain struct {
	Overlaps        int     `json:"overlaps"`
	TotalMillis     float64 `json:"total_ms"`
	PairTotalMillis float64 `json:"pair_total_ms"`
	StaleOverlaps   int     `json:"stale_overlaps"`
	StaleMillis     float64 `json:"stale_ms"`
}

// Records is the run's history (nil when the cluster never started).
func (r *Result) Records() []history.Record { return r.records }

// Judge fills Expectations, Pass and Failures from the rest.
func (r *Result) Judge() {
	r.Expectations = r.Expectations[:0]
	r.Failures = nil
	for _, s := range r.Steps {
		if s.Expect != nil {
			r.Expectations = append(r.Expectations, *s.Expect)
			if !s.Expect.Pass {
				r.Failures = append(r.Failures, fmt.Sprintf("step %d (line %d) expect %s: %s", s.Index, s.Line, s.Expect.Expect, s.Expect.Seen))
			}
		}
	}
	for _, c := range r.Checkers {
		if !c.Match {
			line := fmt.Sprintf("checker %s: expected %s, got %s: %s", c.Checker, c.Expected, verdictWord(c.Pass), c.Summary)
			if d := c.Detail(); d != "" {
				line += "\n      " + strings.ReplaceAll(d, "\n", "\n      ")
			}
			r.Failures = append(r.Failures, line)
		}
	}
	for _, e := range r.Errors {
		r.Failures = append(r.Failures, "error: "+e)
	}
	r.Pass = len(r.Failures) == 0
}

// ExpectationsPassed counts passed expectations.
func (r *Result) ExpectationsPassed() (passed, total int) {
	for _, e := range r.Expectations {
		if e.Pass {
			passed++
		}
	}
	return passed, len(r.Expectations)
}

// Checker returns the result of the named checker, if it ran.
func (r *Result) Checker(name check.Name) (CheckerResult, bool) {
	for _, c := range r.Checkers {
		if c.Checker == name {
			return c, true
		}
	}
	return CheckerResult{}, false
}

// WriteFiles writes results.json (and report.html, see writeReport) into
// the run's directory.
func (r *Result) WriteFiles() error {
	if err := r.WriteResults(); err != nil {
		return err
	}
	return writeReport(r)
}

// WriteResults writes results.json into the run's directory.
func (r *Result) WriteResults() error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	err = outpath.WriteFile(filepath.Join(r.Dir, "results.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// ReadResult reads a results.json.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	return &r, nil
}

func idsText(ids []election.NodeID) string { return string(appendIDs(nil, ids)) }

// appendIDs appends ids as idsText writes them: "{1,2,3}".
func appendIDs(b []byte, ids []election.NodeID) []byte {
	return append(election.AppendIDs(append(b, '{'), ids), '}')
}

// EngineResult is one engine of a run across several and the nodes it
// held.
type EngineResult struct {
	Engine string            `json:"engine"`
	Nodes  []election.NodeID `json:"nodes"`
}
