package logrecord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/history"
)

func viewLine(node int, boot string, seq int, leader int) []byte {
	return fmt.Appendf(nil, `{"boot":%q,"epoch":1,"event":"view","leader":%d,"level":"info","msg":"view changed","node":%d,"role":"follower","seq":%d,"time":"2026-11-23T00:14:35.4Z"}`, boot, leader, node, seq)
}

// TestReadTwiceRecordsOnceAndMarksGaps: a stream read again from an
// earlier point gives no record twice; a seq that skips ahead is one gap
// mark naming the lines that never arrived, before the line's record.
func TestReadTwiceRecordsOnceAndMarksGaps(t *testing.T) {
	n := NewNode(2)
	var recs []history.Record
	take := func(l []byte) Line {
		out := n.Take(l, false)
		if out.Gap != nil {
			recs = append(recs, *out.Gap)
		}
		if out.Record != nil {
			recs = append(recs, *out.Record)
		}
		return out
	}
	take(viewLine(2, "a", 1, 5))
	take(viewLine(2, "a", 2, 5))
	take(viewLine(2, "a", 1, 5)) // the overlap of a re-read
	take(viewLine(2, "a", 2, 5))
	take(viewLine(2, "a", 5, 4)) // 3 and 4 lost
	take(viewLine(2, "b", 1, 4)) // a new boot starts at 1
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s/%d %s", r.Kind, r.Boot, r.Seq, r.Note))
	}
	want := []string{"view a/1 ", "view a/2 ", "mark a/0 log gap: node 2 boot a lines 3..4 never arrived", "view a/5 ", "view b/1 "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n.Gaps != 1 || n.LastBoot() != "b" || n.LastSeq("a") != 5 || len(n.Boots) != 2 {
		t.Errorf("gaps %d, boots %v, last seq of a %d; want 1, [a b], 5", n.Gaps, n.Boots, n.LastSeq("a"))
	}
}

func TestTextAndForeignLines(t *testing.T) {
	n := NewNode(3)
	if out := n.Take([]byte("panic: state file unreadable\r"), true); out.Record != nil || out.Text != "panic: state file unreadable" {
		t.Errorf("stderr text gave %+v", out)
	}
	if !strings.Contains(n.LastText, "panic: state file unreadable") {
		t.Errorf("LastText %q", n.LastText)
	}
	if out := n.Take([]byte(`{"event":"view"`), false); out.Problem == "" || out.Record != nil {
		t.Errorf("a broken JSON line gave %+v, want a problem and no record", out)
	}
	out := n.Take(viewLine(9, "a", 1, 9), false)
	if out.Record == nil || out.Record.Node != 3 || !strings.Contains(out.Problem, "claims node 9") {
		t.Errorf("a line claiming node 9 on node 3's stream gave %+v, want it recorded as node 3 with a problem", out)
	}
	if out := n.Take([]byte(`{"msg":"summary","level":"info"}`), false); out != (Line{}) {
		t.Errorf("a line with no recorded event gave %+v, want nothing", out)
	}
}

func TestLinesSplitsAStreamIntoLines(t *testing.T) {
	var got []string
	w := NewLines(func(l []byte) { got = append(got, string(l)) })
	fmt.Fprint(w, "one\ntw")
	fmt.Fprint(w, "o\nthree")
	w.Flush()
	if strings.Join(got, ",") != "one,two,three" {
		t.Errorf("lines %q", got)
	}
}
