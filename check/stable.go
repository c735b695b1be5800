package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// ComponentJudgement is what agreement or bully-max saw in one component at
// one checkpoint.
type ComponentJudgement struct {
	Nodes []election.NodeID `json:"nodes"`
	// Views maps each node to the leader it viewed (0: none).
	Views map[election.NodeID]election.NodeID `json:"views"`
	// Majority: the component holds a majority of the membership (only
	// reported in quorum mode, where it decides whether a leader is due).
	Majority bool `json:"majority,omitempty"`
	// Expected is the leader bully-max wants (0: none).
	Expected election.NodeID `json:"expected"`
	Pass     bool            `json:"pass"`
	// Skipped: the component is joined only through bridge nodes, where
	// the algorithms' premise of a complete network does not hold.
	Skipped bool   `json:"skipped,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// CheckpointJudgement is every component at one checkpoint.
type CheckpointJudgement struct {
	At         time.Time            `json:"at"`
	Offset     string               `json:"offset"` // from the history's start
	Down       []election.NodeID    `json:"down,omitempty"`
	Paused     []election.NodeID    `json:"paused,omitempty"`
	Components []ComponentJudgement `json:"components"`
}

// StableEvidence is the evidence of agreement and bully-max.
type StableEvidence struct {
	Checkpoints []CheckpointJudgement `json:"checkpoints"`
}

func viewedLeaders(s chaos.State, nodes []election.NodeID) map[election.NodeID]election.NodeID {
	out := make(map[election.NodeID]election.NodeID, len(nodes))
	for _, n := range nodes {
		out[n] = s.Views[n].Leader
	}
	return out
}

func describeViews(nodes []election.NodeID, views map[election.NodeID]election.NodeID) string {
	by := map[election.NodeID][]election.NodeID{}
	var leaders []election.NodeID
	for _, n := range nodes {
		l := views[n]
		if _, ok := by[l]; !ok {
			leaders = append(leaders, l)
		}
		by[l] = append(by[l], n)
	}
	slices.Sort(leaders)
	parts := make([]string, 0, len(leaders))
	for _, l := range leaders {
		name := strconv.Itoa(int(l))
		if l == 0 {
			name = "none"
		}
		parts = append(parts, fmt.Sprintf("%s (nodes %s)", name, idList(by[l])))
	}
	return strings.Join(parts, ", ")
}

// judgeStable judges every component at every checkpoint with judge, which
// fills Pass, Expected and Problem.
func judgeStable(t *Timeline, opts Options, judge func(c *ComponentJudgement)) (StableEvidence, []string) {
	var ev StableEvidence
	var failures []string
	maj := majority(opts.Members)
	var s chaos.State // refilled at each checkpoint: the judgement keeps none of it
	for _, at := range checkpoints(t, opts) {
		i := t.checkpointSnap(at)
		if len(opts.Checkpoints) == 0 {
			i = t.snapAt(at) // the end of the history: its final state
		}
		t.fill(i, &s)
		cp := CheckpointJudgement{At: at, Offset: rel(t, at)}
		for _, m := range t.Members {
			switch livenessOf(s, m) {
			case Down:
				cp.Down = append(cp.Down, m)
			case Paused:
				cp.Paused = append(cp.Paused, m)
			}
		}
		for _, c := range Components(s, t.Members) {
			j := ComponentJudgement{Nodes: c.Nodes, Views: viewedLeaders(s, c.Nodes)}
			if opts.Quorum == election.Majority {
				j.Majority = len(c.Nodes) >= maj
			}
			if !c.Clique {
				j.Skipped, j.Pass = true, true
				j.Problem = "not every pair can talk directly (joined through a bridge); not judged"
			} else {
				judge(&j)
				if !j.Pass {
					failures = append(failures, fmt.Sprintf("at %s component {%s}: %s", cp.Offset, idList(c.Nodes), j.Problem))
				}
			}
			cp.Components = append(cp.Components, j)
		}
		ev.Checkpoints = append(ev.Checkpoints, cp)
	}
	return ev, failures
}

func stableVerdict(name Name, ev StableEvidence, failures []string, okText string) Verdict {
	v := Verdict{Checker: name, Evidence: Evidence{Stable: &ev}, Pass: len(failures) == 0}
	if v.Pass {
		comps, skipped := 0, 0
		for _, cp := range ev.Checkpoints {
			for _, c := range cp.Components {
				comps++
				if c.Skipped {
					skipped++
				}
			}
		}
		v.Summary = fmt.Sprintf("%s at %d checkpoint(s), %d component(s) judged", okText, len(ev.Checkpoints), comps-skipped)
		if skipped > 0 {
			v.Summary += fmt.Sprintf(", %d bridged component(s) not judged", skipped)
		}
		return v
	}
	v.Summary = failures[0]
	if len(failures) > 1 {
		v.Summary += fmt.Sprintf(" (and %d more)", len(failures)-1)
	}
	return v
}

// checkAgreement: at each checkpoint, every component is settled by the
// one rule (Settled): a component entitled to a leader agrees on a live
// leader of its own; in quorum mode a minority views no leader at all.
func checkAgreement(t *Timeline, _ []history.Record, opts Options) Verdict {
	ev, failures := judgeStable(t, opts, func(c *ComponentJudgement) {
		entitled := Entitled(len(c.Nodes), opts.Members, opts.Quorum)
		c.Problem = componentProblem(c.Nodes, func(n election.NodeID) election.NodeID { return c.Views[n] }, entitled)
		c.Pass = c.Problem == ""
	})
	return stableVerdict(Agreement, ev, failures, "every component agrees")
}

// checkBullyMax: at each checkpoint, every node of each component views the
// component's highest live ID; in quorum mode a component without a
// majority must have no leader at all.
func checkBullyMax(t *Timeline, _ []history.Record, opts Options) Verdict {
	quorum := opts.Quorum == election.Majority
	ev, failures := judgeStable(t, opts, func(c *ComponentJudgement) {
		c.Expected = slices.Max(c.Nodes)
		if quorum && !c.Majority {
			c.Expected = 0
		}
		var wrong []election.NodeID
		for _, n := range c.Nodes {
			if c.Views[n] != c.Expected {
				wrong = append(wrong, n)
			}
		}
		if len(wrong) == 0 {
			c.Pass = true
			return
		}
		if c.Expected == 0 {
			c.Problem = fmt.Sprintf("a minority (%d of %d) must have no leader, but views are %s", len(c.Nodes), len(opts.Members), describeViews(c.Nodes, c.Views))
		} else {
			c.Problem = fmt.Sprintf("highest live ID is %d, but views are %s", c.Expected, describeViews(c.Nodes, c.Views))
		}
	})
	return stableVerdict(BullyMax, ev, failures, "every component's leader is its highest live ID")
}
