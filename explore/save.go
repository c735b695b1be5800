package explore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/scenario"
)

// Scenario is a shrunk schedule as a scenario file's contents: the cluster
// it was found on, its steps, and the failing checker as the only one run,
// expected to fail — so that `ringleader run FILE` exits 0 exactly when the
// failure reproduces, on either backend.
func Scenario(o Options, sh Shrunk) *scenario.Scenario {
	name := FileStem(o.Algorithm, sh.Checker, sh.Seed)
	return &scenario.Scenario{
		Name: name,
		Description: fmt.Sprintf("A schedule on %d-node %s %s that the explorer found breaking %s (seed %d), shrunk from %d to %d steps. It passes when %s fails, as it did in the simulator.",
			len(o.Members), o.Algorithm, quorumText(o.Quorum), sh.Checker, sh.Seed, sh.From, sh.StepCount, sh.Checker),
		Cluster:        cluster(o),
		Steps:          sh.Steps,
		Repeat:         1,
		Checkers:       []check.Name{sh.Checker},
		ExpectCheckers: map[check.Name]bool{sh.Checker: false},
		LivenessBound:  o.Quiet,
		// The first seed the shrinker confirmed the failure on: run
		// without --seed replays exactly the run that failed.
		Seed: &sh.Seed,
	}
}

// FileStem is the saved file's name without .yaml, and the scenario's name:
// <algorithm>-<checker>-<seed>, made a valid scenario name: lower case,
// anything but letters, digits and dashes turned into dashes, and, when
// that is longer than scenario.MaxNameLen, the algorithm's part cut short
// and followed by a hash of the whole, so that two long names stay apart.
func FileStem(algorithm string, checker check.Name, seed int64) string {
	stem := nameSafe(fmt.Sprintf("%s-%s-%d", algorithm, checker, seed))
	if len(stem) <= scenario.MaxNameLen {
		return stem
	}
	h := fnv.New32a()
	h.Write([]byte(stem))
	tail := fmt.Sprintf("-%08x-%s-%d", h.Sum32(), checker, seed)
	keep := max(scenario.MaxNameLen-len(tail), 1)
	return strings.TrimRight(nameSafe(algorithm)[:min(keep, len(nameSafe(algorithm)))], "-") + tail
}

// nameSafe is s in the letters a scenario name takes: lower-case letters,
// digits and dashes, not starting with a dash.
func nameSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
	if s = strings.TrimLeft(s, "-"); s == "" {
		return "x"
	}
	return s
}

// optionsText is "   options: k=v,…", or nothing for an algorithm without
// options.
func optionsText(o election.Options) string {
	if len(o) == 0 {
		return ""
	}
	return "   options: " + o.String()
}

func quorumText(q election.QuorumMode) string {
	if q == election.Majority {
		return "with a majority quorum"
	}
	return "without a quorum"
}

// Header is the comment that opens a saved file: how it was found, so that
// anyone holding only the file can find it again.
func Header(o Options, sh Shrunk) string {
	lines := []string{
		"Found by `ringleader sim explore` and shrunk; run it with",
		"  ringleader run --backend sim FILE     (or --backend docker)",
		"which exits 0 exactly when the failure reproduces.",
		fmt.Sprintf("algorithm: %s   n: %d   quorum: %s%s   seed: %d", o.Algorithm, len(o.Members), o.Quorum.Text(), optionsText(o.Options), sh.Seed),
		fmt.Sprintf("commit: %s", commit()),
		fmt.Sprintf("checker: %s fails: %s", sh.Checker, oneLine(sh.Evidence)),
		fmt.Sprintf("shrunk from %d to %d steps (%d fault steps) in %d tries on %s%s", sh.From, sh.StepCount, sh.FaultSteps, sh.Tried, seedsText(sh), widenedText(sh)),
		"the unshrunk schedule: " + ReplayCommand(o, sh.Seed),
	}
	return strings.Join(lines, "\n")
}

func seedsText(sh Shrunk) string {
	if sh.Exhausted {
		return "the simulator (budget spent: maybe not minimal)"
	}
	return "every seed tried in the simulator"
}

func widenedText(sh Shrunk) string {
	if sh.WaitMargin > 0 {
		return fmt.Sprintf("; every wait then widened %g×, so a slower world still gets there", sh.WaitMargin)
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// commit is the VCS revision this binary was built from, as go build
// stamps it.
func commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown (not built from a git checkout with go build)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += " (with uncommitted changes)"
	}
	return rev
}

// CheckSave reports, before any schedule runs, whether the schedules of
// an exploration with o could be saved at all: it writes the scenario
// file Save would write for a one-step schedule and parses it back, so
// that every limit a scenario file has (scenario.MaxNodes, names, timing)
// is the scenario package's own, found before exploring and shrinking.
func CheckSave(o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	alg, err := election.Lookup(o.Algorithm)
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	checker := check.NoSplitBrain
	if c := claimed(alg, o.Quorum); len(c) > 0 {
		checker = c[0]
	}
	sh := Shrunk{Seed: o.Seed, Checker: checker, Steps: []scenario.Step{scenario.WaitStep(o.Quiet)}, StepCount: 1}
	data, err := scenario.Format(Scenario(o, sh), "")
	if err != nil {
		return fmt.Errorf("a shrunk schedule of this exploration cannot be saved as a scenario file: %w", err)
	}
	if _, err := scenario.Parse("schedule.yaml", data); err != nil {
		var es scenario.Errors
		if errors.As(err, &es) {
			parts := make([]string, len(es))
			for i, e := range es {
				parts[i] = e.Field + ": " + e.Msg
			}
			return fmt.Errorf("a shrunk schedule of this exploration cannot be saved as a scenario file (%s)", strings.Join(parts, "; "))
		}
		return fmt.Errorf("a shrunk schedule of this exploration cannot be saved as a scenario file: %w", err)
	}
	return nil
}

// Save writes sh as DIR/<algorithm>-<checker>-<seed>.yaml and returns the
// path. The file is parsed back before it is kept: a saved schedule is
// always a valid scenario.
func Save(o Options, sh Shrunk, dir string) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	sc := Scenario(o, sh)
	data, err := scenario.Format(sc, Header(o, sh))
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, sc.Name+".yaml")
	if _, err := scenario.Parse(path, data); err != nil {
		return "", fmt.Errorf("explore: the shrunk schedule does not read back as a scenario (a bug): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("explore: --save: %w", err)
	}
	err = outpath.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("explore: --save: %w", err)
	}
	return path, nil
}
