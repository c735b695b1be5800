package node

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ringleader-dev/ringleader/election"
)

// testAlgorithm is a deliberately trivial machine registered only in this
// package's test binary, so the runtime can be tested before (and
// independently of) the real algorithms: every node broadcasts HEARTBEAT
// every Heartbeat, considers alive whoever it heard within Suspicion (or
// until a peer-down hint), and views the highest alive ID as leader. It
// uses every effect the runtime offers: broadcast, named timers set and
// cancelled, views and persisted state.
const testAlgorithm = "test-max-alive"

func init() {
	election.Register(election.Algorithm{
		Name:     testAlgorithm,
		Title:    "highest heard-from ID (runtime tests only)",
		Topology: "complete",
		New:      newMaxAlive,
		Claims: func(election.QuorumMode) []election.Property {
			return []election.Property{election.Agreement, election.HighestWins}
		},
	})
}

type maxAlive struct {
	cfg   election.Config
	alive map[election.NodeID]bool
	epoch uint64
	view  election.View
}

func newMaxAlive(cfg election.Config) (election.Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &maxAlive{cfg: cfg, alive: map[election.NodeID]bool{}, epoch: cfg.Durable.Epoch, view: election.View{Role: election.Undecided}}, nil
}

func (m *maxAlive) View() election.View { return m.view }

func suspectTimer(id election.NodeID) string { return "suspect-" + strconv.Itoa(int(id)) }

func (m *maxAlive) Step(ev election.Event) []election.Effect {
	var out []election.Effect
	switch ev.Kind {
	case election.EventStart:
		m.alive[m.cfg.ID] = true
		out = append(out, m.beat()...)
	case election.EventTimer:
		if ev.Timer == "beat" {
			out = append(out, m.beat()...)
		} else if id, ok := strings.CutPrefix(ev.Timer, "suspect-"); ok {
			n, _ := strconv.Atoi(id)
			delete(m.alive, election.NodeID(n))
		}
	case election.EventReceive:
		if ev.Msg.Type == "HEARTBEAT" {
			m.alive[ev.Msg.From] = true
			out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: suspectTimer(ev.Msg.From), After: m.cfg.Timing.Suspicion})
		}
	case election.EventPeerDown:
		delete(m.alive, ev.Peer)
		out = append(out, election.Effect{Kind: election.EffectCancelTimer, Timer: suspectTimer(ev.Peer)})
	default:
		panic(fmt.Sprintf("maxAlive: unexpected event %v", ev.Kind))
	}
	return append(out, m.decide()...)
}

func (m *maxAlive) beat() []election.Effect {
	return []election.Effect{
		{Kind: election.EffectBroadcast, Msg: election.Message{Type: "HEARTBEAT", From: m.cfg.ID, Epoch: m.epoch}},
		{Kind: election.EffectSetTimer, Timer: "beat", After: m.cfg.Timing.Heartbeat},
	}
}

func (m *maxAlive) decide() []election.Effect {
	ids := make([]election.NodeID, 0, len(m.alive))
	for id := range m.alive {
		ids = append(ids, id)
	}
	leader := slices.Max(ids)
	if leader == m.view.Leader {
		return nil
	}
	m.epoch++
	role := election.Follower
	if leader == m.cfg.ID {
		role = election.Leader
	}
	m.view = election.View{Leader: leader, Epoch: m.epoch, Role: role}
	return []election.Effect{
		{Kind: election.EffectView, View: m.view},
		{Kind: election.EffectPersist, Durable: &election.Durable{Epoch: m.epoch}},
	}
}
