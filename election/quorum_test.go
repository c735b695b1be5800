package election

import (
	"strings"
	"testing"
)

func TestQuorumModeReadsAndWritesAsPeopleWriteIt(t *testing.T) {
	for in, want := range map[string]QuorumMode{"": QuorumDefault, "none": NoQuorum, "majority": Majority} {
		got, err := ParseQuorum(in)
		if err != nil || got != want {
			t.Errorf("ParseQuorum(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseQuorum("most"); err == nil {
		t.Error(`ParseQuorum("most") accepted`)
	}
	if NoQuorum.String() != "none" || Majority.String() != "majority" || QuorumDefault.Text() != "default" {
		t.Errorf("String: %q, %q; Text of unset %q", NoQuorum.String(), Majority.String(), QuorumDefault.Text())
	}
}

// TestNotGivenIsNotNone: an unset mode takes the algorithm's default, which
// need not be none; a mode it does not run in is refused with its reason
// and the modes it does run in.
func TestNotGivenIsNotNone(t *testing.T) {
	both := Algorithm{Name: "both", Quorums: []QuorumMode{NoQuorum, Majority}}
	plain := Algorithm{Name: "plain"}
	majOnly := Algorithm{Name: "maj", Quorums: []QuorumMode{Majority}, QuorumWhy: "a leader needs a majority's votes"}
	for _, a := range []*Algorithm{&both, &plain, &majOnly} {
		if err := a.complete(); err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
	}
	cases := []struct {
		a    Algorithm
		in   QuorumMode
		want QuorumMode
		err  string
	}{
		{both, QuorumDefault, NoQuorum, ""},
		{both, Majority, Majority, ""},
		{plain, QuorumDefault, NoQuorum, ""},
		{plain, Majority, "", "algorithm plain does not run with quorum majority (it runs with none)"},
		{majOnly, QuorumDefault, Majority, ""},
		{majOnly, NoQuorum, "", "algorithm maj does not run with quorum none: a leader needs a majority's votes (it runs with majority)"},
	}
	for _, c := range cases {
		got, err := c.a.ResolveQuorum(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s with %s: err %v, want %q", c.a.Name, c.in.Text(), err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s with %s: %s, %v; want %s", c.a.Name, c.in.Text(), got, err, c.want)
		}
	}
	if got := majOnly.QuorumModes(); got != "majority (default)" {
		t.Errorf("QuorumModes = %q", got)
	}
}

// TestRegistrationMustHoldTogether: a default outside the modes, or an
// option whose default is not of its kind, is refused at registration.
func TestRegistrationMustHoldTogether(t *testing.T) {
	bad := []struct {
		a    Algorithm
		want string
	}{
		{Algorithm{Name: "x", Quorums: []QuorumMode{Majority}, DefaultQuorum: NoQuorum}, "default quorum none is not among its modes majority"},
		{Algorithm{Name: "x", Quorums: []QuorumMode{"most"}}, `quorum mode "most"`},
		{Algorithm{Name: "x", Options: []OptionSpec{{Name: "n", Kind: OptionInt, Default: "many"}}}, `option n: default "many" is not an int`},
		{Algorithm{Name: "x", Options: []OptionSpec{{Name: "a", Kind: OptionBool, Default: "true"}, {Name: "a", Kind: OptionBool, Default: "false"}}}, "option a declared twice"},
		{Algorithm{Name: "x", Options: []OptionSpec{{Name: "a=b", Kind: OptionBool, Default: "true"}}}, `option name "a=b"`},
	}
	for _, c := range bad {
		if err := c.a.complete(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.a, err, c.want)
		}
	}
}

// TestOptionsResolve: given options are checked by name and kind and
// written canonically; the rest take their defaults.
func TestOptionsResolve(t *testing.T) {
	a := Algorithm{Name: "opt", Options: []OptionSpec{
		{Name: "prevote", Kind: OptionBool, Default: "true"},
		{Name: "ticks", Kind: OptionInt, Default: "10"},
		{Name: "lease", Kind: OptionDuration, Default: "300ms"},
		{Name: "mode", Kind: OptionString, Default: "fast"},
	}}
	if err := a.complete(); err != nil {
		t.Fatal(err)
	}
	got, err := a.ResolveOptions(Options{"prevote": "F", "lease": "1500ms"})
	if err != nil {
		t.Fatal(err)
	}
	want := "lease=1.5s,mode=fast,prevote=false,ticks=10"
	if got.String() != want {
		t.Errorf("resolved %q, want %q", got.String(), want)
	}
	if got.Bool("prevote") || got.Int("ticks") != 10 || got.Duration("lease").Milliseconds() != 1500 || got.Text("mode") != "fast" {
		t.Errorf("typed reads of %v wrong", got)
	}
	if again, err := a.ResolveOptions(got); err != nil || again.String() != want {
		t.Errorf("resolving twice gave %q, %v", again.String(), err)
	}
	for given, msg := range map[string]string{
		"speed=3":    `algorithm opt has no option "speed" (options: prevote, ticks, lease, mode)`,
		"ticks=ten":  `algorithm opt option ticks (int): "ten" is not an int`,
		"lease=soon": `algorithm opt option lease (duration): "soon" is not a duration`,
	} {
		o, err := ParseOptions(given)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.ResolveOptions(o); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", given, err, msg)
		}
	}
	none := Algorithm{Name: "bare"}
	if _, err := none.ResolveOptions(Options{"x": "1"}); err == nil || !strings.Contains(err.Error(), "it takes none") {
		t.Errorf("an option for an algorithm without options: %v", err)
	}
	if o, err := none.ResolveOptions(nil); err != nil || o != nil {
		t.Errorf("no options resolved to %v, %v; want nil", o, err)
	}
	for _, s := range []string{"a", "=1", "a=1,a=2"} {
		if _, err := ParseOptions(s); err == nil {
			t.Errorf("ParseOptions(%q) accepted", s)
		}
	}
}
