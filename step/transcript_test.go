package step_test

import (
	"flag"
	"path/filepath"
	"testing"

	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/internal/transcript"
	"github.com/ringleader-dev/ringleader/step"
)

// rewrite regenerates every transcript's expected output from what the
// driver prints now: go test ./step -run TestTranscripts -rewrite, then
// read the diff.
var rewrite = flag.Bool("rewrite", false, "write the transcripts' expected output from this run")

// TestTranscripts runs every testdata/*/*.txt transcript on a fresh driver.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata/*/ (%v)", err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			var tr step.Transcript
			transcript.Run(t, f, *rewrite, func(c transcript.Case) (string, error) { return tr.Do(c.Words) })
		})
	}
}
