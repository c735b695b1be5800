package node

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/trust"
)

// testSecret stands in for the secret a harness run or `make up` makes.
const testSecret = "0123456789abcdef0123456789abcdef"

// env is an environment holding m, and the cluster secret unless m says
// otherwise (an empty value unsets it).
func env(m map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		if k == trust.SecretEnv {
			return testSecret
		}
		return ""
	}
}

func TestParseArgsDefaultsAndPeers(t *testing.T) {
	c, err := ParseArgs([]string{"--id", "2", "--peers", "1=node1,2=node2:7222,3=10.0.0.3", "--algorithm", testAlgorithm}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []Peer{{1, "node1", 6222}, {2, "node2", 7222}, {3, "10.0.0.3", 6222}}
	if len(c.Peers) != len(want) {
		t.Fatalf("peers %v, want %v", c.Peers, want)
	}
	for i := range want {
		if c.Peers[i] != want[i] {
			t.Fatalf("peers %v, want %v", c.Peers, want)
		}
	}
	if c.ID != 2 || c.Cluster != "ringleader" || c.ClientPort != 4222 || c.ClusterPort != 6222 ||
		c.ListenHost != "0.0.0.0" || c.StatusAddr != ":8080" || c.StateDir != "/var/lib/ringleader" ||
		c.Quorum != election.NoQuorum || c.Timing != election.DefaultTiming {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestFlagWinsOverEnvironment(t *testing.T) {
	e := env(map[string]string{"RINGLEADER_ID": "1", "RINGLEADER_PEERS": "1=a,2=b", "RINGLEADER_ALGORITHM": testAlgorithm, "RINGLEADER_SUSPICION": "900ms", "RINGLEADER_STATUS_ADDR": ""})
	c, err := ParseArgs([]string{"--suspicion", "700ms"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != 1 || c.Timing.Suspicion != 700*time.Millisecond || len(c.Peers) != 2 {
		t.Fatalf("got %+v", c)
	}
}

// TestBadValueNamesTheFlagOrVariable: each bad value is reported with the
// flag's name when it came from the command line, the variable's when it
// came from the environment, and says what would be valid.
func TestBadValueNamesTheFlagOrVariable(t *testing.T) {
	base := []string{"--id", "1", "--peers", "1=a,2=b", "--algorithm", testAlgorithm}
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		where string
		hint  string
	}{
		{"missing id", []string{"--peers", "1=a"}, nil, "--id", "positive integer"},
		{"zero id", []string{"--id", "0", "--peers", "1=a"}, nil, "--id", "positive integer"},
		{"id from env", nil, map[string]string{"RINGLEADER_ID": "x", "RINGLEADER_PEERS": "1=a"}, "RINGLEADER_ID", "positive integer"},
		{"missing peers", []string{"--id", "1"}, nil, "--peers", "ID=HOST"},
		{"peers without self", []string{"--id", "3", "--peers", "1=a,2=b"}, nil, "--peers", "3=HOST"},
		{"peer duplicate", []string{"--id", "1", "--peers", "1=a,1=b"}, nil, "--peers", "twice"},
		{"peer bad port", []string{"--id", "1", "--peers", "1=a:99999"}, nil, "--peers", "1-65535"},
		{"peer no host", []string{"--id", "1", "--peers", "1="}, nil, "--peers", "ID=HOST"},
		{"unknown algorithm", []string{"--id", "1", "--peers", "1=a", "--algorithm", "nope"}, nil, "--algorithm", testAlgorithm},
		{"bad quorum", append(base, "--quorum", "most"), nil, "--quorum", "none or majority"},
		{"quorum unsupported", append(base, "--quorum", "majority"), nil, "--quorum", "does not run with quorum majority"},
		{"bad heartbeat", append(base, "--heartbeat", "fast"), nil, "--heartbeat", "duration"},
		{"suspicion not above heartbeat", append(base, "--heartbeat", "1s", "--suspicion", "1s"), nil, "--suspicion", "longer"},
		{"suspicion from env", base, map[string]string{"RINGLEADER_SUSPICION": "-1s"}, "RINGLEADER_SUSPICION", "positive duration"},
		{"bad cluster", append(base, "--cluster", "a.b"), nil, "--cluster", "subject token"},
		{"bad client port", append(base, "--client-port", "0"), nil, "--client-port", "1-65535"},
		{"bad cluster port", append(base, "--cluster-port", "http"), nil, "--cluster-port", "1-65535"},
		{"bad nats url", append(base, "--nats-url", "localhost:4222"), nil, "--nats-url", "nats://"},
		{"bad status addr", append(base, "--status-addr", "8080"), nil, "--status-addr", "[HOST]:PORT"},
		{"empty state dir", append(base, "--state-dir", ""), nil, "--state-dir", "writable directory"},
		{"quiet log level", append(base, "--log-level", "warn"), nil, "--log-level", "info, debug or trace"},
		{"bad seed", append(base, "--seed", "-3"), nil, "--seed", "unsigned"},
		{"clock rate not a number", append(base, "--clock-rate", "fast"), nil, "--clock-rate", "not a number"},
		{"stopped clock from env", base, map[string]string{"RINGLEADER_CLOCK_RATE": "0"}, "RINGLEADER_CLOCK_RATE", "0.001 to 1000"},
		{"no secret", base, map[string]string{trust.SecretEnv: ""}, trust.SecretEnv, "required"},
		{"short secret", base, map[string]string{trust.SecretEnv: "hunter2"}, trust.SecretEnv, "16 to 256"},
		{"secret with a space", base, map[string]string{trust.SecretEnv: "correct horse battery staple"}, trust.SecretEnv, "printable ASCII"},
		{"missing secret file", append(base, "--secret-file", "/nonexistent/secret"), nil, "--secret-file", "no such file"},
		{"unknown flag", append(base, "--colour", "red"), nil, "flags", "colour"},
		{"stray argument", append(base, "extra"), nil, "arguments", "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseArgs(c.args, env(c.env), io.Discard)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err %v, want a *UsageError", err)
			}
			if ue.Name != c.where {
				t.Errorf("error names %q, want %q: %v", ue.Name, c.where, err)
			}
			if !strings.Contains(err.Error(), c.hint) {
				t.Errorf("error %q does not say %q", err, c.hint)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	var out strings.Builder
	_, err := ParseArgs([]string{"-h"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, s := range settings {
		if !strings.Contains(out.String(), s.env) {
			t.Errorf("usage does not mention %s", s.env)
		}
	}
}

// TestSecretComesFromTheEnvironmentOrAFile: the secret never travels as a
// flag (the process list would show it); a file wins over the variable, and
// a node on an external NATS server may go without one.
func TestSecretComesFromTheEnvironmentOrAFile(t *testing.T) {
	base := []string{"--id", "1", "--peers", "1=a,2=b", "--algorithm", testAlgorithm}
	c, err := ParseArgs(base, env(nil), io.Discard)
	if err != nil || c.Secret != testSecret {
		t.Fatalf("from the environment: secret %q, err %v", c.Secret, err)
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("file-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = ParseArgs(append(base, "--secret-file", file), env(nil), io.Discard)
	if err != nil || c.Secret != "file-secret-0123456789" {
		t.Fatalf("from a file: secret %q, err %v", c.Secret, err)
	}
	c, err = ParseArgs(append(base, "--nats-url", "nats://127.0.0.1:4222"), env(map[string]string{trust.SecretEnv: ""}), io.Discard)
	if err != nil || c.Secret != "" {
		t.Fatalf("external server without a secret: secret %q, err %v", c.Secret, err)
	}
	if s := trust.NewSecret(); trust.CheckSecret(s) != nil || s == trust.NewSecret() {
		t.Fatalf("NewSecret %q: %v (or two calls gave the same)", s, trust.CheckSecret(s))
	}
}

func TestPeersRoundTrip(t *testing.T) {
	in := "1=node1:6222,2=[::1]:7000,3=10.0.0.3:6222"
	p, err := ParsePeers(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatPeers(p); got != in {
		t.Fatalf("FormatPeers(ParsePeers(%q)) = %q", in, got)
	}
}

// optionsAlgorithm runs only with a majority and takes options: how a node
// reads --option, RINGLEADER_OPTIONS and a quorum left out.
const optionsAlgorithm = "test-node-options"

func init() {
	election.Register(election.Algorithm{
		Name: optionsAlgorithm, Title: "options stand-in (node tests only)", Topology: "complete",
		New:     newMaxAlive,
		Claims:  func(election.QuorumMode) []election.Property { return nil },
		Quorums: []election.QuorumMode{election.Majority},
		Options: []election.OptionSpec{
			{Name: "k", Kind: election.OptionInt, Default: "1"},
			{Name: "fast", Kind: election.OptionBool, Default: "false"},
		},
	})
}

// TestOptionsFromFlagsAndEnvironment: options resolve with the algorithm's
// defaults; repeated --option flags add up and replace the variable's
// list; a bad name or value names where it came from.
func TestOptionsFromFlagsAndEnvironment(t *testing.T) {
	base := []string{"--id", "1", "--peers", "1=a,2=b", "--algorithm", optionsAlgorithm}
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{base, nil, "fast=false,k=1"},
		{base, map[string]string{"RINGLEADER_OPTIONS": "k=2"}, "fast=false,k=2"},
		{append(base, "--option", "fast=1", "--option", "k=7"), map[string]string{"RINGLEADER_OPTIONS": "k=2"}, "fast=true,k=7"},
		{append(base, "--option", "fast=true"), map[string]string{"RINGLEADER_OPTIONS": "k=2"}, "fast=true,k=1"},
	}
	for _, c := range cases {
		cfg, err := ParseArgs(c.args, env(c.env), io.Discard)
		if err != nil {
			t.Fatalf("%v %v: %v", c.args, c.env, err)
		}
		if cfg.Options.String() != c.want || cfg.Quorum != election.Majority {
			t.Errorf("%v %v: options %q quorum %s, want %q majority", c.args, c.env, cfg.Options.String(), cfg.Quorum, c.want)
		}
	}
	bad := []struct {
		args        []string
		env         map[string]string
		where, hint string
	}{
		{append(base, "--option", "slow=1"), nil, "--option", `algorithm test-node-options has no option "slow" (options: k, fast)`},
		{base, map[string]string{"RINGLEADER_OPTIONS": "k=many"}, "RINGLEADER_OPTIONS", `option k (int): "many" is not an int`},
		{append(base, "--option", "k"), nil, "--option", "want NAME=VALUE"},
		{append(base, "--quorum", "none"), nil, "--quorum", "does not run with quorum none"},
	}
	for _, c := range bad {
		_, err := ParseArgs(c.args, env(c.env), io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Name != c.where || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("%v %v: %v, want a usage error at %s saying %q", c.args, c.env, err, c.where, c.hint)
		}
	}
}
