// Package engine decides which Docker engine ringleader talks to, once and
// for every caller: the docker backend, testcontainers under it, `ringleader
// clean`, `watch`, `reap` and the tests' gate. When the environment names an
// engine (DOCKER_HOST, DOCKER_CONTEXT, or the Docker CLI's current context)
// that engine is used or the caller fails naming it; nothing falls back to
// another socket, so a command never acts on an engine the user did not
// mean.
//
// It needs only the engine client, so that the node image (built with
// -tags nodeimage, where `ringleader reap` runs) can carry it.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// Engine is one resolved engine: where it is and what named it.
type Engine struct {
	// Host is the engine's address, as DOCKER_HOST spells it
	// (unix:///var/run/docker.sock, tcp://host:2376).
	Host string
	// Source says what named it: "DOCKER_HOST", `context "NAME"` or
	// "the default socket".
	Source string
	// TLSDir holds ca.pem, cert.pem and key.pem when a context gives TLS
	// material (empty otherwise).
	TLSDir string
}

func (e Engine) String() string { return e.Host + " (" + e.Source + ")" }

// Resolve finds the engine the way the Docker CLI does: DOCKER_HOST first,
// then the context DOCKER_CONTEXT names, then the current context of the
// CLI's config file (DOCKER_CONFIG, default ~/.docker), then the default
// socket. A context that is named but cannot be read is an error, not a
// reason to try the next.
func Resolve() (Engine, error) {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return Engine{Host: h, Source: "DOCKER_HOST"}, nil
	}
	dir := configDir()
	name, from := os.Getenv("DOCKER_CONTEXT"), "DOCKER_CONTEXT"
	if name == "" {
		cur, err := currentContext(dir)
		if err != nil {
			return Engine{}, err
		}
		name, from = cur, filepath.Join(dir, "config.json")
	}
	if name == "" || name == "default" {
		return Engine{Host: client.DefaultDockerHost, Source: "the default socket"}, nil
	}
	return fromContext(dir, name, from)
}

func configDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".docker"
	}
	return filepath.Join(home, ".docker")
}

// currentContext reads currentContext from the CLI's config.json; no file
// means no context.
func currentContext(dir string) (string, error) {
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("docker engine: read %s: %w", path, err)
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("docker engine: %s: %w", path, err)
	}
	return cfg.CurrentContext, nil
}

// fromContext reads a context's docker endpoint from the CLI's context
// store: contexts/meta/<sha256 of the name>/meta.json, TLS files under
// contexts/tls/<same>/docker.
func fromContext(dir, name, from string) (Engine, error) {
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	path := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return Engine{}, fmt.Errorf("docker engine: context %q (named by %s): %w", name, from, err)
	}
	var meta struct {
		Endpoints map[string]struct {
			Host string `json:"Host"`
		} `json:"Endpoints"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return Engine{}, fmt.Errorf("docker engine: context %q: %s: %w", name, path, err)
	}
	host := meta.Endpoints["docker"].Host
	if host == "" {
		return Engine{}, fmt.Errorf("docker engine: context %q (named by %s) has no docker endpoint in %s", name, from, path)
	}
	e := Engine{Host: host, Source: fmt.Sprintf("context %q", name)}
	tls := filepath.Join(dir, "contexts", "tls", id, "docker")
	if _, err := os.Stat(filepath.Join(tls, "ca.pem")); err == nil {
		e.TLSDir = tls
	}
	return e, nil
}

// Options are the client options that dial exactly e.
func (e Engine) Options() []client.Opt {
	opts := []client.Opt{client.FromEnv, client.WithHost(e.Host)}
	if e.TLSDir != "" {
		opts = append(opts, client.WithTLSClientConfig(
			filepath.Join(e.TLSDir, "ca.pem"), filepath.Join(e.TLSDir, "cert.pem"), filepath.Join(e.TLSDir, "key.pem")))
	}
	return opts
}

// Client returns a client of e (it does not dial yet).
func (e Engine) Client() (*client.Client, error) {
	c, err := client.New(e.Options()...)
	if err != nil {
		return nil, fmt.Errorf("docker engine at %s: %v (%s)", e.Host, err, e.Source)
	}
	return c, nil
}

// pingTimeout bounds how long Ping waits for an answer.
const pingTimeout = 5 * time.Second

// Ping asks e whether it answers; its error names the engine, the cause
// in a few words and what named it:
// "docker engine at tcp://127.0.0.1:1: connection refused (DOCKER_HOST)".
func (e Engine) Ping(ctx context.Context) error {
	c, err := e.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := c.Ping(ctx, client.PingOptions{}); err != nil {
		if client.IsErrConnectionFailed(err) {
			// The client keeps only "Cannot connect…": dial once more
			// to learn why (refused, no such socket, no permission).
			err = errors.Join(err, dial(e.Host))
		}
		return fmt.Errorf("docker engine at %s: %s (%s)", e.Host, cause(err), e.Source)
	}
	return nil
}

// cause is the shortest honest account of a failed ping: the system
// call's error (connection refused, no such file or directory, permission
// denied) when there is one, else the client's own message.
func cause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer in %v", pingTimeout)
	}
	return err.Error()
}

// dial connects to host's socket as the client would, to find why the
// client could not; nil when it can.
func dial(host string) error {
	u, err := url.Parse(host)
	if err != nil {
		return err
	}
	network, addr := u.Scheme, u.Host
	switch u.Scheme {
	case "unix":
		addr = u.Path
	case "tcp", "http", "https":
		network = "tcp"
	default:
		return nil
	}
	c, err := net.DialTimeout(network, addr, pingTimeout)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// Connect resolves the engine and pings it: the one call every command
// makes before it touches an engine.
func Connect(ctx context.Context) (Engine, error) {
	e, err := Resolve()
	if err != nil {
		return Engine{}, err
	}
	return e, e.Ping(ctx)
}

// Pin makes e the engine of every library in this process that finds its
// own (testcontainers reads DOCKER_HOST, then its own fallbacks): it sets
// DOCKER_HOST, and for a context with TLS material DOCKER_CERT_PATH and
// DOCKER_TLS_VERIFY, to e's. Callers still check the client they get
// (testcontainers may prefer tc.host from ~/.testcontainers.properties).
func (e Engine) Pin() {
	os.Setenv("DOCKER_HOST", e.Host)
	if e.TLSDir != "" {
		os.Setenv("DOCKER_CERT_PATH", e.TLSDir)
		os.Setenv("DOCKER_TLS_VERIFY", "1")
	}
}
