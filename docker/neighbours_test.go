package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNeighbourDir is a directory shaped like /proc/sys/net/ipv4/neigh/default
// with the given limits.
func fakeNeighbourDir(t *testing.T, soft, hard int) string {
	t.Helper()
	dir := t.TempDir()
	for f, v := range map[string]int{"gc_thresh2": soft, "gc_thresh3": hard} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(fmt.Sprintf("%d\n", v)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNeighbourTableOfTheKernelDefaultHoldsThirtyTwoNodesNotFortyEight(t *testing.T) {
	// The kernel's defaults: 512 soft, 1024 hard. 32 nodes want 992
	// entries and slack; 48 want 2256.
	dir := fakeNeighbourDir(t, 512, 1024)
	for _, n := range []int{5, 32} {
		if p, err := planNeighbours(n, dir, true, false); err != nil || p.raise {
			t.Fatalf("%d nodes: plan %+v, %v; want nothing to do", n, p, err)
		}
	}
	_, err := planNeighbours(48, dir, true, false)
	if err == nil {
		t.Fatal("48 nodes on a default table this process may not raise: admitted")
	}
	for _, want := range []string{"48 nodes", "gc_thresh3", "sysctl -w net.ipv4.neigh.default.gc_thresh2=", "neighbour table overflow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
}

func TestNeighbourTableIsRaisedToHoldTheMeshAndNeverLowered(t *testing.T) {
	// A soft limit above the default stays where it is; the hard one
	// is raised.
	dir := fakeNeighbourDir(t, 5000, 1024)
	p, err := planNeighbours(64, dir, true, true)
	if err != nil || !p.raise {
		t.Fatalf("64 nodes, may write: plan %+v, %v; want a raise", p, err)
	}
	var said []string
	if err := p.apply(dir, func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	got, err := readNeighbourLimits(dir)
	if err != nil {
		t.Fatal(err)
	}
	if need := neighboursNeeded(64); got.soft != 5000 || got.hard != 2*need {
		t.Fatalf("after the raise: soft %d, hard %d; want soft left at 5000 and hard %d", got.soft, got.hard, 2*need)
	}
	if len(said) != 1 || !strings.Contains(said[0], "gc_thresh3 1024→8128") {
		t.Fatalf("the raise was announced as %q", said)
	}
	// Now it holds: nothing more to do.
	if p, err := planNeighbours(64, dir, true, true); err != nil || p.raise {
		t.Fatalf("second plan %+v, %v; want nothing to do", p, err)
	}
}

func TestNeighbourTableOutOfSightIsANoteNotARefusal(t *testing.T) {
	p, err := planNeighbours(64, "/nonexistent", false, false)
	if err != nil || p.raise || !strings.Contains(p.note, "cannot see") {
		t.Fatalf("remote engine, 64 nodes: plan %+v, %v; want a note", p, err)
	}
	if p, _ := planNeighbours(16, "/nonexistent", false, false); p.note != "" {
		t.Fatalf("remote engine, 16 nodes: note %q; want none (fits the default)", p.note)
	}
	// A local kernel whose limits cannot be read (a /proc without them)
	// refuses nothing either: a note past the default, silence below.
	if p, err := planNeighbours(64, "/nonexistent", true, true); err != nil || p.raise || !strings.Contains(p.note, "cannot read") {
		t.Fatalf("unreadable limits, 64 nodes: plan %+v, %v; want a note", p, err)
	}
	if p, err := planNeighbours(5, "/nonexistent", true, true); err != nil || p.raise || p.note != "" {
		t.Fatalf("unreadable limits, 5 nodes: plan %+v, %v; want nothing", p, err)
	}
}

func TestNeighbourLimitsThatAreNotNumbersAreNamed(t *testing.T) {
	dir := fakeNeighbourDir(t, 512, 1024)
	os.WriteFile(filepath.Join(dir, "gc_thresh3"), []byte("lots\n"), 0o644)
	p, err := planNeighbours(64, dir, true, true)
	if err != nil || p.raise || !strings.Contains(p.note, "gc_thresh3") {
		t.Fatalf("garbled limit: plan %+v, %v; want a note naming gc_thresh3", p, err)
	}
}
