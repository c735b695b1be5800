package chaos

import (
	"fmt"
	"strings"
)

// KindsTable is the table of fault kinds the README and docs/scenarios.md
// hold, written from the descriptors (a test holds the docs equal to it):
// each kind's words, what it does, its values and targets, what ends it.
func KindsTable() string {
	var b strings.Builder
	b.WriteString("| fault | family | what it does | values | targets | ended by |\n|---|---|---|---|---|---|\n")
	for _, k := range kindList {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", k.Op, k.Family, k.Summary, paramsCell(k), targetsCell(k), endedByCell(k))
	}
	return b.String()
}

func paramsCell(k Kind) string {
	if k.Op == Partition {
		return "one of `groups`, `shape` (" + shapeList() + "), `cut`, `one-way`"
	}
	if len(k.Params) == 0 {
		return "—"
	}
	parts := make([]string, len(k.Params))
	for i, p := range k.Params {
		req := ""
		if p.Required {
			req = ", required"
		}
		parts[i] = fmt.Sprintf("`%s`%s: %s", p.Key, req, p.Help)
	}
	return strings.Join(parts, "; ")
}

func shapeList() string {
	parts := make([]string, len(Shapes))
	for i, s := range Shapes {
		parts[i] = "`" + string(s) + "`"
	}
	return strings.Join(parts, ", ")
}

func targetsCell(k Kind) string {
	switch {
	case k.Op == Partition:
		return "`isolate`: " + targetList(TargetsForShape(Isolate)) + "; `bridge`: " + targetList(TargetsForShape(Bridge))
	case len(k.Targets) == 0:
		return "—"
	}
	return targetList(k.Targets) + ", IDs"
}

func targetList(ts []TargetKind) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = "`" + string(t) + "`"
	}
	return strings.Join(parts, ", ")
}

func endedByCell(k Kind) string {
	if !k.IsSpan() {
		return "— (a moment)"
	}
	parts := make([]string, len(k.EndedBy))
	for i, op := range k.EndedBy {
		parts[i] = "`" + string(op) + "`"
	}
	s := strings.Join(parts, ", ")
	if k.Op == Clock {
		s += " with rate 1"
	}
	return s
}
