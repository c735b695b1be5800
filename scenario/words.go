package scenario

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// WordsUsage is the fault language spelt as command-line words, for help
// texts: `ringleader fault` takes exactly these.
const WordsUsage = `  kill|stop|pause TARGET        TARGET: leader, follower, one, minority, majority, all, or IDs (5 or 1,2)
  restart TARGET                 TARGET: down, one, all, or IDs
  resume TARGET                  TARGET: paused, one, all, or IDs
  partition 1,2,3 4,5            explicit groups (two or more)
  partition halves|majorities-ring
  partition bridge [TARGET]      two sides sharing one node (TARGET: leader, follower, one, or an ID)
  isolate TARGET                 the target alone against the rest
  cut A B [--one-way]            cut the link A–B (--one-way: only A → B)
  loss PERCENT [TARGET]          drop PERCENT (1–100, 0 removes) of the target's packets; TARGET defaults to all
  delay DURATION [TARGET] [--jitter DURATION]
                                 add latency (100ms; 0 removes) to the target's packets; TARGET defaults to all
  heal                           remove every cut, loss and delay`

var (
	targetWord = regexp.MustCompile(`^([a-z][a-z-]*|[0-9]+(,[0-9]+)*)$`)
	idsWord    = regexp.MustCompile(`^[0-9]+(,[0-9]+)*$`)
)

// ParseWords reads one fault written as command-line words (WordsUsage)
// into the step a scenario file would hold, checked against members by the
// scenario parser itself: `kill leader` means exactly what `- kill: leader`
// means.
func ParseWords(words []string, members []election.NodeID) (Step, error) {
	text, err := wordsYAML(words)
	if err != nil {
		return Step{}, err
	}
	st, err := ParseStep(strings.Join(words, " "), text, members)
	if err != nil {
		// The parser's errors name a YAML field; the words are what
		// the person typed, so say it in those.
		if es, ok := err.(Errors); ok && len(es) > 0 {
			return Step{}, fmt.Errorf("%s: %s", strings.Join(words, " "), es[0].Msg)
		}
		return Step{}, err
	}
	return st, nil
}

// wordsYAML spells the words as a YAML step. Every word is checked to be a
// plain target, number or duration first, so none can smuggle YAML in.
func wordsYAML(words []string) (string, error) {
	if len(words) == 0 {
		return "", fmt.Errorf("no fault given; one of:\n%s", WordsUsage)
	}
	op, args := words[0], words[1:]
	oneWay := false
	var jitter string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--one-way" && op == "cut":
			oneWay = true
		case (a == "--jitter" || a == "-jitter") && op == "delay" && i+1 < len(args):
			jitter = args[i+1]
			i++
		case strings.HasPrefix(a, "--jitter=") && op == "delay":
			jitter = strings.TrimPrefix(a, "--jitter=")
		case strings.HasPrefix(a, "-"):
			return "", fmt.Errorf("%s: unknown flag %q", op, a)
		default:
			rest = append(rest, a)
		}
	}
	for _, a := range rest {
		if !targetWord.MatchString(a) && !(op == "loss" || op == "delay") {
			return "", fmt.Errorf("%s: %q is neither a target name nor node IDs (5 or 1,2)", op, a)
		}
	}
	need := func(min, max int, what string) error {
		if len(rest) < min || len(rest) > max {
			return fmt.Errorf("%s takes %s, got %d word(s)", op, what, len(rest))
		}
		return nil
	}
	switch chaos.Op(op) {
	case chaos.Kill, chaos.Stop, chaos.Pause, chaos.Restart, chaos.Resume:
		if err := need(1, 1, "one TARGET"); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: %s", op, target(rest[0])), nil
	case chaos.Heal:
		if err := need(0, 0, "nothing"); err != nil {
			return "", err
		}
		return "heal", nil
	case chaos.Partition:
		return partitionYAML(rest)
	case "isolate":
		if err := need(1, 1, "one TARGET"); err != nil {
			return "", err
		}
		return fmt.Sprintf("partition: {shape: isolate, target: %s}", target(rest[0])), nil
	case "cut":
		if err := need(2, 2, "two node IDs, A B"); err != nil {
			return "", err
		}
		form := "cut"
		if oneWay {
			form = "one-way"
		}
		return fmt.Sprintf("partition: {%s: [%s, %s]}", form, rest[0], rest[1]), nil
	case chaos.Loss:
		if err := need(1, 2, "PERCENT and an optional TARGET"); err != nil {
			return "", err
		}
		pct := strings.TrimSuffix(rest[0], "%")
		if !regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`).MatchString(pct) {
			return "", fmt.Errorf("loss: %q is not a percentage (10 or 10%%)", rest[0])
		}
		return fmt.Sprintf("loss: {percent: %s, target: %s}", pct, optionalTarget(rest[1:])), nil
	case chaos.Delay:
		if err := need(1, 2, "DURATION and an optional TARGET"); err != nil {
			return "", err
		}
		ms, err := millisWord(rest[0])
		if err != nil {
			return "", fmt.Errorf("delay: %w", err)
		}
		y := fmt.Sprintf("delay: {ms: %d, target: %s", ms, optionalTarget(rest[1:]))
		if jitter != "" {
			j, err := millisWord(jitter)
			if err != nil {
				return "", fmt.Errorf("delay --jitter: %w", err)
			}
			y += fmt.Sprintf(", jitter_ms: %d", j)
		}
		return y + "}", nil
	}
	return "", fmt.Errorf("unknown fault %q; one of:\n%s", op, WordsUsage)
}

func partitionYAML(rest []string) (string, error) {
	if len(rest) == 0 {
		return "", fmt.Errorf("partition takes groups (1,2,3 4,5) or a shape (%s)", "halves, majorities-ring, bridge, isolate")
	}
	switch sh := chaos.Shape(rest[0]); sh {
	case chaos.Halves, chaos.MajoritiesRing:
		if len(rest) != 1 {
			return "", fmt.Errorf("partition %s takes nothing more", sh)
		}
		return fmt.Sprintf("partition: {shape: %s}", sh), nil
	case chaos.Bridge, chaos.Isolate:
		switch {
		case len(rest) == 1 && sh == chaos.Bridge:
			return "partition: {shape: bridge}", nil
		case len(rest) == 2:
			return fmt.Sprintf("partition: {shape: %s, target: %s}", sh, target(rest[1])), nil
		}
		return "", fmt.Errorf("partition %s takes one TARGET", sh)
	}
	groups := make([]string, len(rest))
	for i, g := range rest {
		if !idsWord.MatchString(g) {
			return "", fmt.Errorf("partition: %q is not a group of node IDs like 1,2,3 (or a shape: halves, majorities-ring, bridge, isolate)", g)
		}
		groups[i] = "[" + g + "]"
	}
	return fmt.Sprintf("partition: {groups: [%s]}", strings.Join(groups, ", ")), nil
}

// target spells a target word: IDs as a list, names as they are.
func target(w string) string {
	if idsWord.MatchString(w) {
		return "[" + w + "]"
	}
	return w
}

func optionalTarget(rest []string) string {
	if len(rest) == 0 {
		return string(chaos.TargetAll)
	}
	return target(rest[0])
}

// millisWord reads a duration word: 100ms, 1.5s, or a bare number of
// milliseconds.
func millisWord(w string) (int64, error) {
	if regexp.MustCompile(`^[0-9]+$`).MatchString(w) {
		var ms int64
		fmt.Sscan(w, &ms)
		return ms, nil
	}
	d, err := time.ParseDuration(w)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (100ms, 1.5s, or milliseconds)", w)
	}
	return d.Milliseconds(), nil
}
