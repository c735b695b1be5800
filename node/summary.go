package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/sirupsen/logrus"
)

// EventSummary is the event of the line a node logs every SummaryEvery
// when anything changed since the last one: what it sent and received,
// by type, since that line and in total, its drops and hints, and its
// view. At info level, where the per-message send and recv lines are left
// out, it is how a person (and ringleader watch) sees the traffic. Like
// every line that is not a history record, it has no seq.
const EventSummary = "summary"

// DefaultSummaryEvery is how often a node considers writing a summary
// line.
const DefaultSummaryEvery = 10 * time.Second

// summaryState is what the last summary line said. It is owned by the
// loop goroutine.
type summaryState struct {
	at       time.Time     // when it was written (the loop's start before the first)
	counters stats         // the totals it reported
	view     election.View // the view it reported
}

// summarize writes a summary line unless nothing changed since the last
// one. Counters change only in the loop, so the totals it reports are
// exactly what /status answers at that moment.
func (n *Node) summarize(now time.Time) {
	n.mu.Lock()
	total := n.stats.clone()
	view := n.view
	n.mu.Unlock()
	prev := n.summary
	if total.sameTotals(prev.counters) && view == prev.view {
		return
	}
	delta := total.minus(prev.counters)
	interval := now.Sub(prev.at).Round(time.Millisecond)
	n.summary = summaryState{at: now, counters: total, view: view}
	fields := logrus.Fields{
		history.LogNode:   n.cfg.ID,
		history.LogBoot:   n.boot,
		history.LogEvent:  EventSummary,
		"interval":        interval.String(),
		"since_last":      delta,
		"counters":        total,
		history.LogLeader: view.Leader,
		history.LogEpoch:  view.Epoch,
		history.LogRole:   view.Role,
	}
	if n.srv != nil {
		// How many peers this node's server holds a route to: a
		// cluster whose mesh is incomplete shows it here first.
		fields["routes"] = n.srv.NumRoutes()
	}
	n.log.WithFields(fields).Info(summaryText(delta, interval, view))
}

// summaryText is a summary line's msg: the gist for a person reading the
// log, e.g. "sent 100, received 0 in 10s (HEARTBEAT 100/0); leader 5,
// epoch 1, leader".
func summaryText(d stats, interval time.Duration, v election.View) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sent %d, received %d in %s", d.Sent, d.Received, interval)
	if len(d.ByType) > 0 {
		parts := make([]string, 0, len(d.ByType))
		for _, t := range slices.Sorted(maps.Keys(d.ByType)) {
			c := d.ByType[t]
			parts = append(parts, fmt.Sprintf("%s %d/%d", t, c.Sent, c.Received))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	if dr := d.dropTotal(); dr > 0 {
		fmt.Fprintf(&b, "; %d dropped", dr)
	}
	if d.Hints > 0 {
		fmt.Fprintf(&b, "; %d peer-down hints", d.Hints)
	}
	fmt.Fprintf(&b, "; leader %d, epoch %d, %s", v.Leader, v.Epoch, v.Role)
	return b.String()
}
