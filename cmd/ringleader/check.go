//go:build !nodeimage

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/outpath"
)

func init() {
	commands["check"] = command{summary: "judge a stored run again from its history and print the verdicts", run: checkCmd}
}

func checkCmd(args []string) int { return runCheck(args, os.Stdout, os.Stderr) }

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	write := fs.Bool("write", false, "rewrite each run's results.json with the verdicts judged again")
	asJSON := fs.Bool("json", false, "print the runs judged again as a JSON array (results.json's shape) instead of the verdicts")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader check [--write] [--json] RUNDIR|history.jsonl ...\n\n"+
			"Judges stored runs again: reads each run's results.json (the cluster, the checkers and the verdicts\n"+
			"expected) and history.jsonl, runs the checkers on the history with the code a run uses, and prints\n"+
			"every verdict next to the one recorded. Expectations were judged on the live cluster and are kept.\n"+
			"Exit status: 0 every run passes, 1 some verdict or expectation fails, 2 bad input.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	paths, status, done := parse(fs, args, true, stderr)
	if done {
		return status
	}
	if len(paths) == 0 {
		return usageErrorTo(stderr, "check", "give a run directory or its history.jsonl")
	}
	var stored []harness.Stored
	for _, p := range paths {
		st, err := harness.FindStored(p)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader check: %v\n", err)
			return 2
		}
		if *write && !checkOutputs(stderr, "check", outputPath{flag: "--write", path: st.Results, kind: outpath.File, ours: &outpath.ResultsFile}) {
			return 2
		}
		stored = append(stored, st)
	}
	var judged []*harness.Rejudged
	for _, st := range stored {
		rj, err := harness.Rejudge(st)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader check: %v\n", err)
			return 2
		}
		judged = append(judged, rj)
	}
	status = 0
	var results []*harness.Result
	for _, rj := range judged {
		results = append(results, rj.Result)
		if !rj.Result.Pass {
			status = 1
		}
		for _, n := range rj.Notes {
			fmt.Fprintf(stderr, "ringleader check: %s: note: %s\n", rj.Result.Dir, n)
		}
		if !*asJSON {
			printRejudged(stdout, rj)
		}
		if *write {
			if err := rj.Result.WriteResults(); err != nil {
				fmt.Fprintf(stderr, "ringleader check: %v\n", err)
				status = 1
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			fmt.Fprintf(stderr, "ringleader check: %v\n", err)
			return 1
		}
	}
	return status
}

// printRejudged prints one run's verdicts judged again, each beside the
// one results.json recorded.
func printRejudged(w io.Writer, rj *harness.Rejudged) {
	r := rj.Result
	fmt.Fprintf(w, "%s: %s on %s, %s %s, seed %d\n", r.Dir, r.Scenario, r.Backend, r.Algorithm, quorumWord(r.Quorum), r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Checkers {
		was := "not run then"
		if old, ok := rj.Stored.Checker(c.Checker); ok {
			was = "as recorded"
			if old.Pass != c.Pass || old.Expected != c.Expected {
				was = "CHANGED: recorded " + checkerWord(old)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Checker, checkerWord(c), was, c.Summary)
	}
	tw.Flush()
	p, n := r.ExpectationsPassed()
	verdict, was := "PASS", "as recorded"
	if !r.Pass {
		verdict = "FAIL"
	}
	if r.Pass != rj.Stored.Pass {
		was = "CHANGED"
	}
	fmt.Fprintf(w, "  expectations %d/%d (as judged on the live cluster); run %s (%s)\n", p, n, verdict, was)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "    %s\n", f)
	}
}

// checkerWord is a verdict as the run table shows it.
func checkerWord(c harness.CheckerResult) string {
	switch {
	case c.Pass && c.Match:
		return "pass"
	case !c.Pass && c.Match:
		return "fail (expected)"
	case c.Pass:
		return "PASS (fail expected)"
	}
	return "FAIL"
}

func quorumWord(q string) string {
	if q == "" || q == "none" {
		return "without quorum"
	}
	return "quorum " + q
}
