package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
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
}

// snapshot is the cluster state from at until the next snapshot.
type snapshot struct {
	at    time.Time
	state chaos.State
	fault bool // made by a fault record
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
	cur := chaos.State{
		Views:  map[election.NodeID]election.View{},
		Up:     map[election.NodeID]bool{},
		Paused: map[election.NodeID]bool{},
		Cut:    map[[2]election.NodeID]bool{},
	}
	for _, m := range t.Members {
		cur.Up[m] = true
	}
	t.snaps = []snapshot{{at: t.Start, state: cur.Clone()}}
	lastBoot := map[election.NodeID]string{}
	deadBoot := map[election.NodeID]string{}
	// dirty says which of cur's maps may differ from the last snapshot's.
	var dirty stateDirty

	goDown := func(id election.NodeID) bool {
		if !cur.Up[id] {
			return false
		}
		dirty = stateDirty{views: true, up: true, paused: true, cut: dirty.cut}
		cur.Up[id] = false
		delete(cur.Paused, id)
		delete(cur.Views, id)
		deadBoot[id] = lastBoot[id]
		return true
	}
	comeUp := func(id election.NodeID) bool {
		if cur.Up[id] {
			return false
		}
		dirty = stateDirty{views: true, up: true, paused: true, cut: dirty.cut}
		cur.Up[id] = true
		delete(cur.Paused, id)
		delete(cur.Views, id)
		return true
	}

	for _, r := range recs {
		changed := false
		switch {
		case r.Kind == history.KindFault && r.Fault != nil:
			if r.Fault.Phase != history.FaultOK {
				break
			}
			f := r.Fault
			switch chaos.Op(f.Op) {
			case chaos.Kill, chaos.Stop:
				for _, id := range f.Nodes {
					changed = goDown(id) || changed
				}
			case chaos.Restart:
				for _, id := range f.Nodes {
					changed = comeUp(id) || changed
				}
			case chaos.Pause:
				for _, id := range f.Nodes {
					if cur.Up[id] && !cur.Paused[id] {
						dirty.paused = true
						cur.Paused[id] = true
						changed = true
					}
				}
			case chaos.Resume:
				for _, id := range f.Nodes {
					if cur.Paused[id] {
						dirty.paused = true
						delete(cur.Paused, id)
						changed = true
					}
				}
			case chaos.Partition:
				cf := chaos.Fault{Groups: f.Groups, Links: f.Links}
				for _, l := range cf.CutLinks(t.Members) {
					if !cur.Cut[l] {
						dirty.cut = true
						cur.Cut[l] = true
						changed = true
					}
				}
			case chaos.Heal:
				if len(cur.Cut) > 0 {
					dirty.cut = true
					cur.Cut = map[[2]election.NodeID]bool{}
					changed = true
				}
			}
		case r.Node > 0:
			id := r.Node
			if !cur.Up[id] {
				if r.Boot != "" && r.Boot == deadBoot[id] && r.Kind != history.KindBoot {
					break // a late line from the process that was killed
				}
				if r.Kind == history.KindStop {
					break
				}
				changed = comeUp(id) || changed
			} else if r.Kind == history.KindBoot || (r.Boot != "" && lastBoot[id] != "" && r.Boot != lastBoot[id]) {
				// A new process without a recorded kill: it restarted.
				if _, had := cur.Views[id]; had {
					dirty.views = true
					delete(cur.Views, id)
					changed = true
				}
				if cur.Paused[id] {
					dirty.paused = true
					delete(cur.Paused, id)
				}
			}
			if r.Boot != "" {
				lastBoot[id] = r.Boot
			}
			switch r.Kind {
			case history.KindStop:
				changed = goDown(id) || changed
			case history.KindView:
				if r.View != nil {
					if old, ok := cur.Views[id]; !ok || old != *r.View {
						dirty.views = true
						cur.Views[id] = *r.View
						changed = true
					}
				}
			}
		}
		if changed {
			// One snapshot per change, even at one instant: a checkpoint
			// taken at the instant of the next fault must see the state
			// just before that fault (see CheckpointState).
			prev := t.snaps[len(t.snaps)-1].state
			t.snaps = append(t.snaps, snapshot{at: r.Time, state: snapshotState(cur, prev, dirty), fault: r.Kind == history.KindFault})
			dirty = stateDirty{}
		}
	}
	t.buildLanes()
	t.Faults = faultSpans(recs, t.Members, t.End)
	return t
}

// stateDirty marks the maps of the replayed state written since the last
// snapshot.
type stateDirty struct{ views, up, paused, cut bool }

// snapshotState copies cur for a new snapshot, sharing with prev (the
// previous snapshot) every map that did not change. Most changes are one
// node's view, so Up, Paused and Cut are usually shared: a replay of a long
// history then copies one map per change instead of four. Only the maps
// dirty marks as written are compared. Snapshots are never modified once
// taken, so sharing is safe.
func snapshotState(cur, prev chaos.State, dirty stateDirty) chaos.State {
	c := chaos.State{Views: prev.Views, Up: prev.Up, Paused: prev.Paused, Cut: prev.Cut}
	if dirty.views && !maps.Equal(cur.Views, prev.Views) {
		c.Views = maps.Clone(cur.Views)
	}
	if dirty.up && !maps.Equal(cur.Up, prev.Up) {
		c.Up = maps.Clone(cur.Up)
	}
	if dirty.paused && !maps.Equal(cur.Paused, prev.Paused) {
		c.Paused = maps.Clone(cur.Paused)
	}
	if dirty.cut && !maps.Equal(cur.Cut, prev.Cut) {
		c.Cut = maps.Clone(cur.Cut)
	}
	return c
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

func (t *Timeline) buildLanes() {
	t.Lanes = make([]Lane, len(t.Members))
	for i, id := range t.Members {
		lane := Lane{Node: id}
		var (
			vOpen  bool
			vSpan  ViewSpan
			sSpan  StateSpan
			sFirst = true
		)
		for _, sn := range t.snaps {
			v, has := sn.state.Views[id]
			if vOpen && (!has || v != vSpan.View) {
				vSpan.End = sn.at
				lane.Views = append(lane.Views, vSpan)
				vOpen = false
			}
			if has && !vOpen {
				vSpan = ViewSpan{Node: id, Start: sn.at, View: v}
				vOpen = true
			}
			st := livenessOf(sn.state, id)
			if sFirst || st != sSpan.State {
				if !sFirst {
					sSpan.End = sn.at
					lane.States = append(lane.States, sSpan)
				}
				sSpan = StateSpan{Node: id, Start: sn.at, State: st}
				sFirst = false
			}
		}
		if vOpen {
			vSpan.End = t.End
			lane.Views = append(lane.Views, vSpan)
		}
		if !sFirst {
			sSpan.End = t.End
			lane.States = append(lane.States, sSpan)
		}
		// Spans that begin and end at one instant carry no time.
		lane.Views = slices.DeleteFunc(lane.Views, func(v ViewSpan) bool { return !v.End.After(v.Start) && !v.Start.Equal(t.End) })
		t.Lanes[i] = lane
	}
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

// StateAt is the cluster state after every record at or before ts.
func (t *Timeline) StateAt(ts time.Time) chaos.State {
	i := sort.Search(len(t.snaps), func(i int) bool { return t.snaps[i].at.After(ts) })
	if i == 0 {
		return t.snaps[0].state
	}
	return t.snaps[i-1].state
}

// CheckpointState is the state a checkpoint at ts judges: StateAt(ts),
// except that a fault applied at exactly ts is left out. A harness takes a
// checkpoint at the end of a quiet period and may apply the next fault at the
// same instant (the simulator's clock does not move between the two); the
// checkpoint is about the period that ended, not the fault that begins.
func (t *Timeline) CheckpointState(ts time.Time) chaos.State {
	i := sort.Search(len(t.snaps), func(i int) bool { return t.snaps[i].at.After(ts) })
	j := sort.Search(i, func(k int) bool { return !t.snaps[k].at.Before(ts) }) // first snapshot at ts
	for k := j; k < i; k++ {
		if t.snaps[k].fault {
			i = k
			break
		}
	}
	if i == 0 {
		return t.snaps[0].state
	}
	return t.snaps[i-1].state
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
	var live []election.NodeID
	for _, m := range members {
		if s.Live(m) {
			live = append(live, m)
		}
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
	if len(s.Cut) == 0 {
		// Nothing cut: one component of every live node.
		for i := range parent {
			parent[i] = 0
		}
	} else {
		for i, a := range live {
			for j := i + 1; j < len(live); j++ {
				if linked(a, live[j]) {
					parent[find(i)] = find(j)
				}
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
	var spans []FaultSpan
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
			if f.Params != nil {
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
		var undo []chaos.Op
		switch chaos.Op(s.Op) {
		case chaos.Kill, chaos.Stop:
			undo = []chaos.Op{chaos.Restart}
		case chaos.Pause:
			undo = []chaos.Op{chaos.Resume, chaos.Restart, chaos.Kill, chaos.Stop}
		case chaos.Partition, chaos.Loss, chaos.Delay:
			undo = []chaos.Op{chaos.Heal}
		default:
			s.Until = s.Applied
			continue
		}
		pending := map[election.NodeID]bool{}
		for _, id := range s.Nodes {
			pending[id] = true
		}
		for _, o := range spans[i+1:] {
			if o.Failed || o.Applied.IsZero() || !slices.Contains(undo, chaos.Op(o.Op)) || o.Applied.Before(s.Applied) {
				continue
			}
			if chaos.Op(o.Op) == chaos.Heal {
				s.Until = o.Applied
				break
			}
			for _, id := range o.Nodes {
				delete(pending, id)
			}
			if len(pending) == 0 {
				s.Until = o.Applied
				break
			}
		}
	}
	return spans
}

func idList(ids []election.NodeID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(int(id))
	}
	return strings.Join(parts, ",")
}

// faultLabel is the short human name of a fault: "kill 5",
// "partition {1,2,3}|{4,5}", "cut 1→2", "heal".
func faultLabel(s FaultSpan) string {
	var b strings.Builder
	b.WriteString(s.Op)
	// A partition is told by its shape; the node it was aimed at (an
	// isolated leader) is one of its groups already, and naming it twice
	// read as "partition 5 {5}|{1,2,3,4}".
	if len(s.Nodes) > 0 && len(s.Groups)+len(s.Links) == 0 {
		b.WriteString(" " + idList(s.Nodes))
	}
	if len(s.Groups) > 0 {
		b.WriteString(" ")
		for i, g := range s.Groups {
			if i > 0 {
				b.WriteString("|")
			}
			b.WriteString("{" + idList(g) + "}")
		}
	}
	for _, l := range s.Links {
		fmt.Fprintf(&b, " %d→%d", l[0], l[1])
	}
	if p := s.Params; p != nil && p.Loss > 0 {
		fmt.Fprintf(&b, " %v", p.Loss)
	}
	if p := s.Params; p != nil && p.Delay > 0 {
		fmt.Fprintf(&b, " %v", time.Duration(p.Delay))
	}
	if s.Failed {
		b.WriteString(" (failed)")
	}
	return b.String()
}
