package harness

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ringleader-dev/ringleader/millis"
	"github.com/ringleader-dev/ringleader/outpath"
)

// The JUnit XML that CI servers read (the Ant / Jenkins junit-10.xsd
// shape): testsuites > testsuite > testcase > failure | error. One suite is
// one scenario run; its cases are the run's expectations and checkers, so a
// CI page lists "bully-leader-crash: checker no-split-brain" next to the
// project's unit tests, with the evidence as the failure's text.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	ID         int             `xml:"id,attr"`
	Package    string          `xml:"package,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

// junitProblem is a failure (a judgement went the wrong way) or an error
// (the run could not be carried out).
type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// maxJUnitEvidence bounds one failure's text: CI pages choke on megabytes,
// and the whole evidence is in results.json next to the report.
const maxJUnitEvidence = 64_000

// seconds is the decimal seconds JUnit's time attributes want.
func seconds(ms float64) string { return fmt.Sprintf("%.3f", ms/1000) }

// JUnit writes results as JUnit XML: one <testsuite> per run, one
// <testcase> per expectation and per checker (and one named "run" with an
// <error> when the run could not be carried out).
func JUnit(w io.Writer, results []*Result) error {
	doc := junitSuites{Name: "ringleader"}
	total := 0.0
	host, _ := os.Hostname()
	for i, r := range results {
		s := junitOf(r)
		s.ID, s.Hostname = i, host
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		total += r.WallMillis
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes results as JUnit XML to path, replacing it whole: a CI
// step never reads half a file. Anything at path but a regular file is
// refused (outpath.WriteFile), as is a path whose directory is missing.
func WriteJUnit(path string, results []*Result) error {
	if err := outpath.WriteFile(path, func(w io.Writer) error { return JUnit(w, results) }); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}

func junitOf(r *Result) junitSuite {
	name := r.Scenario
	if r.Reps > 1 {
		name = fmt.Sprintf("%s %d/%d", r.Scenario, r.Rep, r.Reps)
	}
	// Dots make a package tree on CI pages: ringleader > docker > scenario.
	class := "ringleader." + r.Backend + "." + r.Scenario
	s := junitSuite{
		Name: name, Package: "ringleader." + r.Backend,
		Time:      seconds(r.WallMillis),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{"file", r.File}, {"backend", r.Backend}, {"algorithm", r.Algorithm}, {"quorum", r.Quorum}, {"options", r.Options.String()},
			{"seed", fmt.Sprint(r.Seed)}, {"cluster", r.Cluster}, {"dir", r.Dir},
		},
	}
	if r.Dir != "" {
		s.SystemOut = "report: " + filepath.Join(r.Dir, "report.html") + "\nresults: " + filepath.Join(r.Dir, "results.json") + "\n"
	}
	for _, st := range r.Steps {
		e := st.Expect
		if e == nil {
			continue
		}
		c := junitCase{Name: fmt.Sprintf("step %d (line %d): %s", st.Index, st.Line, st.Text), ClassName: class, Time: seconds(e.After)}
		if !e.Pass {
			c.Failure = &junitProblem{
				Message: fmt.Sprintf("%s: %s", e.Expect, e.Seen), Type: "expectation",
				Text: fmt.Sprintf("step %d of %s (line %d): %s\nwithin: %s\nseen: %s\n", st.Index, r.File, st.Line, st.Text, millis.Float(e.Within), e.Seen),
			}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, cr := range r.Checkers {
		c := junitCase{Name: "checker " + string(cr.Checker), ClassName: class, Time: "0.000"}
		if cr.Expected == "fail" {
			c.Name += " (expected to fail)"
		}
		if !cr.Match {
			c.Failure = &junitProblem{
				Message: fmt.Sprintf("expected %s, got %s: %s", cr.Expected, verdictWord(cr.Pass), cr.Summary), Type: "checker",
				Text: evidenceText(cr),
			}
		}
		s.Cases = append(s.Cases, c)
	}
	if len(r.Errors) > 0 {
		s.Cases = append(s.Cases, junitCase{Name: "run", ClassName: class, Time: seconds(r.WallMillis),
			Error: &junitProblem{Message: r.Errors[0], Type: "run", Text: strings.Join(r.Errors, "\n") + "\n"}})
	}
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Error != nil:
			s.Errors++
		case c.Failure != nil:
			s.Failures++
		}
	}
	return s
}

// evidenceText is a checker's summary and its evidence, as JSON.
func evidenceText(cr CheckerResult) string {
	text := cr.Summary + "\n"
	if cr.Evidence.IsZero() {
		return text
	}
	b, err := json.MarshalIndent(cr.Evidence, "", "  ")
	if err != nil {
		return text + fmt.Sprintf("(evidence not encodable: %v)\n", err)
	}
	if len(b) > maxJUnitEvidence {
		return text + string(b[:maxJUnitEvidence]) + fmt.Sprintf("\n… %d more bytes in results.json\n", len(b)-maxJUnitEvidence)
	}
	return text + string(b) + "\n"
}
