// Package report renders one run as a single self-contained HTML page: the
// checker verdicts, a timeline with one lane per node coloured by the leader
// that node believes in, the faults shaded across the lanes, message counts,
// failover figures and, for small runs, a message-sequence diagram.
//
// Everything the page needs is inline (CSS and SVG); it references no file,
// font or script, so it can be mailed, attached to a CI run or opened from a
// store directory years later. Tooltips use SVG <title> elements, which every
// browser shows without JavaScript. All text goes through html/template, so
// node output, scenario names and error strings cannot inject markup.
//
// How to read the page is described in docs/reports.md.
package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/millis"
)

// Step is a scenario step as it ran: a named instant on the time axis,
// drawn as a numbered marker keyed to the page's table of steps.
type Step struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	// Number is the step's number in the scenario; 0: its position in
	// Report.Steps.
	Number int `json:"number,omitempty"`
}

// Expectation is one `expect` of a scenario, checked at Time.
type Expectation struct {
	Name   string    `json:"name"`
	Time   time.Time `json:"time"`
	Pass   bool      `json:"pass"`
	Detail string    `json:"detail,omitempty"`
	// Step is the Number of the step that made this expectation (or a
	// stable wait): the two share one marker and one row, at the instant
	// the expectation held or failed. 0: an expectation of its own.
	Step int `json:"step,omitempty"`
}

// Report is everything one page shows. Only Records is needed; the rest is
// shown when present.
type Report struct {
	Title     string
	Scenario  string
	Backend   string
	Algorithm string
	Quorum    election.QuorumMode
	// Options are the algorithm's options the run used (none: not shown).
	Options election.Options
	// Members in ring order; empty: the IDs the history mentions.
	Members []election.NodeID
	// Date of the run; zero: the first record's time.
	Date time.Time
	// Seed of a simulated run (shown when non-zero).
	Seed int64

	Records  []history.Record
	Verdicts []check.Verdict
	// ExpectedFail names checkers the scenario expects to fail (a run
	// that must show split brain): their fail is drawn as the expected
	// outcome, not as a fault of the run.
	ExpectedFail []check.Name
	// Passed, when set, is the run's own verdict (every expectation held
	// and every checker gave the verdict expected of it); the page's
	// headline shows it instead of "all checks pass".
	Passed       *bool
	Steps        []Step
	Expectations []Expectation
	// Analysis of Records (its timeline, failovers, elections, overlaps),
	// as the harness computed it for results.json; nil: the page
	// analyses Records itself. Either way the history is replayed once.
	Analysis *check.Analysis
	// ElectionTypes and AnnounceTypes classify message types in the tables
	// and the sequence diagram; nil: taken from the registered algorithm
	// named Algorithm, when there is one.
	ElectionTypes []string
	AnnounceTypes []string
	// Notes are free lines shown under the title.
	Notes []string
}

// Limits of the message-sequence diagram: beyond them it is unreadable.
const (
	MaxSequenceNodes    = 8
	MaxSequenceMessages = 300
)

// maxEvidence bounds each verdict's evidence dump; a long run's evidence can
// be megabytes, the page should stay light.
const maxEvidence = 40_000

// Write renders r as one HTML page.
func Write(w io.Writer, r Report) error {
	p, err := build(r)
	if err != nil {
		return err
	}
	if err := page.Execute(w, p); err != nil {
		return fmt.Errorf("report: render: %w", err)
	}
	return nil
}

// pageData is what the template sees.
type pageData struct {
	Title     string
	Scenario  string
	Backend   string
	Algorithm string
	Quorum    string
	Options   string
	N         int
	Members   string
	Date      string
	Seed      int64
	Span      string
	Notes     []string

	Verdicts      []verdictRow
	AllPass       bool
	RunVerdict    string // "passed", "failed", or "" when the caller gave none
	Legend        []legendItem
	Timeline      *svgPlot
	WholeRun      *svgPlot // the timeline to scale, boot included, when Timeline folds it
	Boot          string   // how long the folded boot took
	Steps         []stepRow
	Counts        []countRow
	CountTotal    countRow
	Elections     []electionRow
	Failovers     []failoverRow
	FailoverStats *check.FailoverStats
	Sequence      *svgPlot
	SequenceNote  string
	Records       int
}

type verdictRow struct {
	Checker  string
	Pass     bool
	Expected bool // a fail the scenario expects
	Summary  string
	Evidence string
}

type legendItem struct {
	Label  string
	Fill   string
	Stroke string
	Kind   string // "swatch", "hatch", "paused", "band", "line", "split"
}

// stepRow is a step (or an expectation) as the table under the timeline
// lists it, with the number its marker carries.
type stepRow struct {
	Number, Offset, Name, Detail string
	Expect, Pass                 bool
}

type countRow struct {
	Type, Class    string
	Sent, Received int
}

type electionRow struct {
	Offset, Agreed, Took, Leaders string
	Election, Announce            int
	Types                         string
	Unfinished                    bool
}

type failoverRow struct {
	Label, From, NewLeader, Duration, Note string
	Leader                                 election.NodeID
	Recovered                              bool
}

func build(r Report) (*pageData, error) {
	alg := algorithmFor(r)
	an := r.Analysis
	if an == nil {
		an = check.Analyze(r.Records, check.Options{Algorithm: alg, Quorum: r.Quorum, Members: r.Members})
	}
	recs, tl := an.Records, an.Timeline

	p := &pageData{
		Title:     r.Title,
		Scenario:  r.Scenario,
		Backend:   r.Backend,
		Algorithm: r.Algorithm,
		Quorum:    r.Quorum.Text(),
		Options:   r.Options.String(),
		N:         len(tl.Members),
		Members:   idsText(tl.Members),
		Seed:      r.Seed,
		Notes:     r.Notes,
		Records:   len(recs),
		AllPass:   true,
	}
	if p.Title == "" {
		p.Title = "ringleader run"
		if r.Scenario != "" {
			p.Title = r.Scenario
		}
	}
	date := r.Date
	if date.IsZero() {
		date = tl.Start
	}
	if !date.IsZero() {
		p.Date = date.UTC().Format("2006-01-02 15:04:05 MST")
	}
	p.Span = millis.Of(tl.End.Sub(tl.Start))

	for _, v := range r.Verdicts {
		row := verdictRow{Checker: string(v.Checker), Pass: v.Pass, Summary: v.Summary, Expected: !v.Pass && slices.Contains(r.ExpectedFail, v.Checker)}
		if !v.Evidence.IsZero() {
			b, err := json.MarshalIndent(v.Evidence, "", "  ")
			if err != nil {
				row.Evidence = fmt.Sprintf("(evidence not encodable: %v)", err)
			} else {
				row.Evidence = string(b)
				if len(row.Evidence) > maxEvidence {
					row.Evidence = row.Evidence[:maxEvidence] + fmt.Sprintf("\n… %d more bytes not shown", len(b)-maxEvidence)
				}
			}
		}
		p.AllPass = p.AllPass && (v.Pass || row.Expected)
		p.Verdicts = append(p.Verdicts, row)
	}
	if r.Passed != nil {
		p.RunVerdict = "failed"
		if *r.Passed {
			p.RunVerdict = "passed"
		}
	}

	pal := newPalette(tl.Members)
	cps := checkpointsOf(r.Verdicts)
	var markers []marker
	p.Steps, markers = stepRows(tl, r)
	fold := bootEnd(tl, an)
	p.Legend = legend(tl, an.SplitBrain, pal, r, cps, !fold.IsZero())
	p.Timeline = timelinePlot(tl, an.SplitBrain, pal, timelineOpts{fold: fold, checkpoints: cps, markers: markers})
	if !fold.IsZero() {
		p.Boot = millis.Of(fold.Sub(tl.Start))
		p.WholeRun = timelinePlot(tl, an.SplitBrain, pal, timelineOpts{checkpoints: cps, markers: markers})
	}

	p.Counts, p.CountTotal = countRows(an.Counts, alg)
	for _, e := range an.Elections {
		row := electionRow{Offset: offset(tl, e.Start), Leaders: idsText(e.Leaders), Election: e.Election, Announce: e.Announce, Types: typesText(e.ByType), Unfinished: e.Unfinished}
		if !e.Agreed.IsZero() {
			row.Agreed = offset(tl, e.Agreed)
			row.Took = millis.Of(e.Agreed.Sub(e.Start))
		}
		p.Elections = append(p.Elections, row)
	}

	fos := an.Failovers
	for _, f := range fos {
		row := failoverRow{Label: f.Label, Leader: f.Leader, From: offset(tl, f.From), NewLeader: idsText(f.NewLeader), Recovered: f.Recovered, Note: f.Note}
		if f.Recovered {
			row.Duration = millis.Float(f.Millis)
		} else {
			row.Duration = "not recovered" // as the run table says it
		}
		p.Failovers = append(p.Failovers, row)
	}
	if len(fos) > 0 {
		st := check.Stats(fos)
		p.FailoverStats = &st
	}

	p.Sequence, p.SequenceNote = sequencePlot(tl, recs, pal, alg)
	return p, nil
}

// algorithmFor classifies message types from the report's own lists or the
// registry.
func algorithmFor(r Report) election.Algorithm {
	if r.ElectionTypes != nil || r.AnnounceTypes != nil {
		return election.Algorithm{Name: r.Algorithm, ElectionTypes: r.ElectionTypes, AnnounceTypes: r.AnnounceTypes}
	}
	if a, err := election.Lookup(r.Algorithm); err == nil {
		return a
	}
	return election.Algorithm{Name: r.Algorithm}
}

func classOf(a election.Algorithm, typ string) string {
	switch {
	case a.IsElection(typ):
		return "election"
	case a.IsAnnounce(typ):
		return "announce"
	case len(a.ElectionTypes)+len(a.AnnounceTypes) == 0:
		return "unclassified"
	}
	return "maintenance"
}

// countRows lays out the analysis's message counts, one row per type,
// election types first, then announcements, then the rest.
func countRows(c check.Counts, a election.Algorithm) ([]countRow, countRow) {
	out := make([]countRow, 0, len(c.ByType))
	for typ := range c.ByType {
		out = append(out, countRow{Type: typ, Class: classOf(a, typ), Sent: c.ByType[typ], Received: c.ReceivedByType[typ]})
	}
	for typ, n := range c.ReceivedByType {
		if _, sent := c.ByType[typ]; !sent { // received, its send not recorded
			out = append(out, countRow{Type: typ, Class: classOf(a, typ), Received: n})
		}
	}
	rank := map[string]int{"election": 0, "announce": 1, "maintenance": 2, "unclassified": 3}
	sort.Slice(out, func(i, j int) bool {
		if rank[out[i].Class] != rank[out[j].Class] {
			return rank[out[i].Class] < rank[out[j].Class]
		}
		return out[i].Type < out[j].Type
	})
	return out, countRow{Type: "total", Sent: c.Total, Received: c.Received}
}

// checkpointsOf finds the checkpoints agreement or bully-max judged.
func checkpointsOf(vs []check.Verdict) []time.Time {
	for _, v := range vs {
		if ev := v.Evidence.Stable; ev != nil {
			var out []time.Time
			for _, cp := range ev.Checkpoints {
				out = append(out, cp.At)
			}
			return out
		}
	}
	return nil
}

// offset is t from the start of the history, as every time on the page is
// shown (package millis): "+1 750 ms".
func offset(tl *check.Timeline, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return millis.Offset(t.Sub(tl.Start))
}

// stepRows lists the steps and expectations for the table under the
// timeline, and the markers that key the timeline to it: one per step, at
// the instant its expectation held or failed when it made one; an
// expectation of no step gets a number after the last step's.
func stepRows(tl *check.Timeline, r Report) ([]stepRow, []marker) {
	var rows []stepRow
	var ms []marker
	byStep := map[int]Expectation{}
	var loose []Expectation
	for _, e := range r.Expectations {
		if e.Step > 0 {
			byStep[e.Step] = e
		} else {
			loose = append(loose, e)
		}
	}
	last := 0
	for i, s := range r.Steps {
		n := s.Number
		if n == 0 {
			n = i + 1
		}
		last = max(last, n)
		row := stepRow{Number: strconv.Itoa(n), Offset: offset(tl, s.Time), Name: s.Name}
		m := marker{at: s.Time, label: row.Number, fill: stepColour, title: fmt.Sprintf("step %d %s: %s", n, row.Offset, s.Name)}
		if e, ok := byStep[n]; ok {
			delete(byStep, n)
			row.Expect, row.Pass, row.Detail = true, e.Pass, e.Detail
			held := "held"
			m.fill = undoColour
			if !e.Pass {
				held, m.fill = "failed", killColour
			}
			row.Offset = offset(tl, e.Time)
			m.at = e.Time
			m.title = fmt.Sprintf("step %d: %s\n%s %s (began %s)", n, s.Name, held, row.Offset, offset(tl, s.Time))
			if e.Detail != "" {
				m.title += "\n" + e.Detail
			}
		}
		rows = append(rows, row)
		ms = append(ms, m)
	}
	// Expectations whose step was not given are expectations of their own.
	for _, n := range slices.Sorted(maps.Keys(byStep)) {
		loose = append(loose, byStep[n])
	}
	for _, e := range loose {
		last++
		row := stepRow{Number: strconv.Itoa(last), Offset: offset(tl, e.Time), Name: e.Name, Detail: e.Detail, Expect: true, Pass: e.Pass}
		m := marker{at: e.Time, label: row.Number, fill: undoColour, title: fmt.Sprintf("expectation %s %s: %s", row.Number, row.Offset, e.Name)}
		if !e.Pass {
			m.fill = killColour
		}
		if e.Detail != "" {
			m.title += "\n" + e.Detail
		}
		rows = append(rows, row)
		ms = append(ms, m)
	}
	return rows, ms
}

func idsText(ids []election.NodeID) string {
	if len(ids) == 0 {
		return ""
	}
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(int(id))
	}
	return s
}

func typesText(by map[string]int) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, by[k])
	}
	return s
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms": millis.Of,
}).Parse(pageTemplate))
