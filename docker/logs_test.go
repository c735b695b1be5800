package docker

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/sirupsen/logrus"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/history"
	rlnode "github.com/ringleader-dev/ringleader/node"
	"github.com/ringleader-dev/ringleader/trust"
)

// engineLog stands in for the engine's log stream of one container: each
// line a node writes reaches the recorder (handleLine) with a docker
// timestamp in front, as the follower reads it.
type engineLog struct {
	mu  sync.Mutex
	b   *Backend
	n   *node
	buf []byte
}

func (e *engineLog) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = append(e.buf, p...)
	for {
		i := bytes.IndexByte(e.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append([]byte(time.Now().UTC().Format(time.RFC3339Nano)+" "), e.buf[:i]...)
		e.buf = e.buf[i+1:]
		e.b.handleLine(e.n, line, false)
	}
}

// TestRecorderSeesNoGapAtEitherLevel feeds the recorder what two real
// (in-process) Bully nodes write at info and at debug, through an election,
// a graceful restart of one of them and a stop, with a summary line every
// 50 ms in between: the recorder must find no gap at either level, every
// boot's records must run 1, 2, 3, ..., and send and recv records must be
// there at debug (what the harness runs its nodes at) and absent at info
// (the compose cluster's level). No engine is needed.
func TestRecorderSeesNoGapAtEitherLevel(t *testing.T) {
	for _, level := range []logrus.Level{logrus.InfoLevel, logrus.DebugLevel} {
		t.Run(level.String(), func(t *testing.T) {
			b := New(WithBuild(false))
			mem := &history.Memory{}
			b.sink, b.world = mem, chaos.NewState()
			secret := trust.NewSecret()
			ids := []election.NodeID{1, 2}
			var peers []rlnode.Peer
			for _, id := range ids {
				peers = append(peers, rlnode.Peer{ID: id, Host: "127.0.0.1", Port: freeTCPPort(t)})
			}
			views := make(chan election.View, 1024)
			dirs := map[election.NodeID]string{1: t.TempDir(), 2: t.TempDir()}
			b.nodes = map[election.NodeID]*node{}
			for _, id := range ids {
				b.nodes[id] = newNode(id, "", "", nil)
			}
			var mu sync.Mutex
			recs := map[election.NodeID]*rlnode.Node{}
			rec := func(id election.NodeID) *rlnode.Node {
				mu.Lock()
				defer mu.Unlock()
				return recs[id]
			}
			start := func(id election.NodeID) {
				rn := b.nodes[id]
				n, err := rlnode.Start(context.Background(), rlnode.Config{
					ID: id, Peers: peers, Algorithm: "bully", Cluster: "rec", Secret: secret,
					ClientPort: -1, ClusterPort: peers[id-1].Port, ListenHost: "127.0.0.1",
					StateDir: dirs[id], Seed: uint64(id), LogLevel: level, SummaryEvery: 50 * time.Millisecond,
					Log:    &engineLog{b: b, n: rn},
					OnView: func(v election.View) { views <- v },
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				recs[id] = n
				mu.Unlock()
				t.Cleanup(n.Stop)
			}
			awaitLeader2 := func() {
				t.Helper()
				limit := time.After(20 * time.Second)
				for {
					if rec(1).View().Leader == 2 && rec(2).View().Leader == 2 {
						return
					}
					select {
					case <-views:
					case <-limit:
						t.Fatalf("no agreement on leader 2: %+v, %+v", rec(1).View(), rec(2).View())
					}
				}
			}
			var wg sync.WaitGroup
			for _, id := range ids {
				wg.Add(1)
				go func() { defer wg.Done(); start(id) }()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			awaitLeader2()
			time.Sleep(150 * time.Millisecond) // a few summaries and heartbeats
			rec(1).Stop()
			start(1)
			awaitLeader2()
			time.Sleep(150 * time.Millisecond)
			rec(1).Stop()
			rec(2).Stop()

			if g := b.Gaps(); g != 0 {
				t.Errorf("the recorder saw %d gaps at level %s", g, level)
			}
			kinds := map[history.Kind]int{}
			for _, r := range mem.Records() {
				if r.Kind == history.KindMark {
					t.Errorf("mark record: %s", r.Note)
				}
				kinds[r.Kind]++
			}
			checkHistory(t, mem.Records(), map[election.NodeID]int{1: 2, 2: 1})
			for _, k := range []history.Kind{history.KindBoot, history.KindView, history.KindStop} {
				if kinds[k] == 0 {
					t.Errorf("no %s record at level %s (%v)", k, level, kinds)
				}
			}
			perMessage := kinds[history.KindSend] + kinds[history.KindRecv]
			if level >= logrus.DebugLevel && (kinds[history.KindSend] == 0 || kinds[history.KindRecv] == 0) {
				t.Errorf("no send or recv records at debug (%v)", kinds)
			}
			if level < logrus.DebugLevel && perMessage != 0 {
				t.Errorf("%d send and recv records at info, want none (%v)", perMessage, kinds)
			}
		})
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestAnExitNoFaultCausesIsReportedWithItsLastWords(t *testing.T) {
	for _, c := range []struct {
		st   container.State
		want string // "" when the exit is a fault's
	}{
		{container.State{ExitCode: 137}, ""},
		{container.State{ExitCode: 143}, ""},
		{container.State{ExitCode: 0}, ""},
		{container.State{Running: true}, ""},
		{container.State{ExitCode: 1}, "exited with code 1: connect to NATS: read pipe: i/o timeout"},
		{container.State{ExitCode: 137, OOMKilled: true}, "killed by the engine for memory (OOMKilled): connect to NATS: read pipe: i/o timeout"},
	} {
		if got := exitedOnItsOwn(&c.st, "connect to NATS: read pipe: i/o timeout"); got != c.want {
			t.Errorf("exit %+v: %q, want %q", c.st, got, c.want)
		}
	}
}
