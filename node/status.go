package node

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ringleader-dev/ringleader/election"
)

// stats are the node's counters, guarded by Node.mu.
type stats struct {
	Sent     uint64            `json:"sent"`
	Received uint64            `json:"received"`
	Dropped  map[string]uint64 `json:"dropped"`
	// ByType counts sent and received messages per message type.
	ByType map[string]*typeCount `json:"by_type"`
	// Hints counts peer-down hints handed to the machine.
	Hints uint64 `json:"peer_down_hints"`
	// ControlRefused counts refused control requests by reason (left
	// out while there are none).
	ControlRefused map[string]uint64 `json:"control_refused,omitempty"`
}

type typeCount struct {
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
}

func newStats() stats {
	return stats{Dropped: map[string]uint64{}, ByType: map[string]*typeCount{}}
}

func (s *stats) byType(t string) *typeCount {
	c, ok := s.ByType[t]
	if !ok {
		c = &typeCount{}
		s.ByType[t] = c
	}
	return c
}

// clone is a deep copy of s.
func (s *stats) clone() stats {
	c := stats{Sent: s.Sent, Received: s.Received, Hints: s.Hints, Dropped: make(map[string]uint64, len(s.Dropped)), ByType: make(map[string]*typeCount, len(s.ByType))}
	for k, v := range s.Dropped {
		c.Dropped[k] = v
	}
	for k, v := range s.ControlRefused {
		if c.ControlRefused == nil {
			c.ControlRefused = map[string]uint64{}
		}
		c.ControlRefused[k] = v
	}
	for k, v := range s.ByType {
		cp := *v
		c.ByType[k] = &cp
	}
	return c
}

// minus is what s counted since prev, an earlier copy of the same
// counters; reasons and types with nothing new are left out.
func (s stats) minus(prev stats) stats {
	d := newStats()
	d.Sent, d.Received, d.Hints = s.Sent-prev.Sent, s.Received-prev.Received, s.Hints-prev.Hints
	for k, v := range s.Dropped {
		if v > prev.Dropped[k] {
			d.Dropped[k] = v - prev.Dropped[k]
		}
	}
	for k, v := range s.ControlRefused {
		if v > prev.ControlRefused[k] {
			if d.ControlRefused == nil {
				d.ControlRefused = map[string]uint64{}
			}
			d.ControlRefused[k] = v - prev.ControlRefused[k]
		}
	}
	for k, v := range s.ByType {
		var p typeCount
		if pv := prev.ByType[k]; pv != nil {
			p = *pv
		}
		if v.Sent > p.Sent || v.Received > p.Received {
			d.ByType[k] = &typeCount{Sent: v.Sent - p.Sent, Received: v.Received - p.Received}
		}
	}
	return d
}

// sameTotals reports whether s counted nothing since prev (counters only
// grow, so the totals tell).
func (s stats) sameTotals(prev stats) bool {
	return s.Sent == prev.Sent && s.Received == prev.Received && s.Hints == prev.Hints && s.dropTotal() == prev.dropTotal() &&
		total(s.ControlRefused) == total(prev.ControlRefused)
}

func total(m map[string]uint64) uint64 {
	var t uint64
	for _, v := range m {
		t += v
	}
	return t
}

func (s stats) dropTotal() uint64 {
	var t uint64
	for _, v := range s.Dropped {
		t += v
	}
	return t
}

// Status is the body of GET /status.
type Status struct {
	Node      election.NodeID `json:"node"`
	Boot      string          `json:"boot"`
	Algorithm string          `json:"algorithm"`
	View      election.View   `json:"view"`
	Counters  stats           `json:"counters"`
	Healthy   bool            `json:"healthy"`
	// ClockRate is the rate of the node's clock when a clock fault set
	// one other than 1 (left out otherwise).
	ClockRate float64 `json:"clock_rate,omitempty"`
	// DropFrom is the drop set, when not empty: whose election messages
	// the node drops on arrival.
	DropFrom []election.NodeID `json:"drop_from,omitempty"`
}

// Status returns a snapshot of the node's view and counters.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Status{Node: n.cfg.ID, Boot: n.boot, Algorithm: n.cfg.Algorithm, View: n.view, Counters: n.stats.clone(), Healthy: n.healthy(),
		ClockRate: n.faults.clockRate, DropFrom: n.faults.dropFrom}
}

func (n *Node) healthy() bool { return n.nc != nil && n.nc.IsConnected() }

func (n *Node) startStatus() error {
	ln, err := net.Listen("tcp", n.cfg.StatusAddr)
	if err != nil {
		return fmt.Errorf("node %d: status listener on %s: %w", n.cfg.ID, n.cfg.StatusAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(n.Status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !n.healthy() {
			http.Error(w, "NATS connection down\n", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	n.ln = ln
	n.status = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	n.closedWG.Add(1)
	go func() {
		defer n.closedWG.Done()
		n.status.Serve(ln)
	}()
	return nil
}
