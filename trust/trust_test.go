package trust

import (
	"os"
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

// TestReadSecretPrefersTheFile: a named file wins over the variable, and
// its trailing newline is not part of the secret.
func TestReadSecretPrefersTheFile(t *testing.T) {
	env := func(k string) string {
		if k == SecretEnv {
			return "from-the-environment-0123"
		}
		return ""
	}
	if s, err := ReadSecret("", env); err != nil || s != "from-the-environment-0123" {
		t.Fatalf("from the environment: %q %v", s, err)
	}
	f := t.TempDir() + "/secret"
	if err := os.WriteFile(f, []byte("from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSecret(f, env); err != nil || s != "from-the-file-0123456789" {
		t.Fatalf("from a file: %q %v", s, err)
	}
	if _, err := ReadSecret(f+".missing", env); err == nil {
		t.Fatal("a missing file read as a secret")
	}
}
