package node

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/wire"
	"github.com/sirupsen/logrus"
)

// Events of the informational lines a control request leads to
// (docs/logs.md). They carry no seq: the history records faults from the
// harness, and these lines are the node's word that a change took effect.
// The clock and drop-from events and their keys are the log schema's
// (package history), which attach and watch read back.
const (
	EventClock          = history.EventClock
	EventDropFrom       = history.EventDropFrom
	EventControlRefused = "control-refused" // a control request was refused
)

// Keys of those lines.
const (
	LogClockRate = history.LogClockRate
	LogJumpMS    = history.LogJumpMS
	LogReadingMS = history.LogReadingMS
	LogTrueMS    = history.LogTrueMS
	LogDropFrom  = history.LogDropFrom
)

// DropCut is the reason of a drop line for a message from a sender in the
// node's drop set: lost to a one-way cut, not rejected as malformed.
const DropCut = "cut"

// trueElapsed is the true (monotonic) time since the loop started.
func (n *Node) trueElapsed() time.Duration {
	if n.elapsed != nil {
		return n.elapsed()
	}
	return time.Since(n.started)
}

// arm sets timer name to fire when the node clock reads deadline; now is
// the true time. A new generation makes any firing of the timer's previous
// arming, already queued for the loop, stale.
func (n *Node) arm(name string, deadline, now time.Duration) {
	if at, ok := n.timers[name]; ok {
		at.t.Stop()
	}
	n.gen++
	gen := n.gen
	after := n.afterFunc
	if after == nil {
		after = time.AfterFunc
	}
	n.timers[name] = &armedTimer{gen: gen, deadline: deadline, t: after(n.clk.Until(now, deadline), func() {
		n.post(input{kind: inTimer, timer: name, gen: gen})
	})}
}

// rearmAll re-times every armed timer after the clock changed at true time
// now: a rate change moves each firing, a forward jump makes the passed
// deadlines due at once (they still fire through the loop, in turn), a
// backward jump postpones them.
func (n *Node) rearmAll(now time.Duration) {
	for _, name := range slices.Sorted(maps.Keys(n.timers)) {
		n.arm(name, n.timers[name].deadline, now)
	}
}

// dropCut drops m, whose sender is in the drop set. Like the recv line it
// stands in for, its drop line is written at debug, one per message, with
// the message: the history shows which message a one-way cut lost.
func (n *Node) dropCut(m election.Message) {
	n.mu.Lock()
	n.stats.Dropped[DropCut]++
	n.mu.Unlock()
	if !n.log.IsLevelEnabled(logrus.DebugLevel) {
		return
	}
	f := msgFields(m)
	f[history.LogReason] = DropCut
	n.eventAt(logrus.DebugLevel, history.EventDrop, f, "message dropped: its sender is cut off from this node")
}

// control applies one control request and answers it. It runs in the
// loop, so the change is in effect for everything the machine sees after
// it, and the answer is sent only then.
func (n *Node) control(data []byte, reply string) {
	c, err := control.Decode(data, n.cfg.ID, n.members)
	if err != nil {
		n.refuseControl(err, data)
		n.answer(reply, control.Reply{Error: clipDetail(err.Error())})
		return
	}
	now := n.trueElapsed()
	if cc := c.Clock; cc != nil {
		f := logrus.Fields{}
		if cc.Rate != nil {
			n.clk.SetRate(now, *cc.Rate)
		} else {
			n.clk.Jump(now, time.Duration(*cc.JumpMS)*time.Millisecond)
			f[LogJumpMS] = *cc.JumpMS
		}
		n.rearmAll(now)
		f[LogClockRate] = n.clk.Rate()
		f[LogReadingMS] = millis(n.clk.Read(now))
		f[LogTrueMS] = millis(now)
		n.note(EventClock).WithFields(f).Info("clock changed")
	}
	if c.DropFrom != nil {
		n.dropFrom = map[election.NodeID]bool{}
		for _, id := range *c.DropFrom {
			n.dropFrom[id] = true
		}
		n.note(EventDropFrom).WithField(LogDropFrom, n.dropSet()).Info("drop set replaced")
	}
	n.showFaults()
	r := control.Reply{OK: true, Rate: n.clk.Rate(), ReadingMS: millis(n.clk.Read(now)), TrueMS: millis(now), DropFrom: n.dropSet()}
	if c.HoldFrom != nil {
		// Answered after the release: what the set no longer names has
		// been delivered by then.
		n.setHold(*c.HoldFrom)
	}
	r.HoldFrom, r.Held = n.holdList(), len(n.hold.queue)
	if c.Start {
		// Last: a gated node's first election sees the clock, drop
		// set and hold set this request brings.
		n.openGate()
	}
	r.Gated = n.gate.closed
	n.answer(reply, r)
}

// dropSet is the drop set, ascending (never nil, so it logs as []).
func (n *Node) dropSet() []election.NodeID {
	return slices.Sorted(maps.Keys(n.dropFrom))
}

// refuseControl counts a refused control request and logs it in bounded
// form, at most a line a second per reason like the inbox's drops.
func (n *Node) refuseControl(err error, data []byte) {
	reason := wire.ReasonOf(err)
	n.mu.Lock()
	if n.stats.ControlRefused == nil {
		n.stats.ControlRefused = map[string]uint64{}
	}
	n.stats.ControlRefused[string(reason)]++
	n.mu.Unlock()
	if ok, suppressed := n.drops.admit("control-"+reason, time.Now()); ok {
		n.note(EventControlRefused).WithFields(logrus.Fields{
			history.LogReason: string(reason),
			"detail":          clipDetail(err.Error()),
			"bytes":           len(data),
			"prefix":          prefix(data),
			"suppressed":      suppressed,
		}).Warn("control request refused")
	}
}

// answer replies to a control request (a request without a reply subject
// gets none).
func (n *Node) answer(reply string, r control.Reply) {
	if reply == "" || n.nc == nil {
		return
	}
	r.V, r.Node = control.Version, n.cfg.ID
	b, err := json.Marshal(r)
	if err == nil {
		err = n.nc.Publish(reply, b)
	}
	if err != nil {
		n.note(EventPublishFailed).WithError(err).Warn("control answer not sent")
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// faultStatus is what /status shows of the node's faults (zero: none).
type faultStatus struct {
	clockRate float64 // 0 at real speed
	dropFrom  []election.NodeID
}

// showFaults copies the clock's rate and the drop set for /status.
func (n *Node) showFaults() {
	f := faultStatus{}
	if r := n.clk.Rate(); r != 1 {
		f.clockRate = r
	}
	if len(n.dropFrom) > 0 {
		f.dropFrom = n.dropSet()
	}
	n.mu.Lock()
	n.faults = f
	n.mu.Unlock()
}
