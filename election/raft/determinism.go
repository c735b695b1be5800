package raft

import (
	crand "crypto/rand"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sync"
)

// etcd raft draws each randomized election timeout with
// crypto/rand.Int(crypto/rand.Reader, …) and offers neither a seed nor a
// hook. A run that must replay from its seed (election.Config.Replay, the
// simulator) therefore installs, for the length of each call into raft, a
// reader fed by the machine's own Config.Rand as crypto/rand.Reader, and
// puts the real one back afterwards. crypto/rand.Reader is one variable
// for the whole process, so every call into raft, replayed or not, holds
// raftMu: no machine's draw can ever read another machine's reader, and
// the explorer's parallel workers take turns inside raft (their own
// simulators run in parallel outside it). Containers run one node per
// process with Replay false: they take the uncontended lock and keep
// crypto/rand's real randomness.
//
// What this does not cover: code outside package raft that reads
// crypto/rand.Reader while a replayed machine is inside raft would read
// the seeded stream. The simulator does no cryptography, so nothing does.
var raftMu sync.Mutex

// seededReader reads bytes from a machine's Config.Rand.
type seededReader struct{ r *rand.Rand }

func (s seededReader) Read(p []byte) (int, error) {
	var buf [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(buf[:], s.r.Uint64())
		copy(p[i:], buf[:])
	}
	return len(p), nil
}

// inRaft runs f, which calls into raft, under raftMu, with this machine's
// seeded reader installed when the run replays.
func (m *machine) inRaft(f func()) {
	raftMu.Lock()
	defer raftMu.Unlock()
	if m.seeded != nil {
		real := crand.Reader
		crand.Reader = m.seeded
		defer func() { crand.Reader = real }()
	}
	f()
}

var _ io.Reader = seededReader{}
