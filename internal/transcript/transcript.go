// Package transcript reads and checks test transcripts: files of commands,
// each followed by the output it must produce, in the manner of etcd raft's
// datadriven interaction files. A transcript reads like a lab notebook:
//
//	# Comments and blank lines between cases are kept as they are.
//	fault kill 5
//	----
//	fault kill 5: ok
//
// A case is one command line, a line of four dashes, and its expected
// output up to the next blank line (or the end of the file); an output
// therefore holds no blank line. Run compares every case's output with
// what the test produces, and with rewrite set writes the file back with
// the outputs produced, keeping everything else: how a change of behaviour
// becomes a reviewable diff.
//
// It is a few dozen lines rather than github.com/cockroachdb/datadriven:
// the project needs only this one form (no multi-line inputs, no
// subtests), and it keeps the dependency list to what the product needs.
package transcript

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Case is one command of a transcript.
type Case struct {
	// Line is the command's line in the file, from 1.
	Line int
	// Command is the command line as written; Words is it split on spaces.
	Command string
	Words   []string
	// Want is the expected output, without a trailing newline.
	Want string

	// wantFrom, wantTo are the lines of the expected output in the file.
	wantFrom, wantTo int
}

const separator = "----"

// Parse reads a transcript's cases; name is for errors.
func Parse(name, text string) ([]Case, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var cases []Case
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != separator {
			return nil, fmt.Errorf("%s:%d: command %q is not followed by a %q line", name, i+1, l, separator)
		}
		c := Case{Line: i + 1, Command: l, Words: strings.Fields(l), wantFrom: i + 2}
		j := i + 2
		for j < len(lines) && lines[j] != "" {
			j++
		}
		c.Want, c.wantTo = strings.Join(lines[i+2:j], "\n"), j
		cases = append(cases, c)
		i = j
	}
	return cases, nil
}

// Run runs every case of the transcript at path through do, in order, and
// fails t at each case whose output differs from the expected. An error
// from do is output too, as "error: …", so a transcript can show what is
// refused. With rewrite, the file is written back with the outputs do
// produced instead.
func Run(t *testing.T, path string, rewrite bool, do func(Case) (string, error)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Parse(path, string(b))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var out []string
	last := 0
	for _, c := range cases {
		got, err := do(c)
		if err != nil {
			got = "error: " + err.Error()
		}
		got = strings.TrimRight(got, "\n")
		if strings.Contains(got, "\n\n") || got == "" {
			// A blank line would end the case early on reading.
			got = strings.ReplaceAll(got, "\n\n", "\n.\n")
			if got == "" {
				got = "ok"
			}
		}
		if !rewrite && got != c.Want {
			t.Errorf("%s:%d: %s\n--- want\n%s\n--- got\n%s", path, c.Line, c.Command, c.Want, got)
		}
		out = append(out, lines[last:c.wantFrom]...)
		out = append(out, got)
		last = c.wantTo
	}
	out = append(out, lines[last:]...)
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
