// Package neigh reads and sets the limits of the kernel's IPv4 neighbour
// (ARP) table. There is one table for the whole machine, shared by every
// network namespace on it, so its limits are a machine-wide setting: the
// docker backend raises two of them for a large mesh (docker/neighbours.go),
// and Docker's own overlay driver raises all three the first time an
// engine sets up an overlay network, which the rig then puts back
// (internal/rig).
package neigh

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Dir is where the kernel shows the table's default limits.
const Dir = "/proc/sys/net/ipv4/neigh/default"

// Threshold names one limit by its file in Dir.
type Threshold string

// The table's three garbage-collection thresholds, lowest first.
const (
	// Min: with fewer entries than this the collector leaves the table
	// alone (the kernel's default is 128).
	Min Threshold = "gc_thresh1"
	// Soft: past it, entries idle for a few seconds may be evicted
	// (512).
	Soft Threshold = "gc_thresh2"
	// Hard: the table never holds more; a new entry past it is refused
	// ("neighbour table overflow") and the packet that wanted it dropped
	// (1,024).
	Hard Threshold = "gc_thresh3"
)

// All are the thresholds, lowest first.
var All = [...]Threshold{Min, Soft, Hard}

// Read is threshold th in dir.
func Read(dir string, th Threshold) (int, error) {
	path := filepath.Join(dir, string(th))
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, strings.TrimSpace(string(b)))
	}
	return v, nil
}

// ReadAll is every threshold in dir, or the first error.
func ReadAll(dir string) (map[Threshold]int, error) {
	out := make(map[Threshold]int, len(All))
	for _, th := range All {
		v, err := Read(dir, th)
		if err != nil {
			return nil, err
		}
		out[th] = v
	}
	return out, nil
}

// Write sets threshold th in dir to v.
func Write(dir string, th Threshold, v int) error {
	return os.WriteFile(filepath.Join(dir, string(th)), []byte(strconv.Itoa(v)+"\n"), 0o644)
}

// Writable says whether this process may set the thresholds ths in dir,
// without setting them: opening for writing is refused on a read-only
// /proc/sys (an unprivileged container) and to anyone but root.
func Writable(dir string, ths ...Threshold) bool {
	for _, th := range ths {
		fh, err := os.OpenFile(filepath.Join(dir, string(th)), os.O_WRONLY, 0)
		if err != nil {
			return false
		}
		fh.Close()
	}
	return true
}
