package docker

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/ringleader-dev/ringleader/docker/reaper"
)

// LabelOwner names the process that made a run: `ringleader clean` leaves
// a run whose owner is alive.
const LabelOwner = reaper.LabelOwner

// owner is a process, named so that another process can tell whether it
// is still alive: a PID alone may be reused, a PID with its start time
// (in clock ticks since boot) may not, and the machine (host name and boot
// ID) says whether this machine's /proc can answer at all.
type owner struct {
	Machine string // host name "/" boot ID
	PID     int
	Start   string // /proc/PID/stat field 22
}

// String is the label's value: MACHINE:PID:START.
func (o owner) String() string { return fmt.Sprintf("%s:%d:%s", o.Machine, o.PID, o.Start) }

func parseOwner(s string) (owner, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return owner{}, false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return owner{}, false
	}
	pid, err := strconv.Atoi(s[j+1 : i])
	if err != nil || pid <= 0 {
		return owner{}, false
	}
	return owner{Machine: s[:j], PID: pid, Start: s[i+1:]}, true
}

// thisMachine is the host name and boot ID ("" when either is unknown:
// then no owner can be checked here).
var thisMachine = sync.OnceValue(func() string {
	host, err := os.Hostname()
	if err != nil {
		return ""
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return host + "/" + strings.TrimSpace(string(boot))
})

// self is this process as an owner.
var self = sync.OnceValue(func() owner {
	start, _ := startTime(os.Getpid())
	return owner{Machine: thisMachine(), PID: os.Getpid(), Start: start}
})

// startTime reads a process's start time from /proc/PID/stat: field 22,
// counted after the command name, which may itself hold spaces and
// parentheses.
func startTime(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	const startField = 22 - 3 // fields after the name start at field 3
	if len(fields) <= startField {
		return "", fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return fields[startField], nil
}

// alive says whether o is still running and, when it cannot be told from
// here, why not.
func (o owner) alive() (alive bool, unknown string) {
	if o.Machine == "" || o.Start == "" || o.Machine != thisMachine() {
		return false, fmt.Sprintf("made by process %d on %s, which this machine cannot check", o.PID, machineName(o.Machine))
	}
	start, err := startTime(o.PID)
	return err == nil && start == o.Start, ""
}

func machineName(m string) string {
	if host, _, ok := strings.Cut(m, "/"); ok && host != "" {
		return "host " + host
	}
	return "another machine"
}

// labelled is what liveness needs of a container or network.
type labelled struct {
	Labels  map[string]string
	Running bool // a running container
}

// liveRuns decides which runs a live process owns, and why, from the
// labels of their containers and networks:
//   - an owner on this machine decides: alive when its PID runs with the
//     start time recorded;
//   - an owner this machine cannot check (another host or boot) counts as
//     alive: nothing says it is gone;
//   - without an owner label (runs of older builds), a running reaper
//     says the harness is still attached.
//
// Runs with no owner and no running reaper (the compose cluster, what a
// dead harness left) are nobody's.
func liveRuns(items []labelled) map[string]string {
	type facts struct {
		owner   string
		reaping bool
	}
	runs := map[string]*facts{}
	for _, it := range items {
		run := it.Labels[LabelRun]
		if run == "" {
			continue
		}
		f := runs[run]
		if f == nil {
			f = &facts{}
			runs[run] = f
		}
		if o := it.Labels[LabelOwner]; o != "" {
			f.owner = o
		}
		if it.Running && it.Labels[LabelRole] == RoleReaper {
			f.reaping = true
		}
	}
	live := map[string]string{}
	for run, f := range runs {
		if o, ok := parseOwner(f.owner); ok {
			alive, unknown := o.alive()
			switch {
			case unknown != "":
				live[run] = unknown
			case alive:
				live[run] = fmt.Sprintf("process %d, which made it, is alive", o.PID)
			}
			continue
		}
		if f.reaping {
			live[run] = "its reaper is running: the harness that made it is still attached"
		}
	}
	return live
}
