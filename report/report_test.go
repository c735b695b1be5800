package report

import (
	"bytes"
	"fmt"
	"math"
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
	for _, want := range []string{"partition {1,2,3}|{4,5}", "heal", "kill 5", "believes 5 leads", "leader 4 everywhere"} {
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
	if !strings.Contains(out, ">600 ms<") || !strings.Contains(out, ">700 ms<") || !strings.Contains(out, "p50 <b>600 ms</b>") {
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

// TestEveryTimeOnThePageIsMilliseconds: one format for every time a person
// reads — tables, labels, tooltips, summaries — and never Go's own
// ("3.053661538s", "481.41012ms", "+1.75s").
func TestEveryTimeOnThePageIsMilliseconds(t *testing.T) {
	out := render(t, baseReport())
	goDur := regexp.MustCompile(`[0-9](ns|µs|us|ms|s|m)\b`)
	for _, m := range goDur.FindAllStringIndex(out, -1) {
		ctx := out[max(m[0]-40, 0):min(m[1]+10, len(out))]
		if strings.Contains(ctx, "stroke-width") || strings.Contains(ctx, "font-size") || strings.Contains(ctx, "px") {
			continue // CSS and SVG lengths
		}
		t.Errorf("a time not in the page's format: …%s…", ctx)
	}
	for _, want := range []string{"&#43;1 010 ms", "span <b>5 000 ms</b>"} { // html/template writes + as &#43;
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// pausedRun: 5 leads, 5 is paused, 4 runs an election (a candidate
// stretch) and leads while the frozen 5 still believes it does (a stale
// leader), 5 resumes and takes over again.
func pausedRun() []history.Record {
	var r []history.Record
	for n := election.NodeID(1); n <= 5; n++ {
		role := election.Follower
		if n == 5 {
			role = election.Leader
		}
		r = append(r, view(0, n, 5, 1, role))
	}
	r = append(r, fault(1000, "pause", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{5}}), fault(1001, "pause", history.FaultOK, history.Fault{Nodes: []election.NodeID{5}}))
	r = append(r, view(1500, 4, 0, 1, election.Candidate), view(1700, 4, 4, 2, election.Leader))
	for n := election.NodeID(1); n <= 3; n++ {
		r = append(r, view(1700, n, 4, 2, election.Follower))
	}
	r = append(r, fault(2500, "resume", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{5}}), fault(2501, "resume", history.FaultOK, history.Fault{Nodes: []election.NodeID{5}}))
	r = append(r, view(2501, 4, 5, 3, election.Follower)) // 4 hears 5 the moment it thaws
	for n := election.NodeID(1); n <= 3; n++ {
		r = append(r, view(2600, n, 5, 3, election.Follower))
	}
	r = append(r, view(2600, 5, 5, 3, election.Leader), view(3000, 5, 5, 3, election.Leader))
	return r
}

func TestLegendExplainsEveryMarkDrawn(t *testing.T) {
	out := render(t, Report{Records: pausedRun(), Members: []election.NodeID{1, 2, 3, 4, 5}, Algorithm: "test",
		ElectionTypes: []string{"ELECTION"}, AnnounceTypes: []string{"COORDINATOR"},
		Steps:        []Step{{Name: "pause leader", Time: at(1000)}},
		Expectations: []Expectation{{Name: "4 leads", Time: at(1700), Pass: true}, {Name: "5 leads", Time: at(2900), Pass: false}}})
	legendHTML := out[strings.Index(out, `<div class="legend">`):]
	legendHTML = legendHTML[:strings.Index(legendHTML, "</div>")]
	for _, want := range []string{"believes 4 leads", "believes 5 leads", "? candidate", "node believes it is the leader", "paused (view frozen)",
		"stale leader", "pause", "restart / resume / heal", "scenario step", "expectation held", "expectation failed"} {
		if !strings.Contains(legendHTML, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	// Nothing the run does not draw: no kill, no partition, no split brain.
	for _, absent := range []string{"kill / stop", "partition in force", "split brain", "down (killed"} {
		if strings.Contains(legendHTML, absent) {
			t.Errorf("legend lists %q, which this run does not draw", absent)
		}
	}
}

func TestLeaderColoursAreColourBlindSafeAndNeighboursDiffer(t *testing.T) {
	members := []election.NodeID{1, 2, 3, 4, 5}
	pal := newPalette(members)
	okabeIto := map[string]bool{"#0072B2": true, "#E69F00": true, "#009E73": true, "#CC79A7": true, "#56B4E9": true, "#F0E442": true}
	seen := map[string]election.NodeID{}
	for _, m := range members {
		c := pal.colour(m)
		if !okabeIto[c] {
			t.Errorf("node %d: %s is not an Okabe–Ito colour", m, c)
		}
		if o, dup := seen[c]; dup {
			t.Errorf("nodes %d and %d share %s", o, m, c)
		}
		seen[c] = m
	}
	// The highest IDs, the usual leaders, get blue and orange: the pair
	// every kind of colour vision tells apart.
	if pal.colour(5) != "#0072B2" || pal.colour(4) != "#E69F00" {
		t.Errorf("5 and 4 painted %s and %s", pal.colour(5), pal.colour(4))
	}
	// Neighbouring IDs never share a hue family (blue next to sky blue).
	for _, pair := range [][2]string{{"#0072B2", "#56B4E9"}, {"#E69F00", "#F0E442"}} {
		for m := election.NodeID(1); m < 5; m++ {
			a, b := pal.colour(m), pal.colour(m+1)
			if (a == pair[0] && b == pair[1]) || (a == pair[1] && b == pair[0]) {
				t.Errorf("nodes %d and %d get look-alike colours %s and %s", m, m+1, a, b)
			}
		}
	}
}

// longBoot: the cluster starts, nobody views anything for 1.5 s
// (containers booting), 5 is elected, and 2 s later it is killed.
func longBoot() []history.Record {
	var r []history.Record
	for n := election.NodeID(1); n <= 5; n++ {
		r = append(r, view(1500, n, 0, 0, election.Undecided))
	}
	r[0].Time = at(0)
	for n := election.NodeID(1); n <= 5; n++ {
		role := election.Follower
		if n == 5 {
			role = election.Leader
		}
		r = append(r, view(1600, n, 5, 1, role))
	}
	r = append(r, fault(3500, "kill", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{5}}), fault(3501, "kill", history.FaultOK, history.Fault{Nodes: []election.NodeID{5}}))
	for n := election.NodeID(1); n <= 4; n++ {
		role := election.Follower
		if n == 4 {
			role = election.Leader
		}
		r = append(r, view(4000, n, 4, 2, role))
	}
	r = append(r, view(4500, 4, 4, 2, election.Leader))
	return r
}

func TestTimelineOpensWhereTheClusterFirstSettled(t *testing.T) {
	out := render(t, Report{Records: longBoot(), Members: []election.NodeID{1, 2, 3, 4, 5}})
	if !strings.Contains(out, `<details class="whole">`) || !strings.Contains(out, "first settled, 1 600 ms after its start") {
		t.Error("a 1.6 s boot in a 4.5 s run is not folded, with the whole run to scale one click away")
	}
	if !strings.Contains(out, ">boot<") {
		t.Error("the folded boot is not labelled")
	}
	// A quick boot is drawn as it is.
	if out := render(t, baseReport()); strings.Contains(out, `<details class="whole">`) {
		t.Error("a 21 ms boot in a 5 s run should not be folded")
	}
}

func TestFoldedScaleGivesTheRunTheWidth(t *testing.T) {
	s := scale{start: at(0), end: at(4500), fold: at(1600), left: 70, width: 1114, foldW: 64}
	if x := s.x(at(1600)); x != 70+64+foldGap {
		t.Errorf("the settled instant is at %v, want right after the fold", x)
	}
	if x := s.x(at(800)); x != 70+32 {
		t.Errorf("mid-boot at %v, want the middle of the fold", x)
	}
	if x := s.x(at(4500)); x != 70+1114 {
		t.Errorf("the end at %v, want the right edge", x)
	}
}

// TestMarkersAndLabelsNeverTouch: steps one millisecond apart, faults on
// top of each other — the markers, fault labels, tick labels and arrow
// labels are laid out so that none covers another.
func TestMarkersAndLabelsNeverTouch(t *testing.T) {
	r := baseReport()
	r.Steps = nil
	for i := range 20 {
		r.Steps = append(r.Steps, Step{Name: fmt.Sprintf("step %d with a long name that would once have been cut", i+1), Time: at(1000 + i)})
	}
	r.Records = append(r.Records,
		fault(1002, "kill", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{1}}), fault(1003, "kill", history.FaultOK, history.Fault{Nodes: []election.NodeID{1}}),
		fault(1004, "restart", history.FaultInvoke, history.Fault{Nodes: []election.NodeID{1}}), fault(1005, "restart", history.FaultOK, history.Fault{Nodes: []election.NodeID{1}}))
	an := check.Analyze(r.Records, check.Options{Algorithm: testAlgorithm(), Members: r.Members})
	_, markers := stepRows(an.Timeline, r)
	p := timelinePlot(an.Timeline, an.SplitBrain, newPalette(r.Members), timelineOpts{markers: markers})
	for i, a := range p.Dots {
		for _, b := range p.Dots[i+1:] {
			if a.R > 5 && b.R > 5 && math.Hypot(a.X-b.X, a.Y-b.Y) < a.R+b.R {
				t.Errorf("markers at (%.0f,%.0f) and (%.0f,%.0f) overlap", a.X, a.Y, b.X, b.Y)
			}
		}
	}
	var labels []svgText
	for _, tx := range p.Texts {
		if tx.Bold && tx.Size == 11 || tx.Halo { // fault labels, tick labels
			labels = append(labels, tx)
		}
	}
	assertApart(t, "timeline", labels)

	seq, _ := sequencePlot(an.Timeline, an.Records, newPalette(r.Members), testAlgorithm())
	var arrows []svgText
	for _, tx := range seq.Texts {
		if tx.Halo {
			arrows = append(arrows, tx)
		}
	}
	if len(arrows) == 0 {
		t.Fatal("no arrow labels drawn")
	}
	assertApart(t, "sequence", seq.Texts)
}

func assertApart(t *testing.T, where string, ts []svgText) {
	t.Helper()
	for i, a := range ts {
		for _, b := range ts[i+1:] {
			if a.Size < 9 || b.Size < 9 || a.Text == "" || b.Text == "" {
				continue
			}
			ba, bb := textBox(a), textBox(b)
			// Boxes are generous by 3px a side; touching within that is fine.
			ba.x1, ba.x2, bb.x1, bb.x2 = ba.x1+3, ba.x2-3, bb.x1+3, bb.x2-3
			if ba.overlaps(bb) && !(a.Text == "×" || b.Text == "×") && !strings.HasPrefix(a.Text, "node ") && !strings.HasPrefix(b.Text, "node ") {
				t.Errorf("%s: labels %q at (%.0f,%.0f) and %q at (%.0f,%.0f) overlap", where, a.Text, a.X, a.Y, b.Text, b.X, b.Y)
			}
		}
	}
}

func TestSequenceTimeLabelsAreNotRepeated(t *testing.T) {
	r := baseReport()
	an := check.Analyze(r.Records, check.Options{Algorithm: testAlgorithm(), Members: r.Members})
	seq, _ := sequencePlot(an.Timeline, an.Records, newPalette(r.Members), testAlgorithm())
	seen := map[string]bool{}
	for _, tx := range seq.Texts {
		if strings.HasPrefix(tx.Text, "+") {
			if seen[tx.Text] {
				t.Errorf("time label %q repeated", tx.Text)
			}
			seen[tx.Text] = true
		}
	}
	if len(seen) == 0 {
		t.Fatal("no time labels")
	}
}

func TestPageHasAPrintStylesheetAndNoScrollBoxes(t *testing.T) {
	out := render(t, baseReport())
	if !strings.Contains(out, "@media print") || !strings.Contains(out, "print-color-adjust: exact") {
		t.Error("no print stylesheet that keeps the lanes' colours")
	}
	if strings.Contains(out, "overflow: auto") && strings.Contains(out, ".seq {") && strings.Contains(out, "max-height: 1000px") {
		t.Error("the sequence diagram is in a scroll box of its own")
	}
}
