package watch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/internal/freeport"
)

// probeEngine is an engine holding two running members of a system
// cluster, at 127.0.0.2 and 127.0.0.3, with no events and no logs.
type probeEngine struct{ labels map[string]map[string]string }

func (e probeEngine) ContainerList(context.Context, client.ContainerListOptions) (client.ContainerListResult, error) {
	var r client.ContainerListResult
	for id := range e.labels {
		r.Items = append(r.Items, container.Summary{ID: id, Created: time.Now().Unix()})
	}
	return r, nil
}

func (e probeEngine) ContainerInspect(_ context.Context, id string, _ client.ContainerInspectOptions) (client.ContainerInspectResult, error) {
	ip := netip.MustParseAddr("127.0.0." + id[len(id)-1:])
	return client.ContainerInspectResult{Container: container.InspectResponse{
		ID: id, Name: "/" + id, State: &container.State{Running: true},
		Config:          &container.Config{Labels: e.labels[id]},
		NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{"n": {IPAddress: ip}}},
	}}, nil
}

func (probeEngine) ContainerLogs(context.Context, string, client.ContainerLogsOptions) (client.ContainerLogsResult, error) {
	return nil, fmt.Errorf("a server's log is not read")
}

// Events: no past events (the stream of those ends at once), and none
// live.
func (probeEngine) Events(_ context.Context, o client.EventsListOptions) client.EventsResult {
	msgs := make(chan events.Message)
	if o.Until != "" {
		close(msgs)
	}
	return client.EventsResult{Messages: msgs, Err: make(chan error)}
}

// Follow asks a system cluster's members who leads, mapping the server
// IDs they answer with to members: member 2 (at 127.0.0.2) leads term 7,
// member 3 follows it.
func TestFollowProbesASystemsMembers(t *testing.T) {
	port := freePort(t)
	answers := map[string]string{
		"127.0.0.2": `{"id":"a2","leader":"a2","term":7}`,
		"127.0.0.3": `{"id":"a3","leader":"a2","term":7}`,
	}
	for ip, body := range answers {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("listen on %s (loopback addresses beyond 127.0.0.1): %v", ip, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) })}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	sys := fmt.Sprintf("name: mine\nversion: \"1\"\nimage: mine:1\npeer: \"{addr}\"\ntiming: {heartbeat: 1s, election: 4s}\nprobe: {port: %d, path: /leader, id: id, leader: leader, term: term}\n", port)
	if err := os.WriteFile(file, []byte(sys), 0o644); err != nil {
		t.Fatal(err)
	}
	labels := func(id int) map[string]string {
		return map[string]string{docker.LabelSystem: "mine", docker.LabelSystemFile: file, docker.LabelMember: strconv.Itoa(id), docker.LabelSystemOptions: ""}
	}
	eng := probeEngine{labels: map[string]map[string]string{"c2": labels(2), "c3": labels(3)}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := make(chan Input, 64)
	go Follow(ctx, eng, "r", in)
	b := NewBoard(0)
	for {
		select {
		case x := <-in:
			x.Feed(b)
		case <-ctx.Done():
			t.Fatalf("no views from the probes; board %+v", b.Status(time.Now()))
		}
		st := map[election.NodeID]NodeStatus{}
		for _, s := range b.Status(b.Now()) {
			st[s.Node] = s
		}
		s2, s3 := st[2], st[3]
		if s2.Leader == 2 && s2.Role == election.Leader && s2.Epoch == 7 && s3.Leader == 2 && s3.Role == election.Follower {
			return
		}
	}
}

func freePort(t *testing.T) int { return freeport.Pick(t) }
