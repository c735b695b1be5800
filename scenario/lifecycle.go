package scenario

import (
	"fmt"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
)

// What a file says of a node's process, step by step, as far as the file
// alone can tell: every node starts up; a kill or stop of listed IDs puts
// them down; a symbolic target ("kill: leader") leaves the nodes it might
// have hit unknown. chaos.Decide refuses to pause or resume a node that is
// down, so a step that pauses or resumes a node the file has put down
// (and not restarted) is an error the file shows, reported while it is read.
type life int

const (
	up life = iota
	down
	paused
	unknown
)

// lifecycle follows the nodes through the steps.
type lifecycle struct {
	state  map[election.NodeID]life
	downAt map[election.NodeID]int // the line that put the node down
}

// checkLifecycle reports the steps that pause or resume a node the file
// has put down.
func (p *parser) checkLifecycle(steps []Step, fields []string) {
	if len(p.members) == 0 {
		return
	}
	lc := lifecycle{state: map[election.NodeID]life{}, downAt: map[election.NodeID]int{}}
	for i, st := range steps {
		if st.Fault == nil {
			continue
		}
		if err := lc.apply(*st.Fault, st.Line, p.members); err != nil {
			p.errs = append(p.errs, &Error{File: p.file, Line: st.Line, Field: fields[i], Msg: err.Error()})
		}
	}
}

// apply moves the nodes f names; the error is a pause or resume of a node
// known to be down.
func (lc *lifecycle) apply(f chaos.Spec, line int, members []election.NodeID) error {
	listed := f.Target.Kind == chaos.TargetIDs
	switch f.Op {
	case chaos.Kill, chaos.Stop:
		switch {
		case listed:
			for _, id := range f.Target.IDs {
				lc.set(id, down, line)
			}
		case f.Target.Kind == chaos.TargetAll:
			for _, id := range members {
				lc.set(id, down, line)
			}
		default:
			lc.blur(members, up, paused)
		}
	case chaos.Restart:
		switch {
		case listed:
			for _, id := range f.Target.IDs {
				if lc.state[id] == down {
					lc.set(id, up, line)
				}
			}
		case f.Target.Kind == chaos.TargetAll || f.Target.Kind == chaos.TargetDown:
			for _, id := range members {
				if lc.state[id] == down {
					lc.set(id, up, line)
				}
			}
		default:
			lc.blur(members, down)
		}
	case chaos.Pause, chaos.Resume:
		if !listed {
			lc.blur(members, up, paused)
			return nil
		}
		for _, id := range f.Target.IDs {
			if lc.state[id] == down {
				return fmt.Errorf("node %d is down (put down at line %d and not restarted since); restart it before you %s it", id, lc.downAt[id], f.Op)
			}
		}
		to := paused
		if f.Op == chaos.Resume {
			to = up
		}
		for _, id := range f.Target.IDs {
			if lc.state[id] != unknown {
				lc.set(id, to, line)
			}
		}
	}
	return nil
}

func (lc *lifecycle) set(id election.NodeID, l life, line int) {
	lc.state[id] = l
	if l == down {
		lc.downAt[id] = line
	}
}

// blur makes unknown every node in one of the states from: a symbolic
// target may have hit any of them.
func (lc *lifecycle) blur(members []election.NodeID, from ...life) {
	for _, id := range members {
		for _, l := range from {
			if lc.state[id] == l {
				lc.state[id] = unknown
			}
		}
	}
}
