package rings_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringleader-dev/ringleader/sim"
)

var updateCounts = flag.Bool("update", false, "rewrite testdata/complexity-counts.json from the current code")

// countsCase is one fault-free complexity run and everything it printed
// that a change of the simulator's layout must leave alone.
type countsCase struct {
	Algorithm   string         `json:"algorithm"`
	Arrangement string         `json:"arrangement"`
	N           int            `json:"n"`
	Messages    int            `json:"messages"`
	Announce    int            `json:"announce"`
	Maintenance int            `json:"maintenance"`
	ByType      map[string]int `json:"by_type"`
	Leader      int64          `json:"leader"`
	Agreed      bool           `json:"agreed"`
	Quiet       bool           `json:"quiet"`
	ElectedMs   float64        `json:"elected_after_ms"`
}

// countsSizes are the ring sizes pinned: the small ones where every
// corner of a ring algorithm shows, and a few hundred where the
// simulator's queue and lanes hold many messages at once.
var countsSizes = []int{1, 2, 3, 7, 64, 300}

// TestComplexityCountsAsBefore: `sim complexity` counts, on every ring
// algorithm, arrangement and pinned size, exactly the messages (by type),
// leader and election time it counted when testdata/complexity-counts.json
// was written (go test ./conformance/rings -run ComplexityCountsAsBefore
// -update, from the code before a change of the simulator's layout).
func TestComplexityCountsAsBefore(t *testing.T) {
	var got []countsCase
	for _, name := range ringAlgorithms {
		for _, arr := range []string{"best", "worst", "random"} {
			for _, n := range countsSizes {
				ids, err := sim.Arrange(arr, n, 1)
				if err != nil {
					t.Fatal(err)
				}
				c, err := sim.RunComplexity(sim.Options{Algorithm: name, Seed: 1, FaultFree: true}, ids)
				if err != nil {
					t.Fatalf("%s %s n=%d: %v", name, arr, n, err)
				}
				got = append(got, countsCase{
					Algorithm: name, Arrangement: arr, N: n,
					Messages: c.Messages, Announce: c.AnnounceMessages, Maintenance: c.MaintenanceMessages,
					ByType: c.ByType, Leader: int64(c.Leader), Agreed: c.Agreed, Quiet: c.Quiet, ElectedMs: c.ElectedAfterMillis,
				})
			}
		}
	}
	path := filepath.Join("testdata", "complexity-counts.json")
	if *updateCounts {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []countsCase
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d cases pinned, %d run: regenerate from the code before the change", len(want), len(got))
	}
	for i := range got {
		if g, w := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", want[i]); g != w {
			t.Errorf("counts changed:\n got  %s\n want %s", g, w)
		}
	}
}
