package rig

import (
	"fmt"

	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// overlayRaise is what Docker's overlay driver sets the kernel's
// neighbour table limits to, when they are lower, the first time an
// engine process sets up an overlay network: the swarm's ingress, at
// the rig's swarm init (libnetwork's drivers/overlay/ostweaks_linux.go,
// the same in Docker 20.10 and since). The table is the machine's, so
// the raise outlives the swarm and the rig unless the rig puts it back.
var overlayRaise = map[neigh.Threshold]int{neigh.Min: 8192, neigh.Soft: 49152, neigh.Hard: 65536}

// restoreNeighbours puts the limits in dir back to before, each one that
// the overlay driver raised: a limit that now holds another value was set
// by something else since (the docker backend raises two for a large
// mesh), and lowering it could break what set it, so it stays, with a
// line on logf. Lowest first, so that no limit ever stands above the
// next while they come down.
func restoreNeighbours(dir string, before map[neigh.Threshold]int, logf func(string, ...any)) error {
	for _, th := range neigh.All {
		was, ok := before[th]
		if !ok {
			continue
		}
		now, err := neigh.Read(dir, th)
		if err != nil {
			return err
		}
		switch {
		case now == was:
		case now == overlayRaise[th] && was < now:
			if err := neigh.Write(dir, th, was); err != nil {
				return fmt.Errorf("put net.ipv4.neigh.default.%s back to %d: %w", th, was, err)
			}
			logf("rig: net.ipv4.neigh.default.%s %d→%d (the engine's overlay driver had raised it)", th, now, was)
		default:
			logf("rig: net.ipv4.neigh.default.%s left at %d (it was %d before the rig; something other than the overlay driver set it since)", th, now, was)
		}
	}
	return nil
}
