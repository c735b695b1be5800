//go:build !linux

package docker

// killDirect never signals a process off Linux (no pidfd there; the engine
// runs in a VM anyway): the caller asks the engine.
func killDirect(pid int, cid string) bool { return false }
