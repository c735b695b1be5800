package docker

import (
	"fmt"
	"os"
	"strings"

	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// The kernel keeps one neighbour (ARP) table for the whole machine, shared
// by every network namespace on it. A cluster whose nodes all talk to each
// other on one bridge needs an entry in it for every node and every peer:
// n(n−1) entries, 4,032 at 64 nodes. The default hard limit
// (net.ipv4.neigh.default.gc_thresh3) is 1,024: past it the kernel refuses
// new entries ("neighbour table overflow" in dmesg) and drops the SYN that
// wanted one, so at 33 nodes and more the routes of the nodes started last
// never form and the cluster splits into dozens of leaders
// (docs/performance.md, "How many containers"). Between the soft limit
// (gc_thresh2, 512) and the hard one the collector may evict entries idle
// for a few seconds, which costs a fresh ARP exchange, not a lost packet:
// 32 nodes (992 entries) pass on the defaults, so only the hard limit
// admits or refuses.

// defaultNeighbourHard is the kernel's default gc_thresh3.
const defaultNeighbourHard = 1024

// neighbourSlack is room for the rest of the machine: the host and other
// containers. Small, because the harness itself talks to no node over the
// network.
const neighbourSlack = 32

// neighboursNeeded is how many neighbour entries a cluster of n nodes
// holds at once.
func neighboursNeeded(n int) int { return n*(n-1) + neighbourSlack }

// neighbourLimits are the table's soft and hard limits.
type neighbourLimits struct {
	soft, hard int // gc_thresh2, gc_thresh3
}

func (l neighbourLimits) holds(need int) bool { return need <= l.hard }

// raisedFor is l raised to hold need entries with room to spare: soft to
// need, hard to twice that (the ratio of the kernel's defaults), neither
// ever lowered.
func (l neighbourLimits) raisedFor(need int) neighbourLimits {
	return neighbourLimits{soft: max(l.soft, need), hard: max(l.hard, 2*need)}
}

func readNeighbourLimits(dir string) (neighbourLimits, error) {
	soft, err := neigh.Read(dir, neigh.Soft)
	if err != nil {
		return neighbourLimits{}, err
	}
	hard, err := neigh.Read(dir, neigh.Hard)
	if err != nil {
		return neighbourLimits{}, err
	}
	return neighbourLimits{soft: soft, hard: hard}, nil
}

// writeNeighbourLimits sets the limits in dir: the hard one first, so that
// the soft one never stands above it.
func writeNeighbourLimits(dir string, l neighbourLimits) error {
	if err := neigh.Write(dir, neigh.Hard, l.hard); err != nil {
		return err
	}
	return neigh.Write(dir, neigh.Soft, l.soft)
}

// neighbourPlan is what a cluster needs of the table: nothing (the zero
// plan), a raise this process can make, or only a note when the table is
// out of sight.
type neighbourPlan struct {
	raise    bool
	from, to neighbourLimits
	note     string // for an engine whose table is out of sight
}

// planNeighbours plans the table for n nodes, or refuses saying what to
// run. local says whether the engine runs on this process's kernel (when
// it does not, the table cannot be seen from here); mayWrite whether this
// process may raise the limits (writable).
func planNeighbours(n int, dir string, local, mayWrite bool) (neighbourPlan, error) {
	need := neighboursNeeded(n)
	var cur neighbourLimits
	var err error
	if local {
		cur, err = readNeighbourLimits(dir)
	}
	if !local || err != nil {
		// Out of sight: say what to check, only when the mesh
		// outgrows the kernel's default hard limit.
		if need <= defaultNeighbourHard {
			return neighbourPlan{}, nil
		}
		why := "which this process cannot see"
		if err != nil {
			why = fmt.Sprintf("whose limits this process cannot read (%v)", err)
		}
		return neighbourPlan{note: fmt.Sprintf(
			"%d nodes need about %d entries in the neighbour (ARP) table of the engine's kernel, %s; "+
				"if routes fail to form, raise it on the engine's machine: %s", n, need, why, sysctlCommand(neighbourLimits{}.raisedFor(need)))}, nil
	}
	if cur.holds(need) {
		return neighbourPlan{from: cur, to: cur}, nil
	}
	want := cur.raisedFor(need)
	if mayWrite {
		return neighbourPlan{raise: true, from: cur, to: want}, nil
	}
	return neighbourPlan{}, fmt.Errorf("docker: %d nodes need about %d entries in the kernel's neighbour (ARP) table, one for every node and peer, "+
		"but it holds %d before evicting (gc_thresh2) and %d at most (gc_thresh3): past that the kernel drops connection attempts "+
		"(\"neighbour table overflow\" in dmesg) and routes between nodes never form. Raise it as root: %s "+
		"(ringleader does this itself when it runs as root), or run fewer nodes",
		n, need, cur.soft, cur.hard, sysctlCommand(want))
}

func sysctlCommand(l neighbourLimits) string {
	return fmt.Sprintf("sysctl -w net.ipv4.neigh.default.gc_thresh2=%d net.ipv4.neigh.default.gc_thresh3=%d", l.soft, l.hard)
}

// apply carries the plan out: the raise, with a line on w saying what
// changed (it stays changed: a higher limit costs nothing until used, and
// undoing it under another run's feet would break that run).
func (p neighbourPlan) apply(dir string, w func(format string, args ...any)) error {
	if p.note != "" {
		w("docker: NOTE: %s", p.note)
	}
	if !p.raise {
		return nil
	}
	if err := writeNeighbourLimits(dir, p.to); err != nil {
		return fmt.Errorf("docker: raise the kernel's neighbour table (%s): %w", sysctlCommand(p.to), err)
	}
	w("docker: raised the kernel's neighbour (ARP) table so that every node can reach every peer: "+
		"net.ipv4.neigh.default.gc_thresh2 %d→%d, gc_thresh3 %d→%d (it stays raised; docs/performance.md)",
		p.from.soft, p.to.soft, p.from.hard, p.to.hard)
	return nil
}

// kernelRelease is this process's kernel release, to tell whether the
// engine runs on the same kernel (it reports its own in Info).
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
