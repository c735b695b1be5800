package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Status is what a node's process is doing at an instant.
type Status string

const (
	// Up: the process runs and is not paused.
	Up Status = "up"
	// Down: killed or stopped.
	Down Status = "down"
	// Paused: frozen; the process keeps its state (and its view).
	Paused Status = "paused"
)

// ViewSpan is one interval during which a node held one view. End is the
// instant the view changed, the node went down, or the timeline's end.
type ViewSpan struct {
	Node  election.NodeID `json:"node"`
	Start time.Time       `json:"start"`
	End   time.Time       `json:"end"`
	View  election.View   `json:"view"`
}

// StateSpan is one interval of one liveness state of a node.
type StateSpan struct {
	Node  election.NodeID `json:"node"`
	Start time.Time       `json:"start"`
	End   time.Time       `json:"end"`
	State Status          `json:"state"`
}

// Lane is everything the timeline knows about one node.
type Lane struct {
	Node   election.NodeID `json:"node"`
	Views  []ViewSpan      `json:"views"`
	States []StateSpan     `json:"states"`
}

// FaultSpan is one nemesis operation: invoked, applied (its ok record) and in
// effect until it was undone (a restart of a killed node, a resume, a heal)
// or the timeline ended. Operations that undo others (restart, resume, heal)
// have Until equal to Applied.
type FaultSpan struct {
	// Fault is the fault as the history records it: what was asked (op,
	// target) and, once done, what it resolved to and its note or error.
	history.Fault
	Label   string    `json:"label"`
	Invoked time.Time `json:"invoked"`
	Applied time.Time `json:"applied"` // zero when it failed or never completed
	Until   time.Time `json:"until"`
	Failed  bool      `json:"failed,omitempty"`
}

// At is the instant the fault took effect: its ok record, or its invoke
// record when no ok was recorded.
func (f FaultSpan) At() time.Time {
	if !f.Applied.IsZero() {
		return f.Applied
	}
	return f.Invoked
}

// Timeline is a history replayed: per node, its views and liveness over time,
// the faults, and the cluster state (views, liveness, cut links) at any
// instant.
type Timeline struct {
	Start   time.Time         `json:"start"`
	End     time.Time         `json:"end"`
	Members []election.NodeID `json:"members"`
	Lanes   []Lane            `json:"lanes"`
	Faults  []FaultSpan       `json:"faults"`

	snaps []snapshot
	// slots holds every snapshot's member states, len(Members) of them
	// per snapshot (snapshot i's from i·len(Members)), by position in
	// Members.
	slots []memberState
	// roles are the roles the history's views name, each once; a member
	// state holds an index into it.
	roles []election.Role
}

// snapshot is the cluster state from at until the next snapshot: its
// members' states in Timeline.slots, and the cut links, in a map shared
// with the snapshots before it until a partition or heal changes them.
// A replay takes a snapshot at every view change, and copying a few
// member states costs far less than copying the maps of a chaos.State;
// StateAt builds those for the few instants a checker asks about.
type snapshot struct {
	at    time.Time
	net   *netFaults
	fault bool // made by a fault record
}

// netFaults is the part of the world model a snapshot shares with the
// snapshots before it until a fault changes it: cut links, per-node
// network faults and clocks, as chaos.State.Apply left them. Never written
// once taken.
type netFaults struct {
	cut    map[[2]election.NodeID]bool
	net    map[chaos.NetKey]chaos.Params
	clocks map[election.NodeID]chaos.Skew
}

// noNetFaults is the network part of every snapshot with none in force:
// nil maps, read-only like every snapshot's.
var noNetFaults netFaults

// frozenFrom is w's network and clock part, when it differs from prev
// (else prev itself, shared).
func frozenFrom(w chaos.State, prev *netFaults) *netFaults {
	if len(w.Cut) == 0 && len(w.Net) == 0 && len(w.Clocks) == 0 {
		return &noNetFaults // most snapshots: nothing to copy
	}
	if prev != nil && maps.Equal(w.Cut, prev.cut) && maps.EqualFunc(w.Net, prev.net, chaos.Params.Equal) &&
		maps.Equal(w.Clocks, prev.clocks) {
		return prev
	}
	return &netFaults{cut: maps.Clone(w.Cut), net: maps.Clone(w.Net), clocks: maps.Clone(w.Clocks)}
}

// memberState is one member's part of a snapshot: 24 bytes, its view's
// role being an index into Timeline.roles rather than a string.
type memberState struct {
	leader election.NodeID
	epoch  uint64
	role   uint32 // 1 + the index of the view's role; 0: no view
	up     bool
	paused bool
}

func (m memberState) hasView() bool { return m.role != 0 }

// sameView reports whether m and o hold the same view (or both none).
func (m memberState) sameView(o memberState) bool {
	return m.leader == o.leader && m.epoch == o.epoch && m.role == o.role
}

// view is m's view; only valid when m.hasView().
func (t *Timeline) view(m memberState) election.View {
	return election.View{Leader: m.leader, Epoch: m.epoch, Role: t.roles[m.role-1]}
}

// withView is m holding view v.
func (t *Timeline) withView(m memberState, v election.View) memberState {
	i := slices.Index(t.roles, v.Role)
	if i < 0 {
		i = len(t.roles)
		t.roles = append(t.roles, v.Role)
	}
	m.leader, m.epoch, m.role = v.Leader, v.Epoch, uint32(i+1)
	return m
}

// status is the member's liveness.
func (m memberState) status() Status { return statuses[m.statusCode()] }

// statusCode is status as an index into statuses: buildLanes compares
// codes rather than strings, at every snapshot of every member.
func (m memberState) statusCode() uint8 {
	switch {
	case !m.up:
		return 0
	case m.paused:
		return 1
	}
	return 2
}

var statuses = [...]Status{Down, Paused, Up}

// state builds snapshot i's cluster state. Its maps are the caller's,
// except Cut, Net and Clocks, which it must not modify.
func (t *Timeline) state(i int) chaos.State {
	var s chaos.State
	t.fill(i, &s)
	return s
}

// fill makes s snapshot i's cluster state, reusing s's maps (Cut, Net and
// Clocks aside, which are the snapshot's own and must not be modified). A checker that
// looks at one instant after another and keeps nothing of what it saw
// (liveness searching for a settled one) refills one state rather than
// building maps for each.
func (t *Timeline) fill(i int, s *chaos.State) {
	n := len(t.Members)
	if s.Views == nil {
		s.Views = make(map[election.NodeID]election.View, n)
		s.Up = make(map[election.NodeID]bool, n)
		s.Paused = map[election.NodeID]bool{}
	} else {
		clear(s.Views)
		clear(s.Up)
		clear(s.Paused)
	}
	net := t.snaps[i].net
	s.Cut, s.Net, s.Clocks = net.cut, net.net, net.clocks
	for j, m := range t.slots[i*n : (i+1)*n] {
		id := t.Members[j]
		s.Up[id] = m.up
		if m.hasView() {
			s.Views[id] = t.view(m)
		}
		if m.paused {
			s.Paused[id] = true
		}
	}
}

// Sorted returns recs ordered by time; records with equal times keep their
// order (a history merged from several sources is only roughly ordered).
func Sorted(recs []history.Record) []history.Record {
	out := slices.Clone(recs)
	// A simulated history is written in time order; checking that is one
	// pass, far cheaper than a stable sort that would change nothing.
	if !slices.IsSortedFunc(out, func(a, b history.Record) int { return a.Time.Compare(b.Time) }) {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	}
	return out
}

// MembersOf returns members, extended (sorted) by every node ID the history
// mentions that members lacks. The configured order is kept first because it
// is the ring order.
func MembersOf(recs []history.Record, members []election.NodeID) []election.NodeID {
	out := slices.Clone(members)
	seen := map[election.NodeID]bool{}
	for _, m := range out {
		seen[m] = true
	}
	var extra []election.NodeID
	add := func(id election.NodeID) {
		if id > 0 && !seen[id] {
			seen[id] = true
			extra = append(extra, id)
		}
	}
	for _, r := range recs {
		add(r.Node)
		if r.Msg != nil {
			add(r.Msg.From)
			add(r.Msg.To)
		}
		if r.Fault != nil {
			for _, id := range r.Fault.Nodes {
				add(id)
			}
			for _, g := range r.Fault.Groups {
				for _, id := range g {
					add(id)
				}
			}
			for _, l := range r.Fault.Links {
				add(l[0])
				add(l[1])
			}
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

// NewTimeline replays recs. members is the configured membership (ring
// order); IDs the history mentions beyond it are added.
//
// The replay rules (docs/checkers.md explains why):
//   - every member is up, with no view, from the first record on;
//   - a fault changes the state at its ok record; an invoke alone (a run
//     that crashed mid-fault) and a fail change nothing;
//   - kill/stop ok, or a node's own stop record: down, view forgotten;
//   - restart ok, a boot record, or any record from a down node that is not
//     a late line of the boot that was killed: up, view forgotten (a new
//     process starts undecided);
//   - pause ok: paused (the view is kept: a frozen leader still believes it
//     leads); resume ok: up;
//   - kill, stop and resume ok records are first dated by the nodes' own
//     acts rather than the engine's answer (see Settled);
//   - partition ok: its directed cuts are added to those in force; heal ok
//     clears every cut.
func NewTimeline(recs []history.Record, members []election.NodeID) *Timeline {
	return newTimelineSorted(DateFaults(recs), members)
}

// newTimelineSorted is NewTimeline for records already Settled, so
// that Run, which needs the sorted records itself, sorts them only once.
func newTimelineSorted(recs []history.Record, members []election.NodeID) *Timeline {
	t := &Timeline{Members: MembersOf(recs, members)}
	if len(recs) > 0 {
		t.Start, t.End = recs[0].Time, recs[len(recs)-1].Time
	}
	n := len(t.Members)
	pos := newPositions(t.Members)
	// cur is the replayed state of the members; a snapshot copies it.
	cur := make([]memberState, n)
	for i := range cur {
		cur[i].up = true
	}
	// world is the fault part of the state, replayed through
	// chaos.State.Apply like every world applies faults; its network and
	// clock part is frozen into the snapshots when it changes.
	world := chaos.NewState()
	for _, m := range t.Members {
		world.Up[m] = true
	}
	var frozen *netFaults
	netChanged := true // the world's network part differs from frozen
	snaps := stateRecords(recs) + 1
	t.snaps = make([]snapshot, 0, snaps)
	t.slots = make([]memberState, 0, snaps*n)
	take := func(at time.Time, fault bool) {
		if netChanged {
			frozen, netChanged = frozenFrom(world, frozen), false
		}
		t.snaps = append(t.snaps, snapshot{at: at, net: frozen, fault: fault})
		t.slots = append(t.slots, cur...)
	}
	take(t.Start, false)
	lastBoot := make([]string, n) // by position
	deadBoot := make([]string, n)

	// A fault names only members (MembersOf) unless an ID is not
	// positive, which is nobody: p < 0 changes nothing.
	goDown := func(p int) bool {
		if p < 0 || !cur[p].up {
			return false
		}
		cur[p] = memberState{} // down: no view, not paused
		deadBoot[p] = lastBoot[p]
		// What the node's own records show (a stop line, a process that
		// ended with no fault) enters the world model as the fault it
		// amounts to, like everything else that changes it.
		world.Apply(chaos.Fault{Op: chaos.Kill, Nodes: []election.NodeID{t.Members[p]}}, t.Members)
		return true
	}
	comeUp := func(p int) bool {
		if p < 0 || cur[p].up {
			return false
		}
		cur[p] = memberState{up: true} // a new process: no view yet
		if !world.Up[t.Members[p]] {
			world.Apply(chaos.Fault{Op: chaos.Restart, Nodes: []election.NodeID{t.Members[p]}}, t.Members)
		}
		return true
	}
	// follow brings the members a fault named to what the world model
	// now says of them.
	follow := func(ids []election.NodeID) (changed bool) {
		for _, id := range ids {
			p := pos.of(id)
			if p < 0 {
				continue
			}
			switch up := world.Up[id]; {
			case up && !cur[p].up:
				changed = comeUp(p) || changed
			case !up && cur[p].up:
				changed = goDown(p) || changed
			}
			if paused := cur[p].up && world.Paused[id]; paused != cur[p].paused {
				cur[p].paused = paused
				changed = true
			}
		}
		return changed
	}

	for _, r := range recs {
		changed := false
		switch {
		case r.Kind == history.KindFault && r.Fault != nil:
			if r.Fault.Phase != history.FaultOK {
				break
			}
			netChanged = replayFault(&world, chaos.FaultOf(r.Fault), t.Members)
			changed = follow(r.Fault.Nodes) || netChanged
		case r.Node > 0:
			p := pos.of(r.Node) // a member: MembersOf added it
			m := &cur[p]
			if !m.up {
				if r.Boot != "" && r.Boot == deadBoot[p] && r.Kind != history.KindBoot {
					break // a late line from the process that was killed
				}
				if r.Kind == history.KindStop {
					break
				}
				changed = comeUp(p) || changed
			} else if r.Kind == history.KindBoot || (r.Boot != "" && lastBoot[p] != "" && r.Boot != lastBoot[p]) {
				// A new process without a recorded kill: it restarted.
				if m.hasView() {
					m.leader, m.epoch, m.role = 0, 0, 0
					changed = true
				}
				m.paused = false
			}
			if r.Boot != "" {
				lastBoot[p] = r.Boot
			}
			switch r.Kind {
			case history.KindStop:
				changed = goDown(p) || changed
			case history.KindView:
				if r.View != nil {
					if v := t.withView(*m, *r.View); !v.sameView(*m) {
						*m = v
						changed = true
					}
				}
			}
		}
		if changed {
			// One snapshot per change, even at one instant: a checkpoint
			// taken at the instant of the next fault must see the state
			// just before that fault (see CheckpointState).
			take(r.Time, r.Kind == history.KindFault)
		}
	}
	t.buildLanes()
	t.Faults = faultSpans(recs, t.Members, t.End)
	return t
}

// replayFault applies a fault that the history says was carried out to
// the replay's world model, as the backend did: the outcome Decide gives
// (loss rounded, nodes already so left alone), or the fault as recorded
// when the replayed state disagrees with the one the backend saw. It
// reports whether the network or clock part may have changed.
func replayFault(world *chaos.State, f chaos.Fault, members []election.NodeID) bool {
	k, _ := chaos.KindOf(f.Op)
	// Only values can differ from the record (loss rounded to a percent);
	// the rest applies to the same effect as recorded.
	if len(k.Params) > 0 {
		if out, err := chaos.Decide(f, *world, members); err == nil {
			f = out.Fault
		}
	}
	world.Apply(f, members)
	return k.Family != chaos.FamilyProcess || (f.Op == chaos.Restart && len(world.Clocks) > 0)
}

// stateRecords counts the records that may change the replayed state:
// fault completions and a node's boot, stop and view records. (A record
// from a node that is down may too; the count only sizes the snapshots.)
func stateRecords(recs []history.Record) int {
	k := 0
	for _, r := range recs {
		switch r.Kind {
		case history.KindFault:
			if r.Fault != nil && r.Fault.Phase == history.FaultOK {
				k++
			}
		case history.KindBoot, history.KindStop, history.KindView:
			k++
		}
	}
	return k
}

// positions finds a member's position in a member list: in a slice when
// the IDs are small (the usual 1..n), else in a map.
type positions struct {
	dense  []int32 // by ID; -1: not a member
	sparse map[election.NodeID]int
}

func newPositions(members []election.NodeID) positions {
	var p positions
	if len(members) == 0 {
		return p
	}
	if lo, hi := slices.Min(members), slices.Max(members); lo >= 0 && int(hi) <= 4*len(members)+64 {
		p.dense = make([]int32, hi+1)
		for i := range p.dense {
			p.dense[i] = -1
		}
		for i, id := range members {
			if p.dense[id] < 0 {
				p.dense[id] = int32(i)
			}
		}
		return p
	}
	p.sparse = make(map[election.NodeID]int, len(members))
	for i, id := range members {
		if _, ok := p.sparse[id]; !ok {
			p.sparse[id] = i
		}
	}
	return p
}

// of is the position of id, -1 when it is not a member.
func (p positions) of(id election.NodeID) int {
	if p.dense != nil {
		if id < 0 || int(id) >= len(p.dense) {
			return -1
		}
		return int(p.dense[id])
	}
	if i, ok := p.sparse[id]; ok {
		return i
	}
	return -1
}

func livenessOf(s chaos.State, id election.NodeID) Status {
	switch {
	case !s.Up[id]:
		return Down
	case s.Paused[id]:
		return Paused
	}
	return Up
}

// buildLanes cuts every member's views and liveness into spans. Every
// lane's spans are appended to one list of each kind, a lane's being a
// window on it: two allocations rather than a few per lane.
func (t *Timeline) buildLanes() {
	n := len(t.Members)
	t.Lanes = make([]Lane, n)
	views := make([]ViewSpan, 0, len(t.snaps)+n)
	states := make([]StateSpan, 0, 2*n)
	for i, id := range t.Members {
		v0, s0 := len(views), len(states)
		var (
			vOpen  bool
			vSpan  ViewSpan
			vOf    memberState // the state vSpan's view is from
			sSpan  StateSpan
			sCode  uint8 // sSpan.State's statusCode
			sFirst = true
		)
		for k, sn := range t.snaps {
			m := t.slots[k*n+i]
			if vOpen && !m.sameView(vOf) {
				vSpan.End = sn.at
				views = append(views, vSpan)
				vOpen = false
			}
			if m.hasView() && !vOpen {
				vSpan = ViewSpan{Node: id, Start: sn.at, View: t.view(m)}
				vOf, vOpen = m, true
			}
			if st := m.statusCode(); sFirst || st != sCode {
				if !sFirst {
					sSpan.End = sn.at
					states = append(states, sSpan)
				}
				sSpan = StateSpan{Node: id, Start: sn.at, State: statuses[st]}
				sCode, sFirst = st, false
			}
		}
		if vOpen {
			vSpan.End = t.End
			views = append(views, vSpan)
		}
		if !sFirst {
			sSpan.End = t.End
			states = append(states, sSpan)
		}
		lane := Lane{Node: id, Views: window(views, v0), States: window(states, s0)}
		// Spans that begin and end at one instant carry no time.
		lane.Views = slices.DeleteFunc(lane.Views, func(v ViewSpan) bool { return !v.End.After(v.Start) && !v.Start.Equal(t.End) })
		t.Lanes[i] = lane
	}
}

// window is s[from:] with no room to grow into what follows, nil when
// empty (as a lane's list is when nothing was appended to it).
func window[S ~[]E, E any](s S, from int) S {
	if len(s) == from {
		return nil
	}
	return s[from:len(s):len(s)]
}

// Lane returns id's lane, or nil.
func (t *Timeline) Lane(id election.NodeID) *Lane {
	for i := range t.Lanes {
		if t.Lanes[i].Node == id {
			return &t.Lanes[i]
		}
	}
	return nil
}

// StateAt is the cluster state after every record at or before ts. Its
// maps are made for the caller, except Cut, which it must not modify.
func (t *Timeline) StateAt(ts time.Time) chaos.State { return t.state(t.snapAt(ts)) }

// snapAt is the index of the snapshot StateAt(ts) is.
func (t *Timeline) snapAt(ts time.Time) int {
	i := sort.Search(len(t.snaps), func(i int) bool { return t.snaps[i].at.After(ts) })
	return max(i-1, 0)
}

// CheckpointState is the state a checkpoint at ts judges: StateAt(ts),
// except that a fault applied at exactly ts is left out. A harness takes a
// checkpoint at the end of a quiet period and may apply the next fault at the
// same instant (the simulator's clock does not move between the two); the
// checkpoint is about the period that ended, not the fault that begins.
func (t *Timeline) CheckpointState(ts time.Time) chaos.State { return t.state(t.checkpointSnap(ts)) }

// checkpointSnap is the index of the snapshot CheckpointState(ts) is.
func (t *Timeline) checkpointSnap(ts time.Time) int {
	i := sort.Search(len(t.snaps), func(i int) bool { return t.snaps[i].at.After(ts) })
	j := sort.Search(i, func(k int) bool { return !t.snaps[k].at.Before(ts) }) // first snapshot at ts
	for k := j; k < i; k++ {
		if t.snaps[k].fault {
			i = k
			break
		}
	}
	return max(i-1, 0)
}

// Changes returns the instants in [from, to] at which the state changed,
// preceded by from itself: every instant at which a property of the state
// can start to hold.
func (t *Timeline) Changes(from, to time.Time) []time.Time {
	out := []time.Time{from}
	for _, sn := range t.snaps {
		if sn.at.After(from) && !sn.at.After(to) && !sn.at.Equal(out[len(out)-1]) {
			out = append(out, sn.at)
		}
	}
	return out
}

// Component is a set of live nodes that can all exchange messages.
type Component struct {
	Nodes []election.NodeID `json:"nodes"`
	// Clique is false when some pair inside cannot talk directly and is
	// joined only through a third node (a bridge, a non-transitive cut).
	Clique bool `json:"clique"`
}

// Components splits the live (up and unpaused) nodes of s: two nodes are
// linked when messages pass in both directions between them, and a component
// is a connected set of such links. Components are sorted by their smallest
// ID.
func Components(s chaos.State, members []election.NodeID) []Component {
	live := make([]election.NodeID, 0, len(members)) // one allocation, not one per doubling
	for _, m := range members {
		if s.Live(m) {
			live = append(live, m)
		}
	}
	if len(s.Cut) == 0 {
		// Nothing cut: one component of every live node, all linked.
		if len(live) == 0 {
			return []Component{}
		}
		slices.Sort(live)
		return []Component{{Nodes: live, Clique: true}}
	}
	linked := func(a, b election.NodeID) bool { return s.Reachable(a, b) && s.Reachable(b, a) }
	// Union-find over positions in live: the explorer asks this at every
	// view change of thousands of histories, so slices, not maps.
	parent := make([]int, len(live))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, a := range live {
		for j := i + 1; j < len(live); j++ {
			if linked(a, live[j]) {
				parent[find(i)] = find(j)
			}
		}
	}
	var groups [][]election.NodeID
	group := make([]int, len(live)) // root position -> index in groups, plus one
	for i, m := range live {
		r := find(i)
		if group[r] == 0 {
			groups = append(groups, nil)
			group[r] = len(groups)
		}
		groups[group[r]-1] = append(groups[group[r]-1], m)
	}
	out := make([]Component, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g)
		c := Component{Nodes: g, Clique: true}
		for i, a := range g {
			for _, b := range g[i+1:] {
				if !linked(a, b) {
					c.Clique = false
				}
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Component) int { return cmp.Compare(a.Nodes[0], b.Nodes[0]) })
	return out
}

// faultSpans pairs invoke records with their ok/fail records and finds when
// each fault was undone.
func faultSpans(recs []history.Record, members []election.NodeID, end time.Time) []FaultSpan {
	invokes := 0
	for _, r := range recs {
		if r.Kind == history.KindFault && r.Fault != nil && r.Fault.Phase == history.FaultInvoke {
			invokes++
		}
	}
	// A span per invoke (a FaultSpan is a few hundred bytes: sized once),
	// and one per ok without an invoke, which append makes room for.
	var spans []FaultSpan
	if invokes > 0 {
		spans = make([]FaultSpan, 0, invokes)
	}
	open := map[string][]int{} // op -> indexes of spans awaiting ok/fail
	for _, r := range recs {
		if r.Kind != history.KindFault || r.Fault == nil {
			continue
		}
		f := r.Fault
		switch f.Phase {
		case history.FaultInvoke:
			spans = append(spans, FaultSpan{Fault: *f, Invoked: r.Time})
			open[f.Op] = append(open[f.Op], len(spans)-1)
		case history.FaultOK, history.FaultFail:
			var i int
			if q := open[f.Op]; len(q) > 0 {
				i, open[f.Op] = q[0], q[1:]
			} else {
				// An ok without an invoke: treat it as invoked then.
				spans = append(spans, FaultSpan{Fault: history.Fault{Op: f.Op, Target: f.Target}, Invoked: r.Time})
				i = len(spans) - 1
			}
			s := &spans[i]
			// The completion record holds what the fault resolved to.
			if len(f.Nodes) > 0 {
				s.Nodes = f.Nodes
			}
			if len(f.Groups) > 0 {
				s.Groups = f.Groups
			}
			if len(f.Links) > 0 {
				s.Links = f.Links
			}
			if !f.Params.IsZero() {
				s.Params = f.Params
			}
			s.Phase, s.Note = f.Phase, f.Note
			if f.Phase == history.FaultOK {
				s.Applied = r.Time
			} else {
				s.Failed = true
				s.Error = f.Error
			}
		}
	}
	for i := range spans {
		s := &spans[i]
		s.Label = faultLabel(*s)
		s.Until = end
		if s.Failed || s.Applied.IsZero() {
			s.Until = s.At()
			continue
		}
		k, known := chaos.KindOf(chaos.Op(s.Op))
		if !known || !k.IsSpan() {
			s.Until = s.Applied
			continue
		}
		// A fault naming no nodes (heal) ends the span for all of them.
		// pending are the nodes whose part of the span goes on.
		pending := slices.Clone(s.Nodes)
		for j := i + 1; j < len(spans); j++ {
			o := &spans[j] // by pointer: a span is a few hundred bytes
			if o.Failed || o.Applied.IsZero() || o.Applied.Before(s.Applied) {
				continue
			}
			later := chaos.FaultOf(&o.Fault)
			if len(s.Nodes) == 0 {
				if k.Ends(later, election.None) {
					s.Until = o.Applied
					break
				}
				continue
			}
			pending = slices.DeleteFunc(pending, func(id election.NodeID) bool { return k.Ends(later, id) })
			if len(pending) == 0 {
				s.Until = o.Applied
				break
			}
		}
	}
	return spans
}

func idList(ids []election.NodeID) string { return string(election.AppendIDs(nil, ids)) }

// faultLabel is the short human name of a fault: "kill 5",
// "partition {1,2,3}|{4,5}", "cut 1→2", "heal".
func faultLabel(s FaultSpan) string {
	// Appended by hand, not through fmt: every judged history labels
	// every fault, and the explorer judges thousands a second.
	b := make([]byte, 0, 48)
	b = append(b, s.Op...)
	// A partition is told by its shape; the node it was aimed at (an
	// isolated leader) is one of its groups already, and naming it twice
	// read as "partition 5 {5}|{1,2,3,4}".
	if len(s.Nodes) > 0 && len(s.Groups)+len(s.Links) == 0 {
		b = election.AppendIDs(append(b, ' '), s.Nodes)
	}
	if len(s.Groups) > 0 {
		b = append(b, ' ')
		for i, g := range s.Groups {
			if i > 0 {
				b = append(b, '|')
			}
			b = append(election.AppendIDs(append(b, '{'), g), '}')
		}
	}
	for _, l := range s.Links {
		b = strconv.AppendInt(append(b, ' '), int64(l[0]), 10)
		b = strconv.AppendInt(append(b, "→"...), int64(l[1]), 10)
	}
	b = appendFirstParam(b, s.Op, s.Params)
	if s.Failed {
		b = append(b, " (failed)"...)
	}
	return string(b)
}

// appendFirstParam appends the first value of op's kind that the fault
// gives (a loss's fraction, a delay's latency, a clock's rate): the one a
// label has room for.
func appendFirstParam(b []byte, op string, p chaos.Params) []byte {
	if p.IsZero() {
		return b
	}
	k, ok := chaos.KindOf(chaos.Op(op))
	if !ok || len(k.Params) == 0 {
		return b
	}
	v, ok := p.Get(k.Params[0].Field)
	if !ok {
		return b
	}
	if v.IsDur {
		return append(append(b, ' '), v.Dur.String()...)
	}
	return append(append(b, ' '), fmt.Sprint(v.Num)...)
}
