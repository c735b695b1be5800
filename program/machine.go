package program

import (
	"fmt"

	"github.com/ringleader-dev/ringleader/election"
)

// machine is one boot of one node, played by a process of its Program.
// It implements election.Releaser (the process goes back to the pool) and
// election.Crasher (a program that failed crashes the node).
type machine struct {
	prog *Program
	proc *process
	cfg  election.Config
	view election.View
	err  error
}

var (
	_ election.Releaser = (*machine)(nil)
	_ election.Crasher  = (*machine)(nil)
)

func (m *machine) View() election.View { return m.view }

// Step sends ev to the program and returns its effects. A start carries
// the node's configuration and resets the program. A program that fails
// answers nothing, now or later; Crashed says why.
func (m *machine) Step(ev election.Event) []election.Effect {
	if m.err != nil || m.proc == nil {
		return nil
	}
	var init *Init
	if ev.Kind == election.EventStart {
		init = InitOf(m.cfg)
	}
	a, err := m.proc.exchange(ev, init)
	if err != nil {
		m.err = fmt.Errorf("program %s: node %d: %w", m.prog.name, m.cfg.ID, err)
		m.proc = nil // killed by exchange
		return nil
	}
	for i := range a.Effects {
		if a.Effects[i].Kind == election.EffectView {
			m.view = a.Effects[i].View
		}
	}
	return a.Effects
}

// Crashed is the program's failure, nil while it runs.
func (m *machine) Crashed() error { return m.err }

// Release hands the process back to the pool for the slot's next machine.
func (m *machine) Release() {
	if m.proc != nil {
		m.prog.put(m.proc)
		m.proc = nil
	}
}
