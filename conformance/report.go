package conformance

import (
	"fmt"
	"slices"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/sim"
)

// Report is the outcome of the suite on one algorithm (Check).
type Report struct {
	Algorithm string `json:"algorithm"`
	N         int    `json:"n"`
	Schedules int    `json:"schedules"`
	Seed      int64  `json:"seed"`
	Modes     []Mode `json:"modes"`
}

// Pass reports whether every case of every mode passed.
func (r Report) Pass() bool {
	for _, m := range r.Modes {
		if !m.Pass() {
			return false
		}
	}
	return true
}

// Mode is the suite in one quorum mode.
type Mode struct {
	// Algorithm is the registered name that ran (a program is
	// registered once per mode).
	Algorithm string              `json:"algorithm"`
	Quorum    election.QuorumMode `json:"quorum"`
	// Claims are the properties the algorithm claims in this mode
	// (message-complexity when it publishes a formula), each with its
	// verdict; none when it claims nothing.
	Claims []Claim `json:"claims"`
	Cases  []Case  `json:"cases"`
	// Explore is the exploration RandomFaultSchedules ran and Explored
	// its result (nil when the case stopped before one): what a caller
	// needs to shrink and save a failing schedule (explore.Shrink,
	// explore.Save).
	Explore  explore.Options `json:"-"`
	Explored *explore.Result `json:"-"`
}

// Pass reports whether every case passed (or was skipped).
func (m Mode) Pass() bool {
	for _, c := range m.Cases {
		if c.Outcome == Fail {
			return false
		}
	}
	return true
}

// Outcome is how a case ended.
type Outcome string

const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
)

// Case is one case's outcome.
type Case struct {
	Name    string              `json:"name"`
	Quorum  election.QuorumMode `json:"quorum"`
	Outcome Outcome             `json:"outcome"`
	// Failures are the case's errors, in order; the last one ended the
	// case when it could not go on.
	Failures []Failure `json:"failures,omitempty"`
	// Skipped says why a skipped case did not apply.
	Skipped string `json:"skipped,omitempty"`
	// Logs are what the case noted along the way.
	Logs []string `json:"logs,omitempty"`
}

func newCase(name string, q election.QuorumMode) *Case {
	return &Case{Name: name, Quorum: q, Outcome: Pass}
}

// Failure is one error of a case.
type Failure struct {
	Case string `json:"case"`
	// Property is the property the failure refutes, whether or not the
	// algorithm claims it (a fault-free election that does not agree
	// refutes agreement, which every algorithm must reach there); empty
	// for a failure of the run itself (a simulator that could not start).
	Property check.Name `json:"property,omitempty"`
	// Message says what happened, cut at MaxMessage bytes.
	Message string `json:"message"`
	// Schedule is the explored schedule it happened on, in
	// RandomFaultSchedules.
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Schedule names an explored schedule: enough to play it again.
type Schedule struct {
	Index  int      `json:"index"`
	Seed   int64    `json:"seed"`
	Faults []string `json:"faults"`
	Replay string   `json:"replay"`
	// Nondeterministic is set when two plays of it differed
	// (explore.CheckDeterminism).
	Nondeterministic string `json:"nondeterministic,omitempty"`
}

// MaxMessage bounds a recorded failure's message: a program's failure
// quotes its stderr, up to 16 KiB.
const MaxMessage = 2048

func bound(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	cut := MaxMessage
	for cut > 0 && msg[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes more)", msg[:cut], len(msg)-cut)
}

// Claim is the verdict on one claimed property in one mode.
type Claim struct {
	Property check.Name `json:"property"`
	Holds    bool       `json:"holds"`
	// First is the first failure that refutes it, in case order;
	// FirstSchedule the first on an explored schedule (the one to shrink),
	// which may be the same.
	First         *Failure `json:"first,omitempty"`
	FirstSchedule *Failure `json:"first_schedule,omitempty"`
	// FailedSchedules counts the explored schedules on which its checker
	// failed.
	FailedSchedules int `json:"failed_schedules"`
}

// claimVerdicts judges each property alg claims in q by the failures of
// the cases.
func claimVerdicts(alg election.Algorithm, q election.QuorumMode, cases []Case, explored *explore.Result) []Claim {
	out := []Claim{}
	for _, p := range check.Claimed(alg, q) {
		c := Claim{Property: p, Holds: true}
		if explored != nil {
			c.FailedSchedules = explored.Failures[p]
		}
		for _, cs := range cases {
			for _, f := range cs.Failures {
				if f.Property != p {
					continue
				}
				c.Holds = false
				if c.First == nil {
					c.First = &f
				}
				if c.FirstSchedule == nil && f.Schedule != nil {
					c.FirstSchedule = &f
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// ClaimsNothing reports whether m judged none of the algorithm's own
// claims: only what every run of it is judged by (check.Always: a
// program's failures), which proves nothing of its elections.
func (m Mode) ClaimsNothing() bool {
	return !slices.ContainsFunc(m.Claims, func(c Claim) bool { return c.Property != check.NoProgramFailure })
}

// Violated are the claims of m that did not hold.
func (m Mode) Violated() []check.Name {
	var out []check.Name
	for _, c := range m.Claims {
		if !c.Holds {
			out = append(out, c.Property)
		}
	}
	return out
}

// caseRun is one case being played: it fills the Case and reports each
// message to t as well.
type caseRun struct {
	t   reporter
	res *Case
	// sims are the simulators the case built: judgeProgramFailures
	// reads what failed in them, however the case ended.
	sims []*sim.Sim
}

// judgeProgramFailures refutes no-program-failure with the first machine
// that failed by itself in any of the case's simulators (a program that
// exited, hung or broke the protocol), unless the case already did: a
// program's failure is a finding in every case, the ones that judge no
// history included. It runs after the case, however it ended.
func (c *caseRun) judgeProgramFailures() {
	if slices.ContainsFunc(c.res.Failures, func(f Failure) bool { return f.Property == check.NoProgramFailure }) {
		return
	}
	for _, sm := range c.sims {
		if crashes := sm.Crashes(); len(crashes) > 0 {
			cr := crashes[0]
			msg := fmt.Sprintf("%d program failure(s); first: node %d at %v: %v", len(crashes), cr.Node, cr.At, cr.Err)
			c.add(check.NoProgramFailure, msg, nil)
			c.t.Errorf("%s", msg)
			return
		}
	}
}

func (c *caseRun) add(p check.Name, msg string, sc *Schedule) {
	c.res.Outcome = Fail
	c.res.Failures = append(c.res.Failures, Failure{Case: c.res.Name, Property: p, Message: bound(msg), Schedule: sc})
}

// errorf records a failure that refutes p (empty: none) and goes on.
func (c *caseRun) errorf(p check.Name, format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.add(p, msg, nil)
	c.t.Errorf("%s", msg)
}

// fatalf records a failure that refutes p and ends the case.
func (c *caseRun) fatalf(p check.Name, format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.add(p, msg, nil)
	c.t.Fatalf("%s", msg)
}

// scheduleFailed records that p's checker failed on an explored schedule.
func (c *caseRun) scheduleFailed(p check.Name, sc *Schedule, format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.add(p, msg, sc)
	c.t.Errorf("%s", msg)
}

// skipf ends a case that does not apply.
func (c *caseRun) skipf(format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.res.Outcome, c.res.Skipped = Skip, msg
	c.t.Skipf("%s", msg)
}

func (c *caseRun) logf(format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.res.Logs = append(c.res.Logs, bound(msg))
	c.t.Logf("%s", msg)
}
