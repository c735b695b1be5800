package tap

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/internal/freeport"
	"github.com/ringleader-dev/ringleader/node"
	"github.com/ringleader-dev/ringleader/trust"
)

// lines is a concurrency-safe writer that signals every write.
type lines struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) int { return freeport.Pick(t) }

// startPair starts a two-node Bully cluster with its own secret.
func startPair(t *testing.T, secret string) []*node.Node {
	t.Helper()
	peers := []node.Peer{{ID: 1, Host: "127.0.0.1", Port: freePort(t)}, {ID: 2, Host: "127.0.0.1", Port: freePort(t)}}
	var nodes []*node.Node
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := node.Start(context.Background(), node.Config{
				ID: p.ID, Peers: peers, Algorithm: "bully", Cluster: "taptest", Secret: secret,
				ClientPort: -1, ClusterPort: p.Port, ListenHost: "127.0.0.1", StateDir: t.TempDir(), Log: io.Discard, Seed: uint64(p.ID),
			})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			nodes = append(nodes, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range nodes {
			n.Stop()
		}
	})
	if len(nodes) != 2 {
		t.FailNow()
	}
	return nodes
}

// TestTapPrintsTheClusterTraffic: with the secret, the tap sees the
// leader's heartbeats, one line each.
func TestTapPrintsTheClusterTraffic(t *testing.T) {
	secret := trust.NewSecret()
	nodes := startPair(t, secret)
	out := &lines{changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Server: nodes[0].ClientURL(), Cluster: "taptest", Secret: secret, JSON: true, Out: out})
	}()
	limit := time.After(20 * time.Second)
	for !strings.Contains(out.String(), `"type":"HEARTBEAT"`) {
		select {
		case <-out.changed:
		case err := <-done:
			t.Fatalf("tap ended: %v", err)
		case <-limit:
			t.Fatalf("no heartbeat seen; output:\n%s", out.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTapWithoutTheSecretIsRefused: the wrong secret gets nothing.
func TestTapWithoutTheSecretIsRefused(t *testing.T) {
	nodes := startPair(t, trust.NewSecret())
	err := Run(context.Background(), Options{Server: nodes[0].ClientURL(), Cluster: "taptest", Secret: trust.NewSecret(), Out: io.Discard})
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("err %v, want an authorization violation", err)
	}
	if err := Run(context.Background(), Options{Server: nodes[0].ClientURL(), Cluster: "taptest", Secret: "short", Out: io.Discard}); err == nil || !strings.Contains(err.Error(), fmt.Sprint(trust.MinSecretLen)) {
		t.Fatalf("a short secret: %v", err)
	}
}

// TestTapShowsAControlRequestAsSuch: the harness's request on a node's
// control subject is shown as a control request, not as an election
// message with no type.
func TestTapShowsAControlRequestAsSuch(t *testing.T) {
	l := describe(&nats.Msg{Subject: trust.ControlSubject("taptest", 3), Data: []byte(`{"v":1,"clock":{"rate":0.5}}`)})
	if l.Type != "" || !strings.HasPrefix(l.Note, "control request: ") || !strings.Contains(l.Note, `rate`) {
		t.Fatalf("described as %+v", l)
	}
}
