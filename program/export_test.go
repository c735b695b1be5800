package program

import "slices"

// LivePIDs are the process IDs of the program's processes that have not
// ended, for tests that look at them from outside.
func (p *Program) LivePIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, proc := range slices.DeleteFunc(slices.Clone(p.live), (*process).ended) {
		out = append(out, proc.cmd.Process.Pid)
	}
	return out
}
