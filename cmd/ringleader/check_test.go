//go:build !nodeimage

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storedRun runs one shipped scenario in the simulator into a fresh store
// and returns its run directory.
func storedRun(t *testing.T, name string) string {
	t.Helper()
	store := t.TempDir()
	args := []string{"run", "--backend", "sim", "--seed", "5", "--store", store, "../../scenarios/" + name + ".yaml"}
	ringleader(t, args...).wantCode(t, 0, args...)
	dir, err := filepath.EvalSymlinks(filepath.Join(store, name, "latest-sim"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readVerdicts(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Pass     bool `json:"pass"`
		Checkers []struct {
			Checker  string `json:"checker"`
			Pass     bool   `json:"pass"`
			Expected string `json:"expected"`
			Summary  string `json:"summary"`
		} `json:"checkers"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"run": map[bool]string{true: "pass", false: "fail"}[r.Pass]}
	for _, c := range r.Checkers {
		out[c.Checker] = map[bool]string{true: "pass", false: "fail"}[c.Pass] + " expected " + c.Expected + ": " + c.Summary
	}
	return out
}

// check judges a stored run again and finds what the run found: every
// checker's verdict as recorded, from the directory or its history.jsonl;
// --write rewrites results.json with the same verdicts.
func TestCheckJudgesAStoredRunAsTheRunDid(t *testing.T) {
	dir := storedRun(t, "split-brain-no-quorum")
	results := filepath.Join(dir, "results.json")
	before := readVerdicts(t, results)
	for _, target := range []string{dir, filepath.Join(dir, "history.jsonl")} {
		args := []string{"check", target}
		r := ringleader(t, args...)
		r.wantCode(t, 0, args...)
		wantContains(t, "stdout", r.stdout, "no-split-brain  fail (expected)  as recorded", "run PASS (as recorded)")
		if strings.Contains(r.stdout, "CHANGED") || r.stderr != "" {
			t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	}
	args := []string{"check", "--write", dir}
	ringleader(t, args...).wantCode(t, 0, args...)
	if after := readVerdicts(t, results); !equalMaps(before, after) {
		t.Errorf("--write changed the verdicts:\nbefore %v\nafter  %v", before, after)
	}

	// Tell results.json the scenario expected no split brain: judged
	// again, the run fails, exit 1.
	b, _ := os.ReadFile(results)
	os.WriteFile(results, []byte(strings.Replace(string(b), `"expected": "fail"`, `"expected": "pass"`, 1)), 0o644)
	r := ringleader(t, "check", dir)
	r.wantCode(t, 1, "check", dir)
	wantContains(t, "stdout", r.stdout, "no-split-brain  FAIL", "run FAIL")
}

func TestCheckAndReportRefuseWhatIsNotAStoredRun(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{{"check", empty}, {"check"}, {"report", empty}, {"check", filepath.Join(empty, "nope")}} {
		r := ringleader(t, args...)
		r.wantCode(t, 2, args...)
		if r.stdout != "" || !strings.HasPrefix(r.stderr, "ringleader "+args[0]+": ") {
			t.Errorf("%v: stdout %q stderr %q", args, r.stdout, r.stderr)
		}
	}
}

// report renders the page again, to the run's directory or -o FILE, and
// never over what is not a regular file.
func TestReportRendersTheStoredRunAgain(t *testing.T) {
	dir := storedRun(t, "bully-leader-crash")
	page := filepath.Join(dir, "report.html")
	os.Remove(page)
	ringleader(t, "report", dir).wantCode(t, 0, "report", dir)
	other := filepath.Join(t.TempDir(), "again.html")
	ringleader(t, "report", "-o", other, dir).wantCode(t, 0, "report", "-o", other, dir)
	for _, p := range []string{page, other} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "bully-leader-crash") || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s is not the run's page", p)
		}
	}
	r := ringleader(t, "report", "-o", "/dev/null", dir)
	r.wantCode(t, 2, "report", "-o", "/dev/null", dir)
	wantContains(t, "stderr", r.stderr, "-o /dev/null: is a character device")
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
