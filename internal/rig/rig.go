// Package rig starts and removes a second Docker engine on this machine,
// in its own network namespace and joined with the first engine in a
// swarm: two engines a multi-engine run can span, for tests and for a
// user who wants to try one machine as two hosts (docs/engines.md).
//
// It is the recipe of DESIGN.md "Beyond one host": a namespace with a
// veth pair (10.99.0.1 here, 10.99.0.2 there, the default route via
// here), a dockerd entered into it with nsenter (ip netns exec remounts
// /sys and hides the cgroups) on its own socket, data root and cgroup
// parent, `swarm init` on the first engine and `swarm join` as a worker
// on the second, and the node image copied across by save and load (no
// registry).
//
// The rig never touches a swarm it did not make: when the first engine is
// already in one, Up refuses. Every step is written to a state file as it
// is taken, before the next, so Down removes exactly what Up made, even
// after Up was interrupted or its process killed.
package rig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// The rig's fixed names: one rig per machine.
const (
	// Netns is the second engine's network namespace.
	Netns = "ringleader-h2"
	// HostVeth and NsVeth are the veth pair's ends, here and in Netns.
	HostVeth = "rl-h2a"
	NsVeth   = "rl-h2b"
	// HostAddr and NsAddr are their addresses (a /24): the swarm's
	// advertise addresses of the first and the second engine.
	HostAddr = "10.99.0.1"
	NsAddr   = "10.99.0.2"
	// Socket is where the second engine listens.
	Socket = "/var/run/ringleader-h2.sock"
	// CgroupParent keeps the second engine's containers apart from the
	// first's in the cgroup tree.
	CgroupParent = "ringleader-h2"
	// MTU is the second engine's: the overlay's VXLAN header must fit in
	// the veth's 1500.
	MTU = 1400
)

// DefaultDir holds the state file and the second engine's data.
const DefaultDir = "/var/lib/ringleader-rig"

// DirEnv overrides DefaultDir.
const DirEnv = "RINGLEADER_RIG_DIR"

// Dir is where the rig keeps its state and data.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	return DefaultDir
}

// State is what the rig made, each field set once its step is done (and
// written to the state file before the next step starts).
type State struct {
	// First is the first engine's address (unix:///var/run/docker.sock).
	First string `json:"first"`
	// Second is the second engine's address, set once it answers.
	Second string `json:"second,omitempty"`
	// Netns, Veth: the namespace and the veth pair exist.
	Netns bool `json:"netns,omitempty"`
	Veth  bool `json:"veth,omitempty"`
	// Data is the second engine's directory (data root, exec root,
	// config, log, pid file), once made.
	Data string `json:"data,omitempty"`
	// PID is the second dockerd's, once started.
	PID int `json:"pid,omitempty"`
	// Neighbours are the kernel's neighbour (ARP) table limits as the
	// rig found them, read before its first step: the engine's overlay
	// driver raises them machine-wide when the swarm sets up its ingress
	// network, and Down puts back what it raised (neighbours.go).
	Neighbours map[neigh.Threshold]int `json:"neighbours,omitempty"`
	// SwarmInit: the rig made the first engine a swarm manager.
	SwarmInit bool `json:"swarm_init,omitempty"`
	// GWBridgeBefore: docker_gwbridge existed on the first engine before
	// the swarm did, so it is not the rig's to remove.
	GWBridgeBefore bool `json:"gwbridge_before,omitempty"`
	// Joined: the second engine joined the swarm.
	Joined bool `json:"joined,omitempty"`
	// Images copied to the second engine.
	Images []string `json:"images,omitempty"`
	// Holder is the PID of a process that removes the rig when it ends
	// (a test); 0 for a rig left up on purpose (`ringleader rig up`). A
	// rig whose holder is gone is stale and Up removes it first.
	Holder int `json:"holder,omitempty"`
}

// Engines are the rig's two engine addresses, for --engines.
func (s State) Engines() []string { return []string{s.First, s.Second} }

// statePath is the state file in dir.
func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// ErrNotUp is Load's error when no rig is up.
var ErrNotUp = errors.New("no rig is up")

// Load reads the state file in dir.
func Load(dir string) (State, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return State{}, fmt.Errorf("%w (no %s)", ErrNotUp, statePath(dir))
	}
	if err != nil {
		return State{}, fmt.Errorf("rig: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("rig: %s: %w", statePath(dir), err)
	}
	return s, nil
}

// save writes s to dir's state file whole or not at all.
func save(dir string, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("rig: state: %w", err)
	}
	if err := os.Rename(tmp, statePath(dir)); err != nil {
		return fmt.Errorf("rig: state: %w", err)
	}
	return nil
}

// holderGone reports whether s names a holder process that no longer runs.
func (s State) holderGone() bool {
	if s.Holder <= 0 {
		return false
	}
	return syscall.Kill(s.Holder, 0) == syscall.ESRCH
}

// Config is how Up is asked.
type Config struct {
	// Dir is where state and data go (default Dir()).
	Dir string
	// Images are copied into the second engine (by save and load).
	Images []string
	// Holder: see State.Holder.
	Holder int
	// Log receives a line per step (nil: none).
	Log func(format string, args ...any)
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}
