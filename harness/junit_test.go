package harness

import (
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Read back with encoding/xml into types of the test's own, so the test
// does not merely agree with the writer's struct tags.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Tests    string      `xml:"tests,attr"`
	Failures string      `xml:"failures,attr"`
	Errors   string      `xml:"errors,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name       string                         `xml:"name,attr"`
	Tests      string                         `xml:"tests,attr"`
	Failures   string                         `xml:"failures,attr"`
	Errors     string                         `xml:"errors,attr"`
	Skipped    string                         `xml:"skipped,attr"`
	Time       string                         `xml:"time,attr"`
	Timestamp  string                         `xml:"timestamp,attr"`
	Properties []struct{ Name, Value string } `xml:"properties>property"`
	Cases      []readCase                     `xml:"testcase"`
	SystemOut  string                         `xml:"system-out"`
}

type readCase struct {
	Name      string `xml:"name,attr"`
	ClassName string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
	} `xml:"error"`
}

// junitRuns: a passing crash run, a run whose expectation fails, and a
// split-brain run whose no-split-brain verdict fails unexpectedly.
func junitRuns(t *testing.T) []*Result {
	t.Helper()
	var out []*Result
	for _, src := range []string{
		crash,
		strings.Replace(crash, "{leader: 4, within: 2s}", "{leader: 3, within: 2s}", 1),
		strings.Replace(splitBrain, "checkers: [agreement]", "checkers: [agreement, no-split-brain]", 1),
	} {
		res, err := Run(context.Background(), mustParse(t, src), newFake(), Options{Store: t.TempDir(), Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

func TestJUnitHasASuitePerRunAndACasePerExpectationAndChecker(t *testing.T) {
	runs := junitRuns(t)
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(path, runs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc readSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, b)
	}
	if len(doc.Suites) != len(runs) {
		t.Fatalf("%d suites, want one per run (%d)", len(doc.Suites), len(runs))
	}
	tests, failures := 0, 0
	for i, s := range doc.Suites {
		r := runs[i]
		if s.Name != r.Scenario {
			t.Errorf("suite %d named %q, want %q", i, s.Name, r.Scenario)
		}
		_, nExp := r.ExpectationsPassed()
		if n := len(s.Cases); n != nExp+len(r.Checkers) || s.Tests != strconv.Itoa(n) {
			t.Errorf("%s: %d cases (tests=%s), want %d expectations + %d checkers", s.Name, n, s.Tests, nExp, len(r.Checkers))
		}
		failed := 0
		for _, c := range s.Cases {
			if c.ClassName != "ringleader.fake."+r.Scenario || c.Name == "" {
				t.Errorf("%s: case %q has classname %q", s.Name, c.Name, c.ClassName)
			}
			if _, err := strconv.ParseFloat(c.Time, 64); err != nil {
				t.Errorf("%s: case %q time %q is not seconds", s.Name, c.Name, c.Time)
			}
			if c.Failure != nil {
				failed++
			}
		}
		if s.Failures != strconv.Itoa(failed) || s.Errors != "0" || s.Skipped != "0" {
			t.Errorf("%s: failures=%s errors=%s skipped=%s, counted %d failed cases", s.Name, s.Failures, s.Errors, s.Skipped, failed)
		}
		if failed != len(r.Failures) {
			t.Errorf("%s: %d failed cases, the run has %d failures", s.Name, failed, len(r.Failures))
		}
		if _, err := time.Parse("2006-01-02T15:04:05", s.Timestamp); err != nil {
			t.Errorf("%s: timestamp %q: %v", s.Name, s.Timestamp, err)
		}
		if !strings.Contains(s.SystemOut, filepath.Join(r.Dir, "report.html")) {
			t.Errorf("%s: system-out does not point at the report: %q", s.Name, s.SystemOut)
		}
		tests += len(s.Cases)
		failures += failed
	}
	if doc.Tests != strconv.Itoa(tests) || doc.Failures != strconv.Itoa(failures) || doc.Errors != "0" {
		t.Errorf("testsuites totals tests=%s failures=%s errors=%s, want %d, %d, 0", doc.Tests, doc.Failures, doc.Errors, tests, failures)
	}

	// The failed expectation: what was expected and what the nodes viewed.
	exp := findCase(t, doc.Suites[1], "step 4 (line 7): expect leader 3")
	if exp.Failure == nil || exp.Failure.Type != "expectation" || !strings.Contains(exp.Failure.Message, "1→4") || !strings.Contains(exp.Failure.Text, "seen: ") {
		t.Errorf("failed expectation: %+v", exp.Failure)
	}
	// The unexpected split brain: the summary as the message, the
	// evidence (every overlap, with its pair) as the text.
	nsb := findCase(t, doc.Suites[2], "checker no-split-brain")
	if nsb.Failure == nil || nsb.Failure.Type != "checker" || !strings.HasPrefix(nsb.Failure.Message, "expected pass, got fail: ") {
		t.Fatalf("no-split-brain case: %+v", nsb.Failure)
	}
	for _, want := range []string{`"overlaps"`, `"nodes"`, `"leader_intervals"`, " ms"} {
		if !strings.Contains(nsb.Failure.Text, want) {
			t.Errorf("no-split-brain failure text lacks %s:\n%s", want, nsb.Failure.Text)
		}
	}
	// A passing checker has no failure element.
	if c := findCase(t, doc.Suites[0], "checker agreement"); c.Failure != nil {
		t.Errorf("passing agreement has a failure: %+v", c.Failure)
	}
}

func TestJUnitCountsARunThatCouldNotBeCarriedOutAsAnError(t *testing.T) {
	r := &Result{Scenario: "broken", Backend: "docker", Started: time.Now(), Errors: []string{"start: no docker engine"}}
	var b strings.Builder
	if err := JUnit(&b, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	var doc readSuites
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	c := findCase(t, doc.Suites[0], "run")
	if c.Error == nil || c.Error.Message != "start: no docker engine" || doc.Suites[0].Errors != "1" || doc.Errors != "1" {
		t.Errorf("run error: %+v, suite errors %s", c.Error, doc.Suites[0].Errors)
	}
}

// TestJUnitFileIsValid checks the file against the JUnit schema in
// testdata (the Ant / Jenkins junit-10 shape) with xmllint, when this
// machine has it.
func TestJUnitFileIsValid(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed (apt-get install libxml2-utils)")
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	runs := append(junitRuns(t), &Result{Scenario: "broken", Backend: "docker", Started: time.Now(), Errors: []string{"start: <no engine> & \"more\""}})
	if err := WriteJUnit(path, runs); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("junit.xml is not valid JUnit XML: %v\n%s", err, out)
	}
}

func findCase(t *testing.T, s readSuite, prefix string) readCase {
	t.Helper()
	for _, c := range s.Cases {
		if strings.HasPrefix(c.Name, prefix) {
			return c
		}
	}
	t.Fatalf("suite %s has no case %q", s.Name, prefix)
	return readCase{}
}
