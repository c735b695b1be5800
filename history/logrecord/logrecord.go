// Package logrecord turns the lines one node writes to its log into history
// records, for any backend that can read a node's log stream (containers
// read it from the engine). A log is read again after a node restarts, and a
// stream read twice overlaps: the (boot, seq) each record carries removes the
// overlap, and a seq that skips ahead is a gap — lines the transport lost —
// marked in the history. So the history gets every line once, in order,
// across restarts. What a line means is history.ParseNodeLog's job; this
// package keeps the reading honest.
package logrecord

import (
	"bytes"
	"fmt"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/wire"
)

// LastTextMax bounds the text kept of a line that is not a record: enough
// for a Go error chain, not a whole panic.
const LastTextMax = 240

// Node is what the recorder knows of one node's log. It is not safe for
// concurrent use: a backend reads each node's log in one goroutine, or
// guards it.
type Node struct {
	ID election.NodeID
	// Boots lists boot IDs in the order seen.
	Boots []string
	// lastSeq is each boot's highest seq.
	lastSeq map[string]uint64
	// LastText is the last line the node wrote that is not a log record
	// (a fatal error goes to stderr as text), clipped to LastTextMax: what
	// a report of an unexpected exit quotes.
	LastText string
	// Gaps counts the gaps found.
	Gaps int
}

// NewNode is the recorder of node id's log, with nothing read yet.
func NewNode(id election.NodeID) *Node {
	return &Node{ID: id, lastSeq: map[string]uint64{}}
}

// LastSeq is the highest seq read of boot (0: none).
func (n *Node) LastSeq(boot string) uint64 { return n.lastSeq[boot] }

// LastBoot is the newest boot seen ("" before any).
func (n *Node) LastBoot() string {
	if len(n.Boots) == 0 {
		return ""
	}
	return n.Boots[len(n.Boots)-1]
}

// Line is what one line of the log gave.
type Line struct {
	// Record is the line's history record; nil when the line is not one
	// (text, stderr, unparsable) or was read before.
	Record *history.Record
	// Gap, when not nil, is the mark of the lines between the last one
	// read and this one that never arrived; it goes before Record.
	Gap *history.Record
	// Text is the line when it is not a record, for the person running it
	// (it is also kept as LastText).
	Text string
	// Problem says what was wrong with a line that looked like a record
	// but was not one, or claimed another node (recorded as this one).
	Problem string
}

// Take reads one line the node wrote (without its newline); stderr says
// which stream it came on. A line that claims another node is recorded as
// this one: the stream, not the line, says whose it is.
func (n *Node) Take(line []byte, stderr bool) Line {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return Line{}
	}
	if stderr || line[0] != '{' {
		n.LastText = wire.ClipTo(string(line), LastTextMax)
		return Line{Text: string(line)}
	}
	rec, ok, err := history.ParseNodeLog(line)
	if err != nil {
		return Line{Problem: fmt.Sprintf("unparsable log line (%v): %s", err, line)}
	}
	if !ok {
		return Line{}
	}
	var out Line
	if rec.Node != n.ID {
		out.Problem = fmt.Sprintf("log line claims node %d; recorded as node %d", rec.Node, n.ID)
		rec.Node = n.ID
	}
	last, seen := n.lastSeq[rec.Boot]
	if rec.Seq <= last {
		return out // read again after re-attaching
	}
	if rec.Seq > last+1 {
		n.Gaps++
		out.Gap = &history.Record{Time: rec.Time, Process: "node", Kind: history.KindMark, Node: n.ID, Boot: rec.Boot,
			Note: fmt.Sprintf("log gap: node %d boot %s lines %d..%d never arrived", n.ID, rec.Boot, last+1, rec.Seq-1)}
	}
	if !seen {
		n.Boots = append(n.Boots, rec.Boot)
	}
	n.lastSeq[rec.Boot] = rec.Seq
	out.Record = &rec
	return out
}

// Lines is an io.Writer that calls fn with every complete line written to
// it, without the newline: how a byte stream becomes Take's lines. Flush
// passes on a last line with no newline.
type Lines struct {
	buf []byte
	fn  func([]byte)
}

// NewLines is a Lines calling fn.
func NewLines(fn func([]byte)) *Lines { return &Lines{fn: fn} }

func (w *Lines) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Flush passes on what is left after the last newline.
func (w *Lines) Flush() {
	if len(w.buf) > 0 {
		w.fn(w.buf)
		w.buf = nil
	}
}
