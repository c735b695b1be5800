package explore

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ringleader-dev/ringleader/check"
)

// Shard is one part of an exploration, for running it in several processes
// or on several machines: schedule k belongs to shard k mod Count. A
// schedule's seed depends on its index alone (ScheduleSeed), so a shard
// plays exactly the schedules the whole exploration would at those
// indexes, and Merge of every shard's Result is the whole one's. The zero
// value is the whole exploration.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/n" (0 ≤ i < n).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n, as 0/4", s)
	}
	sh := Shard{Index: idx, Count: cnt}
	if cnt < 1 {
		return Shard{}, fmt.Errorf("shard %q: want i/n with n ≥ 1", s)
	}
	return sh, sh.validate()
}

func (s Shard) validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want i/n with 0 ≤ i < n", s.Index, s.Count)
	}
	return nil
}

// String is "i/n", or "" for the whole exploration.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// size is how many of total schedules are this shard's.
func (s Shard) size(total int) int {
	step, first := max(s.Count, 1), s.Index
	if first >= total {
		return 0
	}
	return (total - first + step - 1) / step
}

// index is the schedule index of this shard's k-th schedule.
func (s Shard) index(k int) int { return s.Index + k*max(s.Count, 1) }

// Merge puts the Results of every shard of one exploration together: the
// Result the exploration run whole would give, its first keep failing and
// split-brain schedules included (zero keep: 20, Run's default). The
// parts must be the shards 0..n-1 of n, each once, of one algorithm,
// cluster, seed and schedule count. SimulatedSeconds is a sum of the
// parts' sums, so it may differ from the whole run's in the last digits.
func Merge(parts []Result, keep int) (Result, error) {
	if err := checkParts(parts); err != nil {
		return Result{}, err
	}
	if keep <= 0 {
		keep = 20
	}
	first := parts[0]
	m := Result{
		Algorithm: first.Algorithm, N: first.N, Quorum: first.Quorum, Options: first.Options, Seed: first.Seed,
		Schedules: first.Of, Claimed: first.Claimed, Failures: map[check.Name]int{}, Replay: []string{},
	}
	for _, p := range parts {
		for c, k := range p.Failures {
			m.Failures[c] += k
		}
		m.FailedSchedules += p.FailedSchedules
		m.SplitBrainSchedules += p.SplitBrainSchedules
		m.EpochConflictSchedules += p.EpochConflictSchedules
		m.StaleLeaderSchedules += p.StaleLeaderSchedules
		m.NondeterministicSchedules += p.NondeterministicSchedules
		m.SimulatedSeconds += p.SimulatedSeconds
		m.Failing = append(m.Failing, p.Failing...)
		m.SplitBrain = append(m.SplitBrain, p.SplitBrain...)
	}
	m.Failing = firstByIndex(m.Failing, keep)
	m.SplitBrain = firstByIndex(m.SplitBrain, keep)
	for _, kept := range [][]Schedule{m.Failing, m.SplitBrain} {
		for _, sc := range kept {
			m.Replay = append(m.Replay, sc.Replay)
		}
	}
	return m, nil
}

// checkParts says what keeps parts from being the shards of one exploration.
func checkParts(parts []Result) error {
	if len(parts) == 0 {
		return fmt.Errorf("merge: no results")
	}
	first := parts[0]
	seen := make([]bool, max(first.ShardCount(), 1))
	for i, p := range parts {
		switch {
		case p.Shard == "":
			return fmt.Errorf("merge: result %d is not a shard (run it with --shard i/n)", i+1)
		case p.Algorithm != first.Algorithm || p.N != first.N || p.Quorum != first.Quorum || !maps.Equal(p.Options, first.Options):
			return fmt.Errorf("merge: shard %s explores %s, %d nodes, quorum %s, options %v; shard %s explores %s, %d nodes, quorum %s, options %v",
				first.Shard, first.Algorithm, first.N, first.Quorum, first.Options, p.Shard, p.Algorithm, p.N, p.Quorum, p.Options)
		case p.Seed != first.Seed || p.Of != first.Of:
			return fmt.Errorf("merge: shard %s is of %d schedules from seed %d, shard %s of %d from seed %d",
				first.Shard, first.Of, first.Seed, p.Shard, p.Of, p.Seed)
		case p.ShardCount() != len(seen):
			return fmt.Errorf("merge: shard %s and shard %s split the schedules differently", first.Shard, p.Shard)
		}
		sh, _ := ParseShard(p.Shard)
		if seen[sh.Index] {
			return fmt.Errorf("merge: shard %s given twice", p.Shard)
		}
		seen[sh.Index] = true
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("merge: shard %d/%d missing", i, len(seen))
	}
	return nil
}

// ShardCount is n of a shard's "i/n", or 0 for a whole exploration.
func (r Result) ShardCount() int {
	sh, err := ParseShard(r.Shard)
	if err != nil {
		return 0
	}
	return sh.Count
}

// firstByIndex is the keep schedules of scs with the lowest indexes, in
// index order: each shard kept its own first ones, so these are the first
// ones of the whole.
func firstByIndex(scs []Schedule, keep int) []Schedule {
	slices.SortFunc(scs, func(a, b Schedule) int { return cmp.Compare(a.Index, b.Index) })
	return scs[:min(len(scs), keep)]
}
