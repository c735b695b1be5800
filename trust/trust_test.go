package trust

import (
	"strings"
	"testing"
)

func TestNewSecretsAreValidAndFresh(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s := NewSecret()
		if err := CheckSecret(s); err != nil {
			t.Fatalf("NewSecret gave %q: %v", s, err)
		}
		if seen[s] {
			t.Fatalf("NewSecret repeated %q", s)
		}
		seen[s] = true
	}
}

func TestCheckSecretSaysWhatIsWrong(t *testing.T) {
	for s, want := range map[string]string{
		"short":                        "want 16 to 256",
		strings.Repeat("x", 257):       "want 16 to 256",
		"correct horse battery staple": "printable ASCII",
		"tab\there-0123456789":         "offset 3",
		"naïve-secret-0123456789":      "printable ASCII",
	} {
		err := CheckSecret(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSecret(%.20q) = %v, want it to say %q", s, err, want)
		}
	}
}
