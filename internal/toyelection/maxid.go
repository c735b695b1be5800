// Package toyelection holds the smallest honest election algorithm, for
// tests that exercise a runtime (the simulator, the conformance suite)
// apart from the real algorithms. It is never registered by non-test code.
package toyelection

import "github.com/ringleader-dev/ringleader/election"

// maxID is the smallest honest election: every node floods the best ID it
// has seen; the best live node heartbeats; a follower that misses
// heartbeats forgets its leader and floods its own ID again. "Best" is the
// highest ID unless built by NewMinID.
type maxID struct {
	cfg    election.Config
	better func(a, b election.NodeID) bool // a outranks b
	best   election.NodeID
	view   election.View
}

// NewMaxID builds a machine under which the highest live ID leads.
func NewMaxID(cfg election.Config) (election.Machine, error) {
	return build(cfg, func(a, b election.NodeID) bool { return a > b })
}

// NewMinID builds the same machine upside down: the lowest live ID leads.
// It agrees and is live, so it makes a plausible liar for tests that must
// catch an algorithm claiming that the highest ID wins.
func NewMinID(cfg election.Config) (election.Machine, error) {
	return build(cfg, func(a, b election.NodeID) bool { return a < b })
}

func build(cfg election.Config, better func(a, b election.NodeID) bool) (election.Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &maxID{cfg: cfg, better: better}, nil
}

func (m *maxID) View() election.View { return m.view }

func (m *maxID) setView(out []election.Effect) []election.Effect {
	role := election.Follower
	if m.best == m.cfg.ID {
		role = election.Leader
	}
	v := election.View{Leader: m.best, Epoch: m.cfg.Durable.Epoch, Role: role}
	if v == m.view {
		return out
	}
	m.view = v
	return append(out, election.Effect{Kind: election.EffectView, View: v})
}

func (m *maxID) Step(ev election.Event) []election.Effect {
	var out []election.Effect
	t := m.cfg.Timing
	switch ev.Kind {
	case election.EventStart:
		// Each boot is a new epoch, persisted, so restarts are visible.
		m.cfg.Durable.Epoch++
		d := m.cfg.Durable
		out = append(out, election.Effect{Kind: election.EffectPersist, Durable: &d})
		m.best = m.cfg.ID
		out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "ELECTION", Candidate: m.cfg.ID}})
		out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "heartbeat", After: t.Heartbeat})
		out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
		out = m.setView(out)
	case election.EventReceive:
		switch ev.Msg.Type {
		case "ELECTION":
			if m.better(ev.Msg.Candidate, m.best) {
				m.best = ev.Msg.Candidate
				out = m.setView(out)
			} else if m.better(m.best, ev.Msg.Candidate) && m.best == m.cfg.ID {
				out = append(out, election.Effect{Kind: election.EffectSend, Msg: election.Message{Type: "ELECTION", To: ev.Msg.From, Candidate: m.cfg.ID}})
			}
		case "HEARTBEAT":
			if !m.better(m.best, ev.Msg.From) {
				m.best = ev.Msg.From
				out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
				out = m.setView(out)
			}
		}
	case election.EventTimer:
		switch ev.Timer {
		case "heartbeat":
			if m.best == m.cfg.ID {
				out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "HEARTBEAT"}})
			}
			out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "heartbeat", After: t.Heartbeat})
		case "suspect":
			if m.best != m.cfg.ID {
				m.best = m.cfg.ID
				out = append(out, election.Effect{Kind: election.EffectBroadcast, Msg: election.Message{Type: "ELECTION", Candidate: m.cfg.ID}})
				out = m.setView(out)
			}
			out = append(out, election.Effect{Kind: election.EffectSetTimer, Timer: "suspect", After: t.Suspicion})
		}
	}
	return out
}
