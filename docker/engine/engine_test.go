package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"
)

// writeContext puts a context named name with docker endpoint host into
// the store under dir, as `docker context create` does.
func writeContext(t *testing.T, dir, name, host string) {
	t.Helper()
	sum := sha256.Sum256([]byte(name))
	meta := filepath.Join(dir, "contexts", "meta", hex.EncodeToString(sum[:]))
	if err := os.MkdirAll(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"Name":"` + name + `","Metadata":{},"Endpoints":{"docker":{"Host":"` + host + `","SkipTLSVerify":false}}}`
	if err := os.WriteFile(filepath.Join(meta, "meta.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveFollowsTheDockerCLIsOrder(t *testing.T) {
	dir := t.TempDir()
	writeContext(t, dir, "remote", "tcp://10.1.2.3:2375")
	writeContext(t, dir, "other", "unix:///run/other.sock")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"currentContext":"other"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                  string
		host, context, config string
		wantHost, wantSource  string
	}{
		{"DOCKER_HOST beats every context", "tcp://127.0.0.1:1", "remote", dir, "tcp://127.0.0.1:1", "DOCKER_HOST"},
		{"DOCKER_CONTEXT beats the config's", "", "remote", dir, "tcp://10.1.2.3:2375", `context "remote"`},
		{"the config's current context", "", "", dir, "unix:///run/other.sock", `context "other"`},
		{"context default is the default socket", "", "default", dir, client.DefaultDockerHost, "the default socket"},
		{"no config: the default socket", "", "", t.TempDir(), client.DefaultDockerHost, "the default socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DOCKER_HOST", tc.host)
			t.Setenv("DOCKER_CONTEXT", tc.context)
			t.Setenv("DOCKER_CONFIG", tc.config)
			e, err := Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if e.Host != tc.wantHost || e.Source != tc.wantSource {
				t.Errorf("Resolve() = %s from %s, want %s from %s", e.Host, e.Source, tc.wantHost, tc.wantSource)
			}
		})
	}
}

func TestResolveNamedContextMissingIsAnError(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	t.Setenv("DOCKER_CONTEXT", "gone")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	_, err := Resolve()
	if err == nil || !strings.Contains(err.Error(), `context "gone" (named by DOCKER_CONTEXT)`) {
		t.Fatalf("Resolve() error = %v, want one naming the context and DOCKER_CONTEXT", err)
	}
}

// TestPingNamesTheEngineAndCause: an engine that refuses, and a socket
// that does not exist, each fail naming the address, the cause and what
// named it.
func TestPingNamesTheEngineAndCause(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "tcp://" + l.Addr().String()
	l.Close() // nobody listens there now: the dial is refused
	for _, tc := range []struct {
		e    Engine
		want string
	}{
		{Engine{Host: refused, Source: "DOCKER_HOST"}, "docker engine at " + refused + ": connection refused (DOCKER_HOST)"},
		{Engine{Host: "unix:///nonexistent/docker.sock", Source: `context "x"`}, `docker engine at unix:///nonexistent/docker.sock: no such file or directory (context "x")`},
	} {
		err := tc.e.Ping(context.Background())
		if err == nil || err.Error() != tc.want {
			t.Errorf("Ping(%s) = %v, want %q", tc.e.Host, err, tc.want)
		}
	}
}
