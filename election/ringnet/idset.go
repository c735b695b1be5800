package ringnet

import (
	"slices"

	"github.com/ringleader-dev/ringleader/election"
)

// IDSet is a set of node IDs kept as sorted, disjoint runs of consecutive
// IDs. The IDs a ring node passes on in one election tend to come in runs
// (on Chang–Roberts' worst ring, node k passes on exactly k, k+1, …, n), so
// a node that has forwarded a hundred thousand candidates holds one run,
// where a map would hold a hundred thousand entries: a 10,000-node worst
// ring needs 50 million.
type IDSet struct {
	runs []idRun
}

type idRun struct{ lo, hi election.NodeID } // inclusive

// Add inserts id and reports whether it was new.
func (s *IDSet) Add(id election.NodeID) bool {
	// i is the first run that ends at or after id-1 (a run id may extend
	// or sit in).
	i, _ := slices.BinarySearchFunc(s.runs, id, func(r idRun, id election.NodeID) int {
		switch {
		case r.hi+1 < id:
			return -1
		case r.hi+1 > id:
			return 1
		}
		return 0
	})
	switch {
	case i < len(s.runs) && s.runs[i].lo <= id && id <= s.runs[i].hi:
		return false
	case i < len(s.runs) && s.runs[i].hi+1 == id:
		s.runs[i].hi = id
		if i+1 < len(s.runs) && s.runs[i+1].lo == id+1 {
			s.runs[i].hi = s.runs[i+1].hi
			s.runs = slices.Delete(s.runs, i+1, i+2)
		}
	case i < len(s.runs) && s.runs[i].lo == id+1:
		s.runs[i].lo = id
	default:
		s.runs = slices.Insert(s.runs, i, idRun{id, id})
	}
	return true
}

// Has reports whether id is in the set.
func (s *IDSet) Has(id election.NodeID) bool {
	i, ok := slices.BinarySearchFunc(s.runs, id, func(r idRun, id election.NodeID) int {
		switch {
		case r.hi < id:
			return -1
		case r.lo > id:
			return 1
		}
		return 0
	})
	_ = i
	return ok
}

// Clear empties the set, keeping its storage.
func (s *IDSet) Clear() { s.runs = s.runs[:0] }
