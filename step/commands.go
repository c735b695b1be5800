package step

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/check"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/sim"
)

// Usage is the transcript language, one command a line.
const Usage = `cluster ALG n=N [quorum=majority] [seed=S] [delay=DIST] [hints=on] [ids=3,1,2] [options=K=V,K=V]
                       build and boot a cluster (DIST as sim -delay: 1ms, 0.5ms-5ms, …;
                       options the algorithm's, as --option takes them)
step [K]               process the next K pending events (default 1), each with what it caused
deliver [to=N] [from=N] [type=T] [all]
                       process events in order until the next matching message has
                       arrived (all: every matching message pending now)
run DURATION           process every event due within DURATION; show view changes
stabilize [MAX]        run until no election message is in flight and views are quiet
fire N|all TIMER       fire an armed timer now, ahead of its deadline
hint TO PEER           tell TO that PEER is down (EventPeerDown), true or not
receive TO TYPE from=N [epoch=E] [seq=S] [candidate=C] [phase=P]
                       hand TO a message no network sent (stale, forged)
fault WORDS…           a fault as ` + "`ringleader fault`" + ` takes it (kill leader, cut 1 2 --one-way, heal)
views                  every node's state and view
pending                what the queue holds, in the order it will happen
timers [N]             armed timers
counts [reset]         messages sent by type since the last reset
check [NAME…]          the checkers (default: those the algorithm claims) on the history so far`

// Transcript runs transcript commands on a cluster the first command
// (cluster) builds.
type Transcript struct {
	D *Driver
}

// Do runs one command line and returns what it prints.
func (t *Transcript) Do(words []string) (string, error) {
	if len(words) == 0 {
		return "", fmt.Errorf("no command")
	}
	cmd, args := words[0], words[1:]
	if cmd == "cluster" {
		d, err := build(args)
		if err != nil {
			return "", err
		}
		t.D = d
		return d.shownSince(false), nil
	}
	if t.D == nil {
		return "", fmt.Errorf("%s: no cluster yet (start with: cluster ALG n=N)", cmd)
	}
	return t.D.do(cmd, args)
}

// build reads the cluster command.
func build(args []string) (*Driver, error) {
	pos, kv, err := split(args, "n", "quorum", "seed", "delay", "hints", "ids", "options")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(pos) != 1 {
		return nil, fmt.Errorf("cluster: name one algorithm (cluster bully n=5)")
	}
	opts := sim.Options{Algorithm: pos[0], Quorum: election.QuorumMode(kv["quorum"])}
	switch {
	case kv["ids"] != "":
		if opts.Members, err = sim.ParseIDs(kv["ids"]); err != nil {
			return nil, fmt.Errorf("cluster ids: %w", err)
		}
	default:
		n, err := strconv.Atoi(kv["n"])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("cluster: n=%q is not a cluster size (n=5)", kv["n"])
		}
		opts.Members = election.FirstIDs(n)
	}
	if s := kv["options"]; s != "" {
		if opts.Options, err = election.ParseOptions(s); err != nil {
			return nil, fmt.Errorf("cluster options: %w", err)
		}
	}
	if s := kv["seed"]; s != "" {
		if opts.Seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, fmt.Errorf("cluster: seed=%q is not an integer", s)
		}
	}
	if s := kv["delay"]; s != "" {
		if opts.Delay, err = sim.ParseDist(s); err != nil {
			return nil, fmt.Errorf("cluster delay: %w", err)
		}
	}
	switch kv["hints"] {
	case "", "off":
	case "on":
		opts.Hints = sim.DefaultHintsFor(len(opts.Members))
	default:
		return nil, fmt.Errorf("cluster: hints=%q, want on or off", kv["hints"])
	}
	return New(opts)
}

func (d *Driver) do(cmd string, args []string) (string, error) {
	switch cmd {
	case "step":
		k := 1
		if len(args) == 1 {
			var err error
			if k, err = strconv.Atoi(args[0]); err != nil || k < 1 {
				return "", fmt.Errorf("step: %q is not a count of events", args[0])
			}
		}
		var b strings.Builder
		for range k {
			if !d.stepShown(&b) {
				b.WriteString("nothing pending\n")
				break
			}
		}
		return b.String(), nil
	case "deliver":
		return d.deliver(args)
	case "run":
		if len(args) != 1 {
			return "", fmt.Errorf("run takes one DURATION (run 1s)")
		}
		dur, err := time.ParseDuration(args[0])
		if err != nil {
			return "", fmt.Errorf("run: %w", err)
		}
		d.RunFor(dur)
		return d.shownSince(false), nil
	case "stabilize":
		max := time.Minute
		if len(args) == 1 {
			var err error
			if max, err = time.ParseDuration(args[0]); err != nil {
				return "", fmt.Errorf("stabilize: %w", err)
			}
		}
		quiet := d.Stabilize(max)
		out := d.shownSince(false)
		if !quiet {
			out += fmt.Sprintf("still electing after %v\n", max)
		}
		return out, nil
	case "fire":
		if len(args) != 2 {
			return "", fmt.Errorf("fire takes a node (or all) and a timer name")
		}
		if args[0] == "all" {
			n := d.FireAll(args[1])
			return fmt.Sprintf("%s fired on %d nodes\n", args[1], n) + d.shownSince(true), nil
		}
		id, err := nodeArg(args[0])
		if err != nil {
			return "", err
		}
		if err := d.Fire(id, args[1]); err != nil {
			return "", err
		}
		return d.shownSince(true), nil
	case "hint":
		if len(args) != 2 {
			return "", fmt.Errorf("hint takes TO and PEER (hint 1 5: node 1 hears 5 is down)")
		}
		to, err := nodeArg(args[0])
		if err != nil {
			return "", err
		}
		peer, err := nodeArg(args[1])
		if err != nil {
			return "", err
		}
		if err := d.Hint(to, peer); err != nil {
			return "", err
		}
		return d.shownSince(true), nil
	case "receive":
		return d.receive(args)
	case "fault":
		did, err := d.Fault(args...)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s: %s\n", strings.Join(args, " "), did) + d.shownSince(true), nil
	case "views":
		return d.views(), nil
	case "pending":
		var b strings.Builder
		for _, p := range d.Sim.Pending() {
			fmt.Fprintf(&b, "%s %s\n", at(p.At), pendingText(p))
		}
		if b.Len() == 0 {
			return "nothing pending\n", nil
		}
		return b.String(), nil
	case "timers":
		return d.timers(args)
	case "counts":
		out := countsText(d.Counts())
		if len(args) == 1 && args[0] == "reset" {
			d.ResetCounts()
		}
		return out, nil
	case "check":
		names := make([]check.Name, len(args))
		for i, a := range args {
			n, err := check.ParseName(a)
			if err != nil {
				return "", err
			}
			names[i] = n
		}
		var b strings.Builder
		for _, v := range d.CheckNow(names...) {
			verdict := "pass"
			if !v.Pass {
				verdict = "FAIL"
			}
			fmt.Fprintf(&b, "%s: %s: %s\n", v.Checker, verdict, v.Summary)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown command %q; the commands:\n%s", cmd, Usage)
}

// CheckNow is Check judged now rather than at the last record: a mark at
// the current instant ends the copy of the history the checkers read (the
// driver's own history is not touched).
func (d *Driver) CheckNow(names ...check.Name) []check.Verdict {
	recs := append(d.Records(), history.Record{Time: d.Sim.Time(), Process: "harness", Kind: history.KindMark, Note: "check"})
	return check.Run(recs, check.Options{
		Algorithm: d.Sim.Algorithm(), Quorum: d.opts.Quorum, Members: d.Members(), Timing: d.Timing(),
	}, names...)
}

// stepShown processes one event and writes it and what it caused.
func (d *Driver) stepShown(b *strings.Builder) bool {
	p, out, ok := d.Next()
	if !ok {
		return false
	}
	fmt.Fprintf(b, "%s %s: %s\n", at(p.At), pendingText(p), out)
	b.WriteString(indent(d.shownSince(true)))
	return true
}

func (d *Driver) deliver(args []string) (string, error) {
	pos, kv, err := split(args, "to", "from", "type")
	if err != nil {
		return "", fmt.Errorf("deliver: %w", err)
	}
	all := slices.Equal(pos, []string{"all"})
	if len(pos) > 0 && !all {
		return "", fmt.Errorf("deliver: unexpected %q (deliver [to=N] [from=N] [type=T] [all])", pos)
	}
	match := func(p sim.Pending) bool {
		return p.Kind == sim.PendingDeliver &&
			(kv["to"] == "" || kv["to"] == strconv.Itoa(int(p.Node))) &&
			(kv["from"] == "" || kv["from"] == strconv.Itoa(int(p.From))) &&
			(kv["type"] == "" || kv["type"] == p.Msg.Type)
	}
	want := map[uint64]bool{}
	for _, p := range d.Sim.Pending() {
		if match(p) {
			want[p.Seq] = true
			if !all {
				break
			}
		}
	}
	if len(want) == 0 {
		return "no such message pending\n", nil
	}
	var b strings.Builder
	for len(want) > 0 {
		p, out, ok := d.Next()
		if !ok {
			break
		}
		if p.Kind == sim.PendingDeliver {
			delete(want, p.Seq)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", at(p.At), pendingText(p), out)
		b.WriteString(indent(d.shownSince(true)))
	}
	return b.String(), nil
}

func (d *Driver) receive(args []string) (string, error) {
	pos, kv, err := split(args, "from", "epoch", "seq", "candidate", "phase")
	if err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	if len(pos) != 2 {
		return "", fmt.Errorf("receive takes TO and TYPE (receive 1 HEARTBEAT from=3 epoch=1)")
	}
	to, err := nodeArg(pos[0])
	if err != nil {
		return "", err
	}
	m := election.Message{Type: pos[1]}
	ints := map[string]*int64{}
	var from, cand, phase, epoch, seq int64
	ints["from"], ints["candidate"], ints["phase"], ints["epoch"], ints["seq"] = &from, &cand, &phase, &epoch, &seq
	for k, p := range ints {
		if s := kv[k]; s != "" {
			if *p, err = strconv.ParseInt(s, 10, 64); err != nil {
				return "", fmt.Errorf("receive: %s=%q is not an integer", k, s)
			}
		}
	}
	if phase < 0 || phase > math.MaxInt32 {
		return "", fmt.Errorf("receive: phase=%d is out of range (0 to %d)", phase, math.MaxInt32)
	}
	m.From, m.Candidate, m.Phase, m.Epoch, m.Seq = election.NodeID(from), election.NodeID(cand), int32(phase), uint64(epoch), uint64(seq)
	if err := d.Receive(to, m); err != nil {
		return "", err
	}
	return d.shownSince(true), nil
}

func (d *Driver) views() string {
	var b strings.Builder
	for _, id := range d.Members() {
		fmt.Fprintf(&b, "%d: %s\n", id, d.nodeText(id))
	}
	return b.String()
}

// nodeText is a node's state and view in words.
func (d *Driver) nodeText(id election.NodeID) string {
	if !d.Sim.Up(id) {
		return "down"
	}
	s := viewText(d.Sim.View(id))
	if d.Sim.Paused(id) {
		s = "paused, " + s
	}
	return s
}

func (d *Driver) timers(args []string) (string, error) {
	ids := d.Members()
	if len(args) == 1 {
		id, err := nodeArg(args[0])
		if err != nil {
			return "", err
		}
		ids = []election.NodeID{id}
	}
	var b strings.Builder
	for _, id := range ids {
		var ts []string
		for _, t := range d.Sim.Timers(id) {
			ts = append(ts, fmt.Sprintf("%s@%s", t.Name, at(t.At)))
		}
		fmt.Fprintf(&b, "%d: %s\n", id, strings.Join(ts, " "))
	}
	return b.String(), nil
}

// shownSince describes the history records not yet shown: view changes,
// boots and stops, and, with messages, what was sent.
func (d *Driver) shownSince(messages bool) string {
	recs := d.Records()
	var b strings.Builder
	for _, r := range recs[d.shown:] {
		switch r.Kind {
		case history.KindView:
			fmt.Fprintf(&b, "%s %d: %s\n", at(r.Time.Sub(history.SimOrigin)), r.Node, viewText(*r.View))
		case history.KindBoot:
			if r.Seq > 0 && d.shown > 0 {
				fmt.Fprintf(&b, "%s %d: boots\n", at(r.Time.Sub(history.SimOrigin)), r.Node)
			}
		case history.KindStop:
			fmt.Fprintf(&b, "%s %d: stops\n", at(r.Time.Sub(history.SimOrigin)), r.Node)
		case history.KindSend:
			if messages {
				fmt.Fprintf(&b, "send %s\n", msgText(*r.Msg))
			}
		}
	}
	d.shown = len(recs)
	return b.String()
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// at is a virtual instant as a transcript shows it.
func at(t time.Duration) string { return fmt.Sprintf("[%v]", t.Round(time.Microsecond)) }

func viewText(v election.View) string {
	switch v.Role {
	case election.Leader:
		return fmt.Sprintf("leader, epoch %d", v.Epoch)
	case election.Follower:
		return fmt.Sprintf("follows %d, epoch %d", v.Leader, v.Epoch)
	case "":
		return "no view yet"
	}
	return fmt.Sprintf("%s, epoch %d", v.Role, v.Epoch)
}

func pendingText(p sim.Pending) string {
	switch p.Kind {
	case sim.PendingDeliver:
		return msgText(p.Msg)
	case sim.PendingTimer:
		return fmt.Sprintf("timer %d %s", p.Node, p.Timer)
	}
	return fmt.Sprintf("hint %d: %d is down", p.Node, p.From)
}

// msgText is a message on one line: type, link, and its set fields.
func msgText(m election.Message) string {
	s := fmt.Sprintf("%s %d→%d epoch=%d", m.Type, m.From, m.To, m.Epoch)
	if m.Candidate != 0 {
		s += fmt.Sprintf(" candidate=%d", m.Candidate)
	}
	if m.Phase != 0 {
		s += fmt.Sprintf(" phase=%d", m.Phase)
	}
	if m.Hop != 0 {
		s += fmt.Sprintf(" hop=%d", m.Hop)
	}
	if m.Dir != 0 {
		s += fmt.Sprintf(" dir=%+d", m.Dir)
	}
	if m.Seq != 0 {
		s += fmt.Sprintf(" seq=%d", m.Seq)
	}
	if m.Reply {
		s += " reply"
	}
	if len(m.Members) > 0 {
		s += " members=" + idsText(m.Members)
	}
	return s
}

func countsText(c map[string]int) string {
	types := make([]string, 0, len(c))
	total := 0
	for t, k := range c {
		types = append(types, t)
		total += k
	}
	slices.Sort(types)
	var b strings.Builder
	for _, t := range types {
		fmt.Fprintf(&b, "%s %d\n", t, c[t])
	}
	fmt.Fprintf(&b, "total %d\n", total)
	return b.String()
}

func resolved(f chaos.Fault) string {
	switch {
	case len(f.Groups) > 0:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = idsText(g)
		}
		return "groups " + strings.Join(parts, " | ")
	case len(f.Links) > 0:
		parts := make([]string, len(f.Links))
		for i, l := range f.Links {
			parts[i] = fmt.Sprintf("%d→%d", l[0], l[1])
		}
		return "cut " + strings.Join(parts, " ")
	case len(f.Nodes) > 0:
		return "nodes " + idsText(f.Nodes)
	}
	return "ok"
}

func idsText(ids []election.NodeID) string {
	return string(election.AppendIDs(nil, ids))
}

func nodeArg(s string) (election.NodeID, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a node ID", s)
	}
	return election.NodeID(n), nil
}

// split separates positional words from key=value words, refusing keys
// not in known.
func split(args []string, known ...string) ([]string, map[string]string, error) {
	var pos []string
	kv := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			pos = append(pos, a)
			continue
		}
		if !slices.Contains(known, k) {
			return nil, nil, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(known, ", "))
		}
		kv[k] = v
	}
	return pos, kv, nil
}
