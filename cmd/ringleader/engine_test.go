//go:build !nodeimage

package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ringleaderEnv runs the binary as ringleader does, with env added.
func ringleaderEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("ringleader %s: %v", strings.Join(args, " "), err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestANamedEngineThatDoesNotAnswerIsNeverReplaced: with DOCKER_HOST at
// an address nobody answers on, every command that needs an engine fails
// naming that address, the cause and DOCKER_HOST, and acts on no other
// engine (nothing removed, no run started). It never reaches an engine,
// so it runs without Docker.
func TestANamedEngineThatDoesNotAnswerIsNeverReplaced(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "tcp://" + l.Addr().String()
	l.Close()
	want := "docker engine at " + host + ": connection refused (DOCKER_HOST)"
	env := []string{"DOCKER_HOST=" + host, "DOCKER_CONTEXT="}
	for _, args := range [][]string{
		{"clean"},
		{"clean", "--run", "nobody"},
		{"watch"},
		{"run", "--backend", "docker", "--build=false", "--store", t.TempDir(), "../../scenarios/bully-leader-crash.yaml"},
	} {
		r := ringleaderEnv(t, env, args...)
		if r.code == 0 {
			t.Errorf("ringleader %s: exit 0 with no engine\nstdout:\n%s", strings.Join(args, " "), r.stdout)
		}
		wantContains(t, "stderr of "+strings.Join(args, " "), r.stderr, want)
		if strings.Contains(r.stdout, "removed") {
			t.Errorf("ringleader %s removed something:\n%s", strings.Join(args, " "), r.stdout)
		}
	}
}
