package conformance

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAFailureMessageIsBoundedOnARuneBoundary: a program's failure can
// quote 16 KiB of its stderr; the recorded message keeps MaxMessage bytes,
// never half a character, and says how much was cut.
func TestAFailureMessageIsBoundedOnARuneBoundary(t *testing.T) {
	short := "leader 1 killed: new leader 2"
	if got := bound(short); got != short {
		t.Errorf("bound(%q) = %q, want it unchanged", short, got)
	}
	long := strings.Repeat("é", MaxMessage) // two bytes each
	got := bound(long)
	kept, _, ok := strings.Cut(got, "…")
	if !ok || len(kept) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "(2048 bytes more)") {
		t.Errorf("bound of %d bytes kept %d bytes, valid UTF-8 %v, ends %q; want at most %d bytes, whole runes and the count cut",
			len(long), len(kept), utf8.ValidString(got), got[max(0, len(got)-30):], MaxMessage)
	}
}
