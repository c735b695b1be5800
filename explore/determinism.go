package explore

import (
	"encoding/json"
	"fmt"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Divergence is where two plays of one schedule first differ: the same
// seed gave another history, so the algorithm is not deterministic (a
// program that reads a clock, draws from an unseeded generator, or keeps
// state across a start). Its replay command and shrunk scenario cannot be
// trusted to fail the same way.
type Divergence struct {
	Seed int64 `json:"seed"`
	// Record is the index of the first history record that differed;
	// First and Second are it in each play ("" when that play's history
	// had ended).
	Record        int    `json:"record"`
	First, Second string `json:"-"`
}

func (d *Divergence) String() string {
	return fmt.Sprintf("nondeterministic: two plays of seed %d first differ at history record %d:\n    first:  %s\n    second: %s",
		d.Seed, d.Record, orEnd(d.First), orEnd(d.Second))
}

func orEnd(s string) string {
	if s == "" {
		return "(the history had ended)"
	}
	return s
}

// CheckDeterminism plays the schedule with seed twice, with full
// histories (messages included), and returns where they first differ, or
// nil when they are the same record for record.
func CheckDeterminism(opts Options, seed int64) (*Divergence, error) {
	var plays [2]history.Memory
	for i := range plays {
		if _, err := One(opts, seed, &plays[i]); err != nil {
			return nil, err
		}
	}
	return Compare(seed, plays[0].Records(), plays[1].Records()), nil
}

// Compare returns where two histories of one run with seed first differ,
// record for record, or nil when they are the same.
func Compare(seed int64, a, b []history.Record) *Divergence {
	for i := range max(len(a), len(b)) {
		ra, rb := recordText(a, i), recordText(b, i)
		if ra != rb {
			return &Divergence{Seed: seed, Record: i, First: ra, Second: rb}
		}
	}
	return nil
}

func recordText(rs []history.Record, i int) string {
	if i >= len(rs) {
		return ""
	}
	b, err := json.Marshal(rs[i])
	if err != nil {
		return fmt.Sprintf("(unprintable: %v)", err)
	}
	return string(b)
}

// maxDeterminismChecks bounds the failing schedules of a program that
// the explorer plays twice more to check that they replay.
const maxDeterminismChecks = 3

// checkReplays plays the first failing schedules of an algorithm that is
// not seeded by construction (election.Algorithm.Seeded false: a program)
// again, and marks those that do not replay.
func checkReplays(opts Options, alg election.Algorithm, res *Result) error {
	if alg.Seeded {
		return nil
	}
	for i := range res.Failing[:min(len(res.Failing), maxDeterminismChecks)] {
		d, err := CheckDeterminism(opts, res.Failing[i].Seed)
		if err != nil {
			return err
		}
		if d != nil {
			res.Failing[i].Nondeterministic = d.String()
			res.NondeterministicSchedules++
		}
	}
	return nil
}
