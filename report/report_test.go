package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

func at(ms int) time.Time { return history.SimOrigin.Add(time.Duration(ms) * time.Millisecond) }

func view(ms int, node, leader election.NodeID, epoch uint64, role election.Role) history.Record {
	return history.Record{Time: at(ms), Process: "node", Kind: history.KindView, Node: node, View: &election.View{Leader: leader, Epoch: epoch, Role: role}}
}

func fault(ms int, op string, phase history.FaultPhase, f history.Fault) history.Record {
	f.Op, f.Phase = op, phase
	return history.Record{Time: at(ms), Process: history.NemesisProcess, Kind: history.KindFault, Fault: &f}
}

func msg(ms int, kind history.Kind, node, from, to election.NodeID, typ string) history.Record {
	return history.Record{Time: at(ms), Process: "node", Kind: kind, Node: node, Msg: &election.Message{Type: typ, From: from, To: to}}
}

// splitBrainRun: five nodes on 5; a partition {1,2,3}|{4,5}; 3 leads the
// minority side while 5 still leads; heal; 5 wins again; then 5 is killed
// and 4 takes over.
func splitBrainRun() []history.Record {
	var r []history.Record
	all := []election.NodeID{1, 2, 3, 4, 5}
	for _, n := range all {
		r = append(r, view(0, n, 0, 0, election.Undecided))
	}
	for _, n := range all[:4] {
		r = append(r, msg(10, history.KindSend, n, n, 5, "ELECTION"), msg(11, history.KindRecv, 5, n, 5, "ELECTION"))
		r = append(r, msg(20, history.KindSend, 5, 5, n, "COORDINATOR"), msg(21, history.KindRecv, n, 5, n, "COORDINATOR"))
		r = append(r, view(21, n, 5, 1, election.Follower))
	}
	r = append(r, view(20, 5, 5, 1, election.Leader))
	groups := [][]election.NodeID{{1, 2, 3}, {4, 5}}
	r = append(r, fault(1000, "partition", history.FaultInvoke, history.Fault{Groups: groups}), fault(1010, "partition", history.FaultOK, history.Fault{Groups: groups}))
	r = append(r, msg(1500, history.KindSend, 3, 3, 5, "ELECTION")) // lost: never received
	r = append(r, view(1600, 3, 3, 2, election.Leader), view(1610, 1, 3, 2, election.Follower), view(1610, 2, 3, 2, election.Follower))
	r = append(r, fault(3000, "heal", history.FaultInvoke, history.Fault{}), fault(3001, "heal", history.FaultOK, history.Fault{}))
	for _, n := range all[:3] {
		r = append(r, view(3200, n, 5, 3, election.Follower))
	}
	r = append(r, fault(4000, "kill", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{5}, Target: "leader"}), fault(4005, "kill", history.FaultOK, history.Fault{Nodes: []election.NodeID{5}, Target: "leader"}))
	r = append(r, view(4600, 4, 4, 4, election.Leader))
	for _, n := range all[:3] {
		r = append(r, view(4700, n, 4, 4, election.Follower))
	}
	r = append(r, view(5000, 4, 4, 4, election.Leader)) // unchanged: no new span
	return r
}

func testAlgorithm() election.Algorithm {
	return election.Algorithm{Name: "test", ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"},
		Claims: func(election.QuorumMode) []election.Property { return nil }}
}

func render(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String()
}

func baseReport() Report {
	recs := splitBrainRun()
	members := []election.NodeID{1, 2, 3, 4, 5}
	vs := check.Run(recs, check.Options{Algorithm: testAlgorithm(), Members: members, Checkpoints: []time.Time{at(900), at(2900), at(5000)}},
		check.Agreement, check.BullyMax, check.NoSplitBrain, check.Liveness)
	return Report{Scenario: "bully-partition", Backend: "sim", Algorithm: "test", Members: members, Records: recs, Verdicts: vs,
		ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"},
		Steps:        []Step{{Name: "partition halves", Time: at(1000)}},
		Expectations: []Expectation{{Name: "leader 4 everywhere", Time: at(5000), Pass: true}}}
}

func TestReportHasALaneForEveryNodeAndEveryVerdict(t *testing.T) {
	out := render(t, baseReport())
	for n := 1; n <= 5; n++ {
		if !strings.Contains(out, fmt.Sprintf(">node %d</text>", n)) {
			t.Errorf("no lane label for node %d", n)
		}
	}
	for _, c := range []check.Name{check.Agreement, check.BullyMax, check.NoSplitBrain, check.Liveness} {
		if !strings.Contains(out, fmt.Sprintf(`data-checker="%s"`, c)) {
			t.Errorf("no verdict row for %s", c)
		}
	}
	// The run has split brain: the no-split-brain row fails, the strip is drawn.
	if !regexp.MustCompile(`(?s)data-checker="no-split-brain".*?badge fail`).MatchString(out) {
		t.Error("the no-split-brain verdict is not shown as failing")
	}
	if !strings.Contains(out, "≥2 leaders") || !strings.Contains(out, "nodes 3 and 5 both leaders") {
		t.Error("the split-brain strip with the overlapping pair is missing")
	}
	for _, want := range []string{"partition {1,2,3}|{4,5}", "heal", "kill 5", "believes 5 leads", "paused (view frozen)", "leader 4 everywhere"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestReportQuotesFailoverAndMessageCounts(t *testing.T) {
	out := render(t, baseReport())
	// The partition at 1000 ms (in effect at 1010) left the leader 5 in a
	// minority, and {1,2,3} settled on 3 at 1610 ms: a failover of 600 ms.
	// 5 killed at 4000 ms (it did nothing more; the engine confirmed at
	// 4005); every live node on 4 at 4700 ms: 700 ms.
	if !strings.Contains(out, "600.0 ms") || !strings.Contains(out, "700.0 ms") || !strings.Contains(out, "p50 <b>600.0 ms</b>") {
		t.Error("the failovers of 600 ms (partition) and 700 ms (kill) are not quoted")
	}
	rowRe := regexp.MustCompile(`<tr><td>ELECTION</td><td>election</td><td class="num">(\d+)</td><td class="num">(\d+)</td></tr>`)
	m := rowRe.FindStringSubmatch(out)
	if m == nil || m[1] != "5" || m[2] != "4" {
		t.Fatalf("ELECTION row = %v, want 5 sent and 4 received", m)
	}
	if !strings.Contains(out, "never received") {
		t.Error("the lost ELECTION is not drawn as never received")
	}
}

func TestReportEscapesHostileText(t *testing.T) {
	r := baseReport()
	r.Scenario = `<script>alert("scenario")</script>`
	r.Title = `</title><script>alert(1)</script>`
	r.Notes = []string{`<img src=x onerror=alert(2)>`}
	r.Expectations = append(r.Expectations, Expectation{Name: `<b onmouseover=alert(3)>x</b>`, Time: at(100), Detail: `"><svg onload=alert(4)>`})
	r.Verdicts = append(r.Verdicts, check.Verdict{Checker: `x"><script>alert(5)</script>`, Summary: `<iframe src=javascript:alert(6)>`, Evidence: check.Evidence{Liveness: &check.LivenessEvidence{LastFault: "</pre><script>alert(7)</script>"}}})
	r.Records = append(r.Records,
		fault(200, "kill", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{2}, Target: `<script>alert(8)</script>`}),
		fault(201, "kill", history.FaultFail, history.Fault{Nodes: []election.NodeID{2}, Error: `</title><script>alert(9)</script>`}),
		msg(300, history.KindSend, 1, 1, 2, `<script>alert(10)</script>`))
	out := render(t, r)
	for _, bad := range []string{"<script", "<img", "<iframe", "<b onmouseover", "<svg onload"} {
		if strings.Contains(out, bad) {
			i := strings.Index(out, bad)
			t.Errorf("hostile markup %q got through: …%s…", bad, out[max(i-60, 0):min(i+60, len(out))])
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(") {
		t.Error("hostile text should still be shown, escaped")
	}
}

func TestReportIsSelfContained(t *testing.T) {
	out := render(t, baseReport())
	for _, bad := range []string{"http://", "https://", "<link", "@import", "<script", " src="} {
		if strings.Contains(out, bad) {
			t.Errorf("page references something outside itself: %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`url\(([^)]*)\)`).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("url(%s) is not a reference inside the page", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("href %q leaves the page", m[1])
		}
	}
}

func TestReportIsDeterministic(t *testing.T) {
	a, b := render(t, baseReport()), render(t, baseReport())
	if a != b {
		t.Fatal("two renderings of one run differ")
	}
}

func TestSequenceDiagramLimits(t *testing.T) {
	// Nine nodes: too wide.
	var recs []history.Record
	for n := election.NodeID(1); n <= 9; n++ {
		recs = append(recs, view(0, n, 9, 1, election.Follower), msg(1, history.KindSend, n, n, 1, "HEARTBEAT"))
	}
	out := render(t, Report{Records: recs})
	if !strings.Contains(out, "Sequence diagram omitted: 9 nodes") {
		t.Error("a 9-node run must omit the sequence diagram with a note")
	}
	// 3 nodes, 301 heartbeats and 2 election messages.
	recs = nil
	for i := 0; i < MaxSequenceMessages+1; i++ {
		recs = append(recs, msg(i, history.KindSend, 1, 1, 2, "HEARTBEAT"))
	}
	recs = append(recs, msg(400, history.KindSend, 3, 3, 1, "ELECTION"), msg(401, history.KindSend, 1, 1, 3, "COORDINATOR"))
	out = render(t, Report{Records: recs})
	if !strings.Contains(out, "Sequence diagram omitted: 303 messages") {
		t.Error("unclassified messages beyond the limit must omit the diagram")
	}
	out = render(t, Report{Records: recs, ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"}})
	if !strings.Contains(out, "Only election and announce messages are drawn: 2 of 303") {
		t.Error("with classification the diagram keeps the election traffic")
	}
	if strings.Contains(out, "HEARTBEAT 1 → 2") {
		t.Error("heartbeats must be left out of the reduced diagram")
	}
}

func TestEmptyHistoryStillRenders(t *testing.T) {
	out := render(t, Report{Title: "nothing happened"})
	if !strings.Contains(out, "nothing happened") || !strings.Contains(out, "no messages") {
		t.Error("an empty history must still give a page saying so")
	}
}

func TestLeaderColoursAvoidRed(t *testing.T) {
	var members []election.NodeID
	for n := election.NodeID(1); n <= 64; n++ {
		members = append(members, n)
	}
	pal := newPalette(members)
	for _, m := range members {
		c := pal.colour(m)
		var h int
		if _, err := fmt.Sscanf(c, "hsl(%d,", &h); err == nil && (h < 25 || h > 335) {
			t.Errorf("node %d gets red hue %d, which is kept for kills and split brain", m, h)
		}
		if c == killColour || c == splitColour {
			t.Errorf("node %d gets a fault colour %s", m, c)
		}
	}
}

func TestExpectedFailureIsShownAsTheRunsOutcome(t *testing.T) {
	r := baseReport()
	r.ExpectedFail = []check.Name{check.NoSplitBrain}
	passed := true
	r.Passed = &passed
	out := render(t, r)
	if !regexp.MustCompile(`(?s)data-checker="no-split-brain".*?fail \(expected\)`).MatchString(out) {
		t.Error("a fail the scenario expects is not marked as expected")
	}
	if !strings.Contains(out, "run passed") || strings.Contains(out, "checks failed") {
		t.Error("the headline does not show the run's own verdict")
	}
	passed = false
	if out := render(t, r); !strings.Contains(out, "run failed") {
		t.Error("a failed run is not headlined as failed")
	}
}

// TestReportDrawsTheAnalysisItIsHanded: given the run's analysis, the page
// shows its failovers, elections and counts as they are, without analysing
// the records again, so it cannot disagree with results.json.
func TestReportDrawsTheAnalysisItIsHanded(t *testing.T) {
	r := baseReport()
	an := check.Analyze(r.Records, check.Options{Algorithm: testAlgorithm(), Members: r.Members})
	an.Failovers[0].Label = "failover as results.json has it"
	an.Elections = an.Elections[:1]
	an.Counts.ByType["ELECTION"], an.Counts.ReceivedByType["ELECTION"] = 41, 40
	r.Analysis = an
	out := render(t, r)
	if !strings.Contains(out, "failover as results.json has it") {
		t.Error("the page does not show the failovers it was handed")
	}
	if n := strings.Count(out, `<tr class="election"`); n != 1 {
		t.Errorf("the page lists %d elections, the analysis 1", n)
	}
	if !strings.Contains(out, `<tr><td>ELECTION</td><td>election</td><td class="num">41</td><td class="num">40</td></tr>`) {
		t.Error("the message table is not the analysis's counts")
	}
}
