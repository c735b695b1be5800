package sim

import (
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/routes"
)

// The node runtime turns NATS's view of its routes into failure hints
// (election.EventPeerDown): a killed or stopped container's kernel closes
// its routes at once, so its peers hear within tens of milliseconds, while a
// paused or cut-off peer says nothing until a route's pings go unanswered.
// The simulator models both, calibrated on containers (docs/simulator.md,
// "Failure hints"), so that a scenario fails over alike in both worlds.

// Hints is the simulator's model of the runtime's failure hints.
type Hints struct {
	// Off turns hints off: peers learn of a failure only from their own
	// timers, as on a network that gives no hints.
	Off bool
	// Crash is the delay from a kill or stop to each live peer's hint.
	Crash Dist
	// Silence is the delay from a pause, or from cutting a link, to the
	// hint at the other end: the route's ping timeout. A pause or cut
	// undone sooner gives no hint.
	Silence Dist
}

// DefaultHintsFor is the model calibrated on the compose cluster
// (tools/measure-hints.sh, 2026-11-23, 2-core machine, two rounds; the
// samples are in docs/measurements/): after docker kill the four survivors
// logged their hint 22-52 ms later (medians 36 and 39 ms, 80 samples each;
// docker stop 23-44 ms); after docker pause 633-950 ms later (medians 731
// and 794 ms, 80 each): the route ping interval of 300 ms with two pings
// outstanding, plus the runtime's 20 ms poll. Cutting a node off with the
// docker backend's nftables helper gave the same window at both ends (571-854
// ms counted from the helper's return, its rules landing up to ~250 ms
// before), so Silence serves cuts too; a thawed node's own hints, 19-47 ms
// after docker unpause, fall inside Crash. The ping interval grows with the
// cluster beyond 16 nodes (package routes), and Silence with it.
func DefaultHintsFor(n int) Hints {
	lo, hi := routes.SilenceNoticed(n)
	return Hints{
		Crash:   Uniform(22*time.Millisecond, 52*time.Millisecond),
		Silence: Uniform(lo, hi),
	}
}

// DefaultHints is DefaultHintsFor a cluster of up to 16 nodes.
var DefaultHints = DefaultHintsFor(1)

// hintCause says what a hint event stands for, and so what must still hold
// when it is due.
type hintCause uint8

const (
	// hintCrash: the route closed with the process; it fires whatever
	// happens next, as the closed socket already told the peer.
	hintCrash hintCause = iota + 1
	// hintPause: only if the peer is still in the same pause.
	hintPause
	// hintCut: only if the link is still cut, with no heal since.
	hintCut
)

func (s *Sim) hints() Hints {
	h := s.opts.Hints
	if h.Crash == (Dist{}) && h.Silence == (Dist{}) {
		d := DefaultHintsFor(len(s.nodes))
		h.Crash, h.Silence = d.Crash, d.Silence
	}
	return h
}

// hintPeersOf schedules the hint about gone for every node that is up: the
// route from each of them to gone will be found closed after a delay drawn
// from d.
func (s *Sim) hintPeersOf(gone *node, cause hintCause, gen uint64, d Dist) {
	if s.opts.Hints.Off {
		return
	}
	gi, _ := s.lookupIndex(gone.id)
	for i := range s.nodes {
		n := &s.nodes[i]
		if n == gone || !n.up {
			continue
		}
		if cause == hintCrash && s.state.Cut[[2]election.NodeID{gone.id, n.id}] {
			// The dying kernel's FIN is dropped like everything else
			// from gone to n: n's route only times out, and the cut's
			// own hint (hintDue: due once gone is down) tells n.
			continue
		}
		s.scheduleHint(int32(i), gi, cause, gen, d)
	}
}

func (s *Sim) scheduleHint(to, about int32, cause hintCause, gen uint64, d Dist) {
	s.schedule(event{at: s.now + d.Sample(s.net), kind: evHint, node: to, from: about, boot: s.nodes[to].boot, gen: gen, hint: cause})
}

// hintCrashed: a killed or stopped node's routes closed with it.
func (s *Sim) hintCrashed(n *node) { s.hintPeersOf(n, hintCrash, 0, s.hints().Crash) }

// hintPaused: a paused node stops answering its routes' pings.
func (s *Sim) hintPaused(n *node) {
	x := n.ext()
	x.pauses++
	s.hintPeersOf(n, hintPause, x.pauses, s.hints().Silence)
}

// hintCut: pairs newly cut in both directions close their route at both
// ends (a route needs both for its pings) unless healed first. A one-way
// cut closes nothing: in containers it is a message-level cut at the
// receiver (docs/chaos.md), the routes stay up and no end hears of it.
func (s *Sim) hintCut(pairs [][2]election.NodeID) {
	if s.opts.Hints.Off {
		return
	}
	d := s.hints().Silence
	for _, p := range pairs {
		a, okA := s.lookupIndex(p[0])
		b, okB := s.lookupIndex(p[1])
		if !okA || !okB {
			continue
		}
		if !s.nodes[a].up || !s.nodes[b].up {
			continue // no route to cut: the dead end's closed with it
		}
		s.scheduleHint(a, b, hintCut, s.heals, d)
		s.scheduleHint(b, a, hintCut, s.heals, d)
	}
}

// newlyCutPairs lists the unordered pairs of links that the world model
// has cut in both directions and the physics (s.cuts, the cuts before
// this fault) had not, in the order of links (hints draw from the
// network's random stream in that order).
func (s *Sim) newlyCutPairs(links [][2]election.NodeID) [][2]election.NodeID {
	var out [][2]election.NodeID
	// A fault cuts a handful of links, and scanning out then costs less
	// than the set it stands for; past a few dozen, a set.
	seen := linkSet{}
	if len(links) > 32 {
		seen = newLinkMap(nil)
	}
	for _, l := range links {
		p := l
		if p[0] > p[1] {
			p[0], p[1] = p[1], p[0]
		}
		rev := [2]election.NodeID{p[1], p[0]}
		if (s.cuts[p] && s.cuts[rev]) || !s.state.Cut[p] || !s.state.Cut[rev] || seen.has(p) {
			continue
		}
		seen.add(p)
		out = append(out, p)
	}
	return out
}

// linkSet is a set of links: a list to scan, or a map once made by
// newLinkMap.
type linkSet struct {
	list [][2]election.NodeID
	m    map[[2]election.NodeID]bool
}

func newLinkMap(links [][2]election.NodeID) linkSet {
	m := make(map[[2]election.NodeID]bool, len(links))
	for _, l := range links {
		m[l] = true
	}
	return linkSet{m: m}
}

func (ls *linkSet) has(l [2]election.NodeID) bool {
	if ls.m != nil {
		return ls.m[l]
	}
	return slices.Contains(ls.list, l)
}

func (ls *linkSet) add(l [2]election.NodeID) {
	if ls.m != nil {
		ls.m[l] = true
		return
	}
	ls.list = append(ls.list, l)
}

// hintDue reports whether a hint event still stands for something true.
func (s *Sim) hintDue(e event) bool {
	peer := &s.nodes[e.from]
	switch e.hint {
	case hintPause:
		return peer.paused && peer.x != nil && peer.x.pauses == e.gen
	case hintCut:
		if !peer.up {
			// It died behind the cut: its route can only time out,
			// heal or no heal.
			return true
		}
		a, b := s.nodes[e.node].id, peer.id
		return s.heals == e.gen && s.state.Cut[[2]election.NodeID{a, b}] && s.state.Cut[[2]election.NodeID{b, a}]
	}
	return true
}

// hintDelivered notes, for a pause hint, that the receiver's server has
// closed its route to the paused node: both ends of a route ping, and the
// end that still runs gives up and closes the socket.
func (s *Sim) hintDelivered(e event) {
	if e.hint == hintPause {
		x := s.nodes[e.from].ext()
		x.routesLost = append(x.routesLost, e.node)
	}
}

// hintThawed: a node thawing after its peers closed their routes to it
// reads each socket's end-of-file as soon as its server runs again, and so
// hears of every such peer at once; in containers 23-39 ms after docker
// unpause, inside the Crash range, so Crash is the delay. A pause shorter
// than the ping timeout closed nothing and gives nothing.
func (s *Sim) hintThawed(n *node) {
	var lost []int32
	if n.x != nil {
		lost, n.x.routesLost = n.x.routesLost, nil
	}
	if s.opts.Hints.Off {
		return
	}
	to, _ := s.lookupIndex(n.id)
	for _, p := range lost {
		s.scheduleHint(to, p, hintCrash, 0, s.hints().Crash)
	}
}
