package scenario

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// WordsUsage is the fault language spelt as command-line words, for help
// texts: `ringleader fault` takes exactly these. The lines of the kinds
// that take targets come from their descriptors (chaos.Kind).
var WordsUsage = wordsUsage()

func wordsUsage() string {
	var b strings.Builder
	line := func(words, what string) {
		if len(words) > 29 {
			fmt.Fprintf(&b, "  %s\n  %-29s  %s\n", words, "", what)
			return
		}
		fmt.Fprintf(&b, "  %-29s  %s\n", words, what)
	}
	for _, k := range chaos.Kinds() {
		switch {
		case k.Op == chaos.Partition:
			line("partition 1,2,3 4,5", "explicit groups (two or more)")
			line("partition halves|majorities-ring", "a named shape")
			line("partition engines", "every node on one engine cut from every node on another")
			line("partition bridge [TARGET]", "two sides sharing one node (TARGET: leader, follower, one, or an ID)")
			line("isolate TARGET", "the target alone against the rest")
			line("cut A B [--one-way]", "cut the link A–B (--one-way: only A → B)")
		case len(k.Targets) == 0:
			line(string(k.Op), k.Summary)
		default:
			line(kindWords(k), k.Summary+"; TARGET: "+targetWords(k))
			for _, pr := range k.Params {
				name := pr.Name()
				if pr.Flag != "" {
					name = "--" + pr.Flag + " " + pr.Name()
				}
				line("    "+name, pr.Help)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// kindWords is a kind's synopsis: loss PERCENT [TARGET], clock TARGET
// [--rate VALUE] [--jump VALUE].
func kindWords(k chaos.Kind) string {
	w := []string{string(k.Op)}
	for _, pr := range k.Params {
		if pr.Flag == "" {
			w = append(w, pr.Name())
		}
	}
	if k.WordsTarget != "" {
		w = append(w, "[TARGET]")
	} else {
		w = append(w, "TARGET")
	}
	for _, pr := range k.Params {
		if pr.Flag != "" {
			w = append(w, fmt.Sprintf("[--%s %s]", pr.Flag, pr.Name()))
		}
	}
	return strings.Join(w, " ")
}

func targetWords(k chaos.Kind) string {
	parts := make([]string, 0, len(k.Targets)+1)
	for _, t := range k.Targets {
		parts = append(parts, string(t))
	}
	s := strings.Join(parts, ", ") + ", or IDs (5 or 1,2)"
	if k.WordsTarget != "" {
		s += "; default " + string(k.WordsTarget)
	}
	return s
}

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
	k, isKind := chaos.KindOf(chaos.Op(op))
	oneWay := false
	flags := map[string]string{} // a parameter's flag -> its value word
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--one-way" && op == "cut" {
			oneWay = true
			continue
		}
		if !strings.HasPrefix(a, "-") || (isNumberWord(a) && isKind && len(k.Params) > 0) {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		pr, ok := flagParam(k, name)
		if !isKind || !ok {
			return "", fmt.Errorf("%s: unknown flag %q", op, a)
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s: %s needs a value", op, a)
			}
			value = args[i+1]
			i++
		}
		if _, dup := flags[pr.Flag]; dup {
			return "", fmt.Errorf("%s: --%s given twice", op, pr.Flag)
		}
		flags[pr.Flag] = value
	}
	switch {
	case op == string(chaos.Heal):
		if len(rest) != 0 {
			return "", fmt.Errorf("%s takes nothing, got %d word(s)", op, len(rest))
		}
		return "heal", nil
	case op == string(chaos.Partition):
		return partitionYAML(rest)
	case op == "isolate":
		for _, w := range rest {
			if err := checkTargetWord(op, w); err != nil {
				return "", err
			}
		}
		if len(rest) != 1 {
			return "", fmt.Errorf("%s takes one TARGET, got %d word(s)", op, len(rest))
		}
		if err := checkTargetWord(op, rest[0]); err != nil {
			return "", err
		}
		return fmt.Sprintf("partition: {shape: isolate, target: %s}", target(rest[0])), nil
	case op == "cut":
		if len(rest) != 2 {
			return "", fmt.Errorf("%s takes two node IDs, A B, got %d word(s)", op, len(rest))
		}
		for _, w := range rest {
			if !idsWord.MatchString(w) {
				return "", fmt.Errorf("cut: %q is not a node ID", w)
			}
		}
		form := "cut"
		if oneWay {
			form = "one-way"
		}
		return fmt.Sprintf("partition: {%s: [%s, %s]}", form, rest[0], rest[1]), nil
	case isKind && len(k.Targets) > 0:
		return kindYAML(k, rest, flags)
	}
	return "", fmt.Errorf("unknown fault %q; one of:\n%s", op, WordsUsage)
}

// isNumberWord reports whether w is a (possibly negative) number or
// duration: a value, not a flag (clock 3 --jump -500ms).
func isNumberWord(w string) bool { return len(w) > 1 && w[0] == '-' && w[1] >= '0' && w[1] <= '9' }

// flagParam is k's parameter taken as --name.
func flagParam(k chaos.Kind, name string) (chaos.Param, bool) {
	for _, pr := range k.Params {
		if pr.Flag != "" && pr.Flag == name {
			return pr, true
		}
	}
	return chaos.Param{}, false
}

// kindYAML spells a fault kind's words from its descriptor: the values
// taken as words first (loss PERCENT), then the target (optional where
// the kind has a default for the command line), then the flags.
func kindYAML(k chaos.Kind, rest []string, flags map[string]string) (string, error) {
	op := string(k.Op)
	var positional []chaos.Param
	for _, pr := range k.Params {
		if pr.Flag == "" {
			positional = append(positional, pr)
		}
	}
	min, max := len(positional), len(positional)+1
	if k.WordsTarget == "" {
		min++
	}
	if len(rest) < min || len(rest) > max {
		return "", fmt.Errorf("%s takes %s, got %d word(s)", op, wordsShape(k, positional), len(rest))
	}
	var sp chaos.Spec
	fields := []string{}
	for i, pr := range positional {
		v, err := valueText(op, pr, rest[i], &sp)
		if err != nil {
			return "", err
		}
		fields = append(fields, pr.Key+": "+v)
	}
	t := string(k.WordsTarget)
	if len(rest) > len(positional) {
		w := rest[len(positional)]
		if err := checkTargetWord(op, w); err != nil {
			return "", err
		}
		t = target(w)
	}
	if len(k.Params) == 0 {
		return fmt.Sprintf("%s: %s", op, t), nil
	}
	fields = append(fields, "target: "+t)
	for _, pr := range k.Params {
		w, ok := flags[pr.Flag]
		if pr.Flag == "" || !ok {
			continue
		}
		v, err := valueText(op+" --"+pr.Flag, pr, w, &sp)
		if err != nil {
			return "", err
		}
		fields = append(fields, pr.Key+": "+v)
	}
	return fmt.Sprintf("%s: {%s}", op, strings.Join(fields, ", ")), nil
}

// valueText reads a value word as its parameter does and spells it as a
// scenario file would: nothing the person typed reaches the YAML as is.
func valueText(what string, pr chaos.Param, w string, sp *chaos.Spec) (string, error) {
	if err := pr.Parse(w, sp); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return pr.Text(*sp), nil
}

// wordsShape says what words a kind takes, for errors.
func wordsShape(k chaos.Kind, positional []chaos.Param) string {
	var parts []string
	for _, pr := range positional {
		parts = append(parts, pr.Name())
	}
	switch {
	case k.WordsTarget != "" && len(parts) > 0:
		return strings.Join(parts, " ") + " and an optional TARGET"
	case k.WordsTarget != "":
		return "an optional TARGET"
	case len(parts) > 0:
		return strings.Join(parts, " ") + " and one TARGET"
	}
	return "one TARGET"
}

func checkTargetWord(op, w string) error {
	if !targetWord.MatchString(w) {
		return fmt.Errorf("%s: %q is neither a target name nor node IDs (5 or 1,2)", op, w)
	}
	return nil
}

func partitionYAML(rest []string) (string, error) {
	if len(rest) == 0 {
		return "", fmt.Errorf("partition takes groups (1,2,3 4,5) or a shape (%s)", shapeNames(", "))
	}
	switch sh := chaos.Shape(rest[0]); sh {
	case chaos.Halves, chaos.MajoritiesRing, chaos.Engines:
		if len(rest) != 1 {
			return "", fmt.Errorf("partition %s takes nothing more", sh)
		}
		return fmt.Sprintf("partition: {shape: %s}", sh), nil
	case chaos.Bridge, chaos.Isolate:
		switch {
		case len(rest) == 1 && sh == chaos.Bridge:
			return "partition: {shape: bridge}", nil
		case len(rest) == 2:
			if err := checkTargetWord("partition "+string(sh), rest[1]); err != nil {
				return "", err
			}
			return fmt.Sprintf("partition: {shape: %s, target: %s}", sh, target(rest[1])), nil
		}
		return "", fmt.Errorf("partition %s takes one TARGET", sh)
	}
	groups := make([]string, len(rest))
	for i, g := range rest {
		if !idsWord.MatchString(g) {
			return "", fmt.Errorf("partition: %q is not a group of node IDs like 1,2,3 (or a shape: %s)", g, shapeNames(", "))
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
