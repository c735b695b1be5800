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
// the node to poll its routes (PollInterval). The low and high slack are what the
// compose cluster showed on top of whole intervals (sim.DefaultHints).
func SilenceNoticed(n int) (lo, hi time.Duration) {
	p := PingInterval(n)
	return MaxPingsOut*p + 30*time.Millisecond, (MaxPingsOut+1)*p + 50*time.Millisecond
}

// BasePoll is how often a node of a cluster of up to PingPeersPerBase+1
// nodes looks at its server's routes for peers whose route closed or came
// back. A killed peer's kernel closes its routes at once, so this poll is
// what a kill's hint waits for: half of it on average. At 20 ms it was a
// quarter of a five-node kill failover (docs/performance.md); a poll only
// counts the routes, a few microseconds.
const BasePoll = 5 * time.Millisecond

// PollInterval is the route poll in a cluster of n nodes: BasePoll, growing
// past PingPeersPerBase peers by the rule of PingInterval, so that the
// polls the whole cluster makes per second stay those of 16 nodes (64 nodes
// poll every 21 ms, 128 every 42 ms).
func PollInterval(n int) time.Duration {
	peers := n - 1
	if peers <= PingPeersPerBase {
		return BasePoll
	}
	return (BasePoll * time.Duration(peers) / PingPeersPerBase).Round(time.Millisecond)
}

// Redial is how long a server waits before dialling a lost route again,
// and between attempts while the peer is unreachable. NATS waits a second
// each time (DEFAULT_ROUTE_RECONNECT and DEFAULT_ROUTE_CONNECT), which made
// a healed or resumed peer unheard for 0.9–1.4 s; 100 ms puts the return
// within a few hundred milliseconds. A dial across a partition fails at
// once (the docker backend refuses connection attempts across a cut, see
// docker/netfilter), so the attempts cost a refused connect each, not a
// blocked dial.
const Redial = 100 * time.Millisecond
