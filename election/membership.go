package election

import (
	"fmt"
	"slices"
	"sync"
)

// Membership is a validated member list with the lookups machines need
// (ring position, rank by ID), built once and shared, read-only, by every
// machine of a cluster. A simulated cluster of a million nodes must not
// hold a million copies of the member list, or validate it a million
// times: the simulator builds one Membership and hands it to every
// machine in Config.Membership.
type Membership struct {
	members []NodeID // ring order
	sorted  []NodeID // ascending
	// pos maps an ID to its ring position. IDs are usually 1..n, so a
	// dense slice (−1 for a non-member) serves; sparse IDs use the map.
	dense []int32
	pos   map[NodeID]int32

	// shared holds what the machines of the cluster share (Shared).
	mu     sync.Mutex
	shared []sharedValue
}

type sharedValue struct{ key, value any }

// NewMembership validates members (non-empty, positive, no repeats) and
// builds the lookups. It keeps members as given: the caller must not
// modify it afterwards.
func NewMembership(members []NodeID) (*Membership, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("empty membership")
	}
	m := &Membership{members: members}
	maxID := slices.Max(members)
	if int64(maxID) <= 4*int64(len(members))+64 {
		m.dense = make([]int32, maxID+1)
		for i := range m.dense {
			m.dense[i] = -1
		}
	} else {
		m.pos = make(map[NodeID]int32, len(members))
	}
	for i, id := range members {
		if id <= 0 {
			return nil, fmt.Errorf("membership %s: ID %d is not positive", shortIDs(members), id)
		}
		if m.Index(id) >= 0 {
			return nil, fmt.Errorf("membership %s: ID %d appears twice", shortIDs(members), id)
		}
		if m.dense != nil {
			m.dense[id] = int32(i)
		} else {
			m.pos[id] = int32(i)
		}
	}
	m.sorted = slices.Sorted(slices.Values(members))
	return m, nil
}

// shortIDs prints a member list in an error, the first few IDs of a long
// one only.
func shortIDs(ids []NodeID) string {
	if len(ids) <= 20 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v… (%d IDs)", ids[:20], len(ids))
}

// Members is the member list in ring order; shared, not to be modified.
func (m *Membership) Members() []NodeID { return m.members }

// Len is the number of members.
func (m *Membership) Len() int { return len(m.members) }

// Index returns id's ring position, or -1 for a non-member.
func (m *Membership) Index(id NodeID) int {
	if m.dense != nil {
		if id < 0 || int(id) >= len(m.dense) {
			return -1
		}
		return int(m.dense[id])
	}
	if i, ok := m.pos[id]; ok {
		return int(i)
	}
	return -1
}

// Sorted is the member list in ascending ID order; shared, not to be
// modified.
func (m *Membership) Sorted() []NodeID { return m.sorted }

// Rank is the number of members with a lower ID than id (id's position in
// Sorted), or -1 for a non-member.
func (m *Membership) Rank(id NodeID) int {
	i, ok := slices.BinarySearch(m.sorted, id)
	if !ok {
		return -1
	}
	return i
}

// Shared returns the value kept under key for every machine that holds
// this Membership, calling make for it the first time. A machine keeps
// there what would otherwise be the same in each of a million copies (a
// ring core's timing and options): the value must not be modified once
// shared. key is compared with ==, as a map key is: a caller makes what
// the value is made from part of its key, so that machines configured
// differently share nothing.
func (m *Membership) Shared(key any, make func() any) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.shared {
		if s.key == key {
			return s.value
		}
	}
	v := make()
	m.shared = append(m.shared, sharedValue{key, v})
	return v
}
