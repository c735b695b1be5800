package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/outpath"
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
	// saveDurable renames over it: only a regular file may be there (not
	// a link, a device or a directory someone put in its place).
	if err := outpath.Check(path, outpath.File); err != nil {
		return election.Durable{}, fmt.Errorf("durable state: %w", err)
	}
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
// the same directory and rename it over the old one. A process that dies
// at any point leaves either the old or the new state.
//
// It does not fsync. What the state must survive is the node's process
// dying (a kill, a crash, a container restarted), and the kernel's page
// cache outlives all of those; only the machine losing power loses what
// was not flushed, and no fault of this testbed does that. An fsync on a
// disk the test suite is busy writing stalled for up to 1.3 s here, and a
// node makes its epoch durable inside its loop, before the message that
// announces it: a raft node stalled that long cannot campaign, which is
// the disk's timing, not the algorithm's, and one the simulator (where
// persisting takes no time) never shows.
func saveDurable(dir string, id election.NodeID, d election.Durable) error {
	if err := d.CheckSize(); err != nil {
		return fmt.Errorf("persist node %d: %w", id, err)
	}
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
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("persist %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("persist %s: %w", path, err)
	}
	return nil
}

// checkDurable reports a persisted state no run of this cluster can have
// written: an epoch above election.MaxEpoch (forged messages adopted by an
// older version, or a hand-edited file), a vote in an epoch newer than the
// epoch itself, or a vote for a node outside the membership. Such a state is
// not trusted: adopting a poisoned epoch would leave the cluster nothing
// newer to elect a leader in, for good.
func checkDurable(d election.Durable, members []election.NodeID) error {
	switch {
	case d.Epoch > election.MaxEpoch:
		return fmt.Errorf("epoch %d is above the largest any node uses (%d)", d.Epoch, election.MaxEpoch)
	case d.VotedEpoch > d.Epoch:
		return fmt.Errorf("voted in epoch %d, newer than its epoch %d", d.VotedEpoch, d.Epoch)
	case d.VotedFor != election.None && !slices.Contains(members, d.VotedFor):
		return fmt.Errorf("voted for %d, not a member of %v", d.VotedFor, members)
	}
	if err := d.CheckSize(); err != nil {
		return err
	}
	return nil
}

// setAsideDurable renames a rejected state file so that it is kept for a
// person to look at but never read again, and returns its new name.
func setAsideDurable(dir string, id election.NodeID) (string, error) {
	from := durableFile(dir, id)
	to := from + ".rejected"
	return to, os.Rename(from, to)
}
