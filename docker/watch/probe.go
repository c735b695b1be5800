package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// ProbeInterval is how often watch asks each member of a system cluster
// who leads. A run asks every 20 ms (its views' resolution, in its
// results); watch shows a person the cluster, so it asks ten times less
// often and costs the servers ten times less (docs/systems.md measures
// the probes' CPU).
const ProbeInterval = 200 * time.Millisecond

// Probed is one member's answer to its probe, as watch shows it.
type Probed struct {
	View election.View
	// NoAnswer says why the member gave no view (it did not answer, or
	// its answer was refused); empty when it answered. The member is
	// then unknown, never leaderless: its last view stays on show,
	// marked.
	NoAnswer string
}

// probe asks w, a real server, who leads every ProbeInterval and sends
// each answer that differs from the one before.
func (f *follower) probe(ctx context.Context, w *watched) {
	hc, tr := w.sys.Probe.Client()
	defer tr.CloseIdleConnections()
	tick := time.NewTicker(ProbeInterval)
	defer tick.Stop()
	var last *Probed
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if w.ip == "" { // not on a network when first inspected
			if res, err := f.engineOf(w).ContainerInspect(ctx, w.id, client.ContainerInspectOptions{}); err == nil {
				w.ip = firstIP(res.Container)
			}
		}
		p := f.ask(ctx, hc, w)
		if ctx.Err() != nil {
			return
		}
		if last != nil && *last == p {
			continue
		}
		last = &p
		if !f.send(ctx, Input{Node: w.node, Container: w.name, Probed: &p, Logged: time.Now(), Live: true}) {
			return
		}
	}
}

// ask is one probe of w, read as the harness reads it (system.Probe):
// the member's own answer teaches its server ID; an answer claiming
// another member's is refused.
func (f *follower) ask(ctx context.Context, hc *http.Client, w *watched) Probed {
	if w.ip == "" {
		return Probed{NoAnswer: "no address"}
	}
	body, err := w.sys.Probe.Ask(ctx, hc, w.ip)
	if err != nil {
		return Probed{NoAnswer: noAnswer(err)}
	}
	a, err := w.sys.Probe.Read(body)
	if err != nil {
		return Probed{NoAnswer: "answer refused: " + err.Error()}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if other, ok := f.serverIDs[a.ID]; ok && other != w.node {
		return Probed{NoAnswer: fmt.Sprintf("answer refused: claims member %d's server ID", other)}
	}
	f.serverIDs[a.ID] = w.node
	v, err := w.sys.Probe.View(a, w.node, f.serverIDs)
	if errors.Is(err, system.ErrUnmapped) {
		return Probed{NoAnswer: "its leader has not answered yet"}
	}
	if err != nil {
		return Probed{NoAnswer: "answer refused: " + err.Error()}
	}
	return Probed{View: v}
}

// noAnswer is why a probe failed, in a few words that do not change from
// one failure to the next (a frozen member times out, a killed one
// refuses).
func noAnswer(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer (timed out)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "no answer (connection refused)"
	}
	return "no answer"
}

// firstIP is the container's address on its (first) network.
func firstIP(c container.InspectResponse) string {
	if c.NetworkSettings == nil {
		return ""
	}
	for _, n := range c.NetworkSettings.Networks {
		if n != nil && n.IPAddress.IsValid() {
			return n.IPAddress.String()
		}
	}
	return ""
}
