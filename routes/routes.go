// Package routes holds the timing of the links between nodes in containers:
// the NATS routes between their embedded servers. It is defined once here
// because two worlds depend on it: the node runtime configures its server
// with it, and the simulator's failure hints model what it makes happen (a
// peer that goes silent is noticed when its route's pings go unanswered).
package routes

import "time"

// Route pings. A route that no longer answers is closed after MaxPingsOut
// unanswered pings, so a silent peer (paused, or cut off) is noticed
// between MaxPingsOut and MaxPingsOut+1 intervals after it went silent. The
// NATS default (two minutes, two out) notices it after about five minutes.
const (
	// BasePingInterval is the interval for clusters of up to
	// PingPeersPerBase+1 nodes (measured: under a second to notice).
	BasePingInterval = 300 * time.Millisecond
	// PingPeersPerBase is how many peers one server pings per
	// BasePingInterval at most: beyond it the interval grows with the
	// cluster, so that a server's ping load stays the same whatever the
	// size (64 nodes at 300 ms would send 13,000 pings a second between
	// them on a 2-core machine, as much as their elections).
	PingPeersPerBase = 15
	// MaxPingsOut is how many unanswered pings close a route.
	MaxPingsOut = 2
)

// PingInterval is the route ping interval in a cluster of n nodes.
func PingInterval(n int) time.Duration {
	peers := n - 1
	if peers <= PingPeersPerBase {
		return BasePingInterval
	}
	d := BasePingInterval * time.Duration(peers) / PingPeersPerBase
	return d.Round(10 * time.Millisecond)
}

// SilenceNoticed is the window, after a peer goes silent, in which the
// other end closes its route: between MaxPingsOut and MaxPingsOut+1 ping
// intervals, plus the time a server takes to see its ping unanswered and
// the node to poll its routes (Poll). The low and high slack are what the
// compose cluster showed on top of whole intervals (sim.DefaultHints).
func SilenceNoticed(n int) (lo, hi time.Duration) {
	p := PingInterval(n)
	return MaxPingsOut*p + 30*time.Millisecond, (MaxPingsOut+1)*p + 50*time.Millisecond
}

// Poll is how often a node looks at its server's routes for peers whose
// route closed or came back.
const Poll = 20 * time.Millisecond

// Redial is how long a server waits before dialling a lost route again,
// and between attempts while the peer is unreachable. NATS waits a second
// each time (DEFAULT_ROUTE_RECONNECT and DEFAULT_ROUTE_CONNECT), which made
// a healed or resumed peer unheard for 0.9–1.4 s; 100 ms puts the return
// within a few hundred milliseconds. A dial across a partition fails at
// once (the docker backend refuses connection attempts across a cut, see
// chaos/netfilter), so the attempts cost a refused connect each, not a
// blocked dial.
const Redial = 100 * time.Millisecond
