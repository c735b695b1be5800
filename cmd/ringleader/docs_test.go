//go:build !nodeimage

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// The example outputs in README.md and docs/*.md are what the commands
// print. A fenced block is marked on the line before it:
//
//	<!-- output: checked -->             its "$ ringleader ..." lines are run
//	                                     and each one's output (stdout and
//	                                     stderr together) must be the lines
//	                                     that follow it; a line "..." (indented or not) stands
//	                                     for any number of lines
//	<!-- output: illustrative: WHY -->   not run (containers, a measurement,
//	                                     a hypothetical file)
//
// Every block with a "$ ringleader" line must carry one of the two, so no
// example goes unchecked by oversight. Wall-clock figures (the explorer's
// rate and its speed-up over real time) are masked on both sides.
// go test ./cmd/ringleader -run TestDocExamples -update rewrites the
// checked blocks that elide nothing.

var updateDocs = flag.Bool("update", false, "rewrite the checked example outputs in README.md and docs/*.md")

var outputMarker = regexp.MustCompile(`^<!-- output: (checked|illustrative: [^>]+) -->$`)

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	file      string
	line      int    // of the opening fence, 1-based
	marker    string // "checked", "illustrative: ...", or "" when unmarked
	body      []string
	bodyStart int // index in the file's lines of the body's first line
}

func docBlocks(t *testing.T, file string) ([]docBlock, []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "```") {
			j++
		}
		blk := docBlock{file: file, line: i + 1, body: lines[i+1 : min(j, len(lines))], bodyStart: i + 1}
		if i > 0 {
			if m := outputMarker.FindStringSubmatch(lines[i-1]); m != nil {
				blk.marker = m[1]
			}
		}
		out = append(out, blk)
		i = j
	}
	return out, lines
}

// wallClock masks the figures that depend on the machine's speed.
var wallClock = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`in \d+(\.\d+)?s \(\d+/s\)`), "in …s (…/s)"},
	{regexp.MustCompile(`of cluster time in \d+(\.\d+)?s: \d+× real time`), "of cluster time in …s: …× real time"},
	{regexp.MustCompile(`schedules \(\d+/s\)`), "schedules (…/s)"},
}

func maskWallClock(s string) string {
	s = strings.TrimRight(s, " ") // Markdown keeps no trailing spaces
	for _, w := range wallClock {
		s = w.re.ReplaceAllString(s, w.with)
	}
	return s
}

// matchLines reports whether got matches want, where a want line "..."
// matches any run of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && maskWallClock(want[0]) == maskWallClock(got[0]) && matchLines(want[1:], got[1:])
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// runDocCommand runs one "$ ringleader ..." line in dir and returns what
// it printed, stdout and stderr in the order written.
func runDocCommand(t *testing.T, dir, cmdline string) []string {
	t.Helper()
	args := strings.Fields(strings.TrimPrefix(cmdline, "$ ringleader"))
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		t.Errorf("%s: exit 2 (bad usage):\n%s", cmdline, out.String())
	} else if err != nil && !ok {
		t.Fatalf("%s: %v", cmdline, err)
	}
	lines := strings.Split(out.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return trimBlank(lines)
}

func TestDocExamples(t *testing.T) {
	dockertest.CPUBound(t)
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	checked := 0
	for _, file := range files {
		blocks, lines := docBlocks(t, file)
		changed := false
		// Back to front, so that rewriting a block leaves the earlier
		// blocks' line numbers as they were.
		for bi := len(blocks) - 1; bi >= 0; bi-- {
			blk := blocks[bi]
			hasCommand := false
			for _, l := range blk.body {
				hasCommand = hasCommand || strings.HasPrefix(l, "$ ringleader")
			}
			where := fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../../"), blk.line)
			switch {
			case blk.marker == "" && hasCommand:
				t.Errorf("%s: an example with \"$ ringleader\" lines carries no <!-- output: checked --> or <!-- output: illustrative: why --> marker", where)
				continue
			case blk.marker != "checked":
				continue
			case !hasCommand:
				t.Errorf("%s: marked checked, but no line starts with \"$ ringleader\"", where)
				continue
			}
			checked++
			dir := t.TempDir()
			var fresh []string
			elides, mismatch := false, false
			for i := 0; i < len(blk.body); {
				cmdline := blk.body[i]
				if !strings.HasPrefix(cmdline, "$ ringleader") {
					t.Errorf("%s: line %q comes before any command", where, cmdline)
					break
				}
				j := i + 1
				for j < len(blk.body) && !strings.HasPrefix(blk.body[j], "$ ") {
					j++
				}
				want := trimBlank(blk.body[i+1 : j])
				got := runDocCommand(t, dir, cmdline)
				for _, w := range want {
					elides = elides || strings.TrimSpace(w) == "..."
				}
				if !matchLines(want, got) {
					mismatch = true
					if !*updateDocs || elides {
						t.Errorf("%s: %s printed:\n%s\n\nthe docs show:\n%s%s", where, cmdline, strings.Join(got, "\n"), strings.Join(want, "\n"),
							map[bool]string{true: "\n(the example elides lines with ...: update it by hand)", false: "\n(go test -run TestDocExamples -update rewrites it)"}[elides])
					}
				}
				fresh = append(fresh, cmdline)
				fresh = append(fresh, got...)
				if j < len(blk.body) && len(want) < j-i-1 {
					fresh = append(fresh, "") // keep the blank line between commands
				}
				i = j
			}
			if *updateDocs && mismatch && !elides {
				lines = append(lines[:blk.bodyStart], append(fresh, lines[blk.bodyStart+len(blk.body):]...)...)
				changed = true
			}
		}
		if changed {
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no checked example found: the markers are gone")
	}
}
