//go:build !nodeimage

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/outpath"
)

func init() {
	commands["report"] = command{summary: "render a stored run's HTML report again", run: reportCmd}
}

func reportCmd(args []string) int { return runReport(args, os.Stdout, os.Stderr) }

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "", "write the page to `FILE` (default: report.html in the run's directory)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader report [-o FILE] RUNDIR|history.jsonl\n\n"+
			"Renders a stored run's report page again, from its history judged again (as 'ringleader check'\n"+
			"judges it) and its results.json.\nExit status: 0 written, 1 the page could not be written, 2 bad input.\n\nFlags:\n")
		printFlags(fs.Output(), fs)
	}
	paths, status, done := parse(fs, args, true, stderr)
	if done {
		return status
	}
	if len(paths) != 1 {
		return usageErrorTo(stderr, "report", "give one run directory or its history.jsonl")
	}
	st, err := harness.FindStored(paths[0])
	if err != nil {
		fmt.Fprintf(stderr, "ringleader report: %v\n", err)
		return 2
	}
	flagName, path := "-o", *out
	if path == "" {
		flagName, path = "the page", filepath.Join(st.Dir, "report.html")
	}
	if !checkOutputs(stderr, "report", outputPath{flag: flagName, path: path, kind: outpath.File, ours: &outpath.HTMLReport}) {
		return 2
	}
	rj, err := harness.Rejudge(st)
	if err != nil {
		fmt.Fprintf(stderr, "ringleader report: %v\n", err)
		return 2
	}
	for _, n := range rj.Notes {
		fmt.Fprintf(stderr, "ringleader report: %s: note: %s\n", st.Dir, n)
	}
	if err := rj.Result.WriteReport(path); err != nil {
		fmt.Fprintf(stderr, "ringleader report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", path)
	return 0
}
