package rig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// fakeNeighbourDir is a directory shaped like /proc/sys/net/ipv4/neigh/default.
func fakeNeighbourDir(t *testing.T, min, soft, hard int) string {
	t.Helper()
	dir := t.TempDir()
	for th, v := range map[neigh.Threshold]int{neigh.Min: min, neigh.Soft: soft, neigh.Hard: hard} {
		if err := neigh.Write(dir, th, v); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// limitsIn are the limits in dir, lowest first.
func limitsIn(t *testing.T, dir string) [3]int {
	t.Helper()
	l, err := neigh.ReadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	return [3]int{l[neigh.Min], l[neigh.Soft], l[neigh.Hard]}
}

func TestDownPutsBackWhatTheOverlayDriverRaised(t *testing.T) {
	dir := fakeNeighbourDir(t, 128, 512, 1024)
	before, _ := neigh.ReadAll(dir)
	// The swarm's ingress comes up: the engine raises all three.
	for th, v := range overlayRaise {
		if err := neigh.Write(dir, th, v); err != nil {
			t.Fatal(err)
		}
	}
	var said []string
	if err := restoreNeighbours(dir, before, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	if got := limitsIn(t, dir); got != [3]int{128, 512, 1024} {
		t.Fatalf("after down: %v, want 128 512 1024 as before", got)
	}
	if len(said) != 3 || !strings.Contains(said[0], "gc_thresh1 8192→128") || !strings.Contains(said[2], "gc_thresh3 65536→1024") {
		t.Fatalf("down said %q; want a line per limit, lowest first", said)
	}
}

func TestDownLeavesALimitSomethingElseSet(t *testing.T) {
	dir := fakeNeighbourDir(t, 128, 512, 1024)
	before, _ := neigh.ReadAll(dir)
	// The overlay driver raised the lowest; then a 64-node run of the
	// docker backend raised the other two to what its mesh needs.
	neigh.Write(dir, neigh.Min, overlayRaise[neigh.Min])
	neigh.Write(dir, neigh.Hard, 8128)
	neigh.Write(dir, neigh.Soft, 4064)
	var said []string
	if err := restoreNeighbours(dir, before, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	if got := limitsIn(t, dir); got != [3]int{128, 4064, 8128} {
		t.Fatalf("after down: %v, want 128 4064 8128: the backend's raise kept", got)
	}
	if len(said) != 3 || !strings.Contains(said[1], "gc_thresh2 left at 4064") {
		t.Fatalf("down said %q; want the kept limits named", said)
	}
}

func TestDownWithUnchangedLimitsWritesNothing(t *testing.T) {
	dir := fakeNeighbourDir(t, 128, 512, 1024)
	before, _ := neigh.ReadAll(dir)
	var said []string
	if err := restoreNeighbours(dir, before, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	if got := limitsIn(t, dir); got != [3]int{128, 512, 1024} || len(said) != 0 {
		t.Fatalf("after down: %v and %q; want nothing changed or said", got, said)
	}
}
