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
	"slices"
	"sort"
	"time"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
)

// Step is a scenario step as it ran: a named instant on the time axis.
type Step struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
}

// Expectation is one `expect` of a scenario, checked at Time.
type Expectation struct {
	Name   string    `json:"name"`
	Time   time.Time `json:"time"`
	Pass   bool      `json:"pass"`
	Detail string    `json:"detail,omitempty"`
}

// Report is everything one page shows. Only Records is needed; the rest is
// shown when present.
type Report struct {
	Title     string
	Scenario  string
	Backend   string
	Algorithm string
	Quorum    election.QuorumMode
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
	Expectations  []expectationRow
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

type expectationRow struct {
	Name, Offset, Detail string
	Pass                 bool
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
		Quorum:    r.Quorum.String(),
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
	p.Span = tl.End.Sub(tl.Start).String()

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
	p.Legend = legend(tl, pal)
	p.Timeline = timelinePlot(tl, an.SplitBrain, pal, r, checkpointsOf(r.Verdicts))

	for _, e := range r.Expectations {
		p.Expectations = append(p.Expectations, expectationRow{Name: e.Name, Offset: offset(tl, e.Time), Detail: e.Detail, Pass: e.Pass})
	}

	p.Counts, p.CountTotal = countRows(an.Counts, alg)
	for _, e := range an.Elections {
		row := electionRow{Offset: offset(tl, e.Start), Leaders: idsText(e.Leaders), Election: e.Election, Announce: e.Announce, Types: typesText(e.ByType), Unfinished: e.Unfinished}
		if !e.Agreed.IsZero() {
			row.Agreed = offset(tl, e.Agreed)
			row.Took = roundDur(e.Agreed.Sub(e.Start)).String()
		}
		p.Elections = append(p.Elections, row)
	}

	fos := an.Failovers
	for _, f := range fos {
		row := failoverRow{Label: f.Label, Leader: f.Leader, From: offset(tl, f.From), NewLeader: idsText(f.NewLeader), Recovered: f.Recovered, Note: f.Note}
		if f.Recovered {
			row.Duration = fmt.Sprintf("%.1f ms", f.Millis)
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

func offset(tl *check.Timeline, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "+" + roundDur(t.Sub(tl.Start)).String()
}

// roundDur keeps offsets short: millisecond precision is what a reader can
// use on a page.
func roundDur(d time.Duration) time.Duration {
	if d > 10*time.Millisecond || d < -10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
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
	"f": func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"ms": func(d time.Duration) string {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	},
}).Parse(pageTemplate))
