package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ringleader-dev/ringleader/election"
)

// durableFile is the file under the state directory that holds the
// machine's Durable state. The node ID is in the name so that nodes sharing
// a directory (in-process tests, a careless volume mount) never read each
// other's votes.
func durableFile(dir string, id election.NodeID) string {
	return filepath.Join(dir, fmt.Sprintf("durable-%d.json", id))
}

// loadDurable returns the persisted state, or the zero value when the node
// never persisted anything. It also proves the directory is writable, so a
// node that could not keep a vote fails at start rather than at its first
// vote.
func loadDurable(dir string, id election.NodeID) (election.Durable, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return election.Durable{}, fmt.Errorf("state directory %s: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return election.Durable{}, fmt.Errorf("state directory %s is not writable: %w", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())

	path := durableFile(dir, id)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return election.Durable{}, nil
	}
	if err != nil {
		return election.Durable{}, fmt.Errorf("durable state %s: %w", path, err)
	}
	var d election.Durable
	if err := json.Unmarshal(b, &d); err != nil {
		return election.Durable{}, fmt.Errorf("durable state %s is corrupt (%v); remove it to start afresh, knowing a voter may then vote twice in one epoch", path, err)
	}
	return d, nil
}

// saveDurable replaces the state file atomically: write a temporary file in
// the same directory, sync it, rename it over the old one, sync the
// directory. A crash at any point leaves either the old or the new state.
func saveDurable(dir string, id election.NodeID, d election.Durable) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	path := durableFile(dir, id)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("persist %s: %w", path, err)
	}
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("persist %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("persist %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
