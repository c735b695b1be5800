package compare

import (
	"fmt"
	"os"
	"strings"
)

// SystemsBlock names the block of docs/systems.md that `ringleader compare
// --backend docker --systems --write docs/systems.md` rewrites.
const SystemsBlock = "systems-compare"

// WriteBlock replaces, in the file at path, the text between the marker
// lines "<!-- name: generated ... -->" and "<!-- name: end -->" with text,
// keeping the markers; a file without both is an error naming them.
func WriteBlock(path, name, text string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(raw)
	begin, end := "<!-- "+name+": generated", "<!-- "+name+": end -->"
	i := strings.Index(doc, begin)
	if i < 0 {
		return fmt.Errorf("%s: no line starting %q to write the table after", path, begin)
	}
	nl := strings.IndexByte(doc[i:], '\n')
	j := strings.Index(doc, end)
	if nl < 0 || j < i+nl {
		return fmt.Errorf("%s: no line %q after %q", path, end, begin)
	}
	return os.WriteFile(path, []byte(doc[:i+nl+1]+text+doc[j:]), 0o644)
}
