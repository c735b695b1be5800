//go:build !nodeimage

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The simulator cannot run a server: a run of system scenarios only is
// refused, naming the model cluster that could run instead (etcd) or
// saying there is none (NATS).
func TestRunSimRefusesASystemNamingItsModel(t *testing.T) {
	args := []string{"run", "--backend", "sim", "--store", t.TempDir(), "../../scenarios/etcd-follower-rejoins-no-prevote.yaml", "../../scenarios/nats-jetstream-leader-crash.yaml"}
	r := ringleader(t, args...)
	r.wantCode(t, 2, args...)
	wantContains(t, "stderr", r.stderr,
		"its model is cluster: {algorithm: raft, nodes: 5, options: {check_quorum: true, prevote: false}, timing: {heartbeat: 50ms, suspicion: 500ms}}",
		"nats-jetstream-leader-crash.yaml: skipped: system nats-jetstream runs only as its own servers", "it has no model in the simulator: NATS's meta group runs NATS's own raft")
}

// --system maps a raft scenario onto the server before anything starts;
// what cannot be mapped is refused, naming the file, and nothing is
// stored.
func TestRunSystemRefusesWhatCannotBeMapped(t *testing.T) {
	dir := t.TempDir()
	noCQ := filepath.Join(dir, "no-cq.yaml")
	if err := os.WriteFile(noCQ, []byte("name: no-cq\ncluster: {algorithm: raft, nodes: 3, options: {check_quorum: false}}\nsteps:\n  - kill: leader\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--backend", "sim", "--system", "etcd", noCQ}, []string{"--system runs the real server, in containers: drop --backend sim"}},
		{[]string{"run", "--backend", "docker", "--store", store, "--system", "etcd", noCQ}, []string{noCQ + ": cluster: cannot run on system etcd", "etcd always runs with check_quorum: true"}},
		{[]string{"run", "--backend", "docker", "--store", store, "--system", "nats-jetstream", "../../scenarios/raft-leader-crash.yaml"}, []string{"system nats-jetstream has no model algorithm"}},
		{[]string{"run", "--backend", "docker", "--store", store, "--system", "zookeeper", noCQ}, []string{`unknown system "zookeeper"`}},
	} {
		r := ringleader(t, tc.args...)
		r.wantCode(t, 2, tc.args...)
		wantContains(t, "stderr", r.stderr, tc.want...)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("a refused run left %d entries in the store", len(entries))
	}
}
