package watch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/system"
)

// Engine is the part of the Docker client Follow uses: it lists, inspects
// and reads logs, and listens to events. It never creates, changes or
// signals anything.
type Engine interface {
	ContainerList(ctx context.Context, opts client.ContainerListOptions) (client.ContainerListResult, error)
	ContainerInspect(ctx context.Context, id string, opts client.ContainerInspectOptions) (client.ContainerInspectResult, error)
	ContainerLogs(ctx context.Context, id string, opts client.ContainerLogsOptions) (client.ContainerLogsResult, error)
	Events(ctx context.Context, opts client.EventsListOptions) client.EventsResult
}

// Input is one thing Follow saw, for the Board: a log line of a node
// (Line set) or what the engine says of its container.
type Input struct {
	Node      election.NodeID
	Container string
	// Line is one line the node wrote, without its newline; Logged is
	// when the engine received it.
	Line   []byte
	Logged time.Time
	// State and Isolated are the container's state (when Line and
	// Probed are nil).
	State    State
	Isolated bool
	// Probed is a real server's answer to its probe (docs/systems.md):
	// a member of a system cluster writes no event lines, so its view
	// comes from asking it.
	Probed *Probed
	// Live is false while Follow replays what happened before it
	// started, true once it follows as things happen.
	Live bool
	// Engine names the engine that holds the node, for a cluster that
	// spans several (FollowEngines); empty on one engine.
	Engine string
}

// Feed applies in to b and returns what changed.
func (in Input) Feed(b *Board) []Change {
	b.Locate(in.Node, in.Container, in.Engine)
	if in.Line != nil {
		return b.Line(in.Node, in.Line, in.Logged)
	}
	if in.Probed != nil {
		return b.Probe(in.Node, in.Container, *in.Probed, in.Logged)
	}
	return b.SetState(in.Node, in.Container, in.State, in.Isolated, in.Logged)
}

// Selector is the label filter of a run's node containers: the compose
// cluster's run is "compose", a harness run's is its run label.
func Selector(run string) client.Filters {
	return make(client.Filters).
		Add("label", docker.LabelProject+"="+docker.Project).
		Add("label", docker.LabelRun+"="+run).
		Add("label", docker.LabelRole+"="+docker.RoleNode)
}

// ErrNoNodes says no container carries the run's labels.
var ErrNoNodes = errors.New("no node containers")

// Follow sends every node's log and container state of run to out, until
// ctx ends: first what each container logged before (all nodes' lines
// merged in time order, with the container events the engine still
// remembers), then everything as it happens. Containers that restart are
// followed again; containers that appear later are followed too. It
// returns ErrNoNodes (wrapped) when no container carries the run's
// labels when it starts.
func Follow(ctx context.Context, eng Engine, run string, out chan<- Input) error {
	return FollowEngines(ctx, []Source{{Engine: eng}}, run, out)
}

// Source is one Docker engine a cluster's nodes run on, and the name the
// board shows for the nodes it holds (its address as --engines named it).
type Source struct {
	Name   string
	Engine Engine
}

// FollowEngines is Follow for a cluster that spans several engines (a
// run across engines, docs/engines.md): the nodes are looked for on
// every source, each node's log and state are read from the engine that
// holds it, and with more than one source every input names its node's
// engine (Input.Engine). It returns ErrNoNodes (wrapped) when no engine
// holds a container of the run when it starts.
func FollowEngines(ctx context.Context, srcs []Source, run string, out chan<- Input) error {
	if len(srcs) == 0 {
		return errors.New("watch: no engine to read the cluster from")
	}
	f := &follower{srcs: srcs, run: run, out: out, byID: map[string]*watched{}, serverIDs: map[string]election.NodeID{}}
	return f.watchAll(ctx)
}

type follower struct {
	srcs []Source
	run  string
	out  chan<- Input

	mu   sync.Mutex
	byID map[string]*watched
	// serverIDs map a system's server IDs to members, learnt from each
	// member's own answers (probe.go).
	serverIDs map[string]election.NodeID
	wg        sync.WaitGroup
}

// watched is one node container, on engine src (an index into the
// follower's sources).
type watched struct {
	id   string
	name string
	node election.NodeID
	tty  bool
	src  int
	// sys is the system a real server's container runs (nil for an
	// election node), ip its address on the run's network.
	sys *system.System
	ip  string

	mu      sync.Mutex
	lastTS  time.Time     // of the last log line read
	started chan struct{} // closed (and replaced) when the container starts
}

func (w *watched) wake() {
	w.mu.Lock()
	close(w.started)
	w.started = make(chan struct{})
	w.mu.Unlock()
}

// engineOf is the engine that holds w.
func (f *follower) engineOf(w *watched) Engine { return f.srcs[w.src].Engine }

// engineName is what inputs of engine src say of it: its name, when the
// cluster spans several engines.
func (f *follower) engineName(src int) string {
	if len(f.srcs) < 2 {
		return ""
	}
	return f.srcs[src].Name
}

// event is a message of one engine's event stream, with the engine's
// index.
type event struct {
	src int
	m   events.Message
}

// listen merges the events every engine sends that match opts into one
// channel; the first stream error ends it (errs).
func (f *follower) listen(ctx context.Context, opts client.EventsListOptions) (<-chan event, <-chan error) {
	msgs, errs := make(chan event), make(chan error, len(f.srcs))
	for i, s := range f.srcs {
		r := s.Engine.Events(ctx, opts)
		f.wg.Go(func() {
			for {
				select {
				case m, ok := <-r.Messages:
					if !ok {
						return
					}
					select {
					case msgs <- event{i, m}:
					case <-ctx.Done():
						return
					}
				case err := <-r.Err:
					errs <- err
					return
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return msgs, errs
}

func (f *follower) send(ctx context.Context, in Input) bool {
	select {
	case f.out <- in:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *follower) watchAll(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); f.wg.Wait() }()

	// Listen before listing, so nothing that happens in between is
	// missed; handle what was heard once the past is replayed.
	start := time.Now()
	sinceArg := unixArg(start)
	cev, cerr := f.listen(ctx, client.EventsListOptions{Since: sinceArg, Filters: Selector(f.run).Add("type", string(events.ContainerEventType))})
	nev, nerr := f.listen(ctx, client.EventsListOptions{Since: sinceArg, Filters: make(client.Filters).Add("type", string(events.NetworkEventType)).
		Add("event", string(events.ActionConnect)).Add("event", string(events.ActionDisconnect))})

	var (
		ws      []*watched
		states  []Input
		created = start
	)
	for src, s := range f.srcs {
		list, err := s.Engine.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: Selector(f.run)})
		if err != nil {
			return fmt.Errorf("watch: list run %s%s: %w", f.run, f.onEngine(src), err)
		}
		for _, c := range list.Items {
			w, st, err := f.inspect(ctx, src, c.ID)
			if err != nil {
				continue // removed meanwhile
			}
			ws = append(ws, w)
			states = append(states, st)
			created = minTime(created, time.Unix(c.Created, 0))
		}
	}
	if len(ws) == 0 {
		where := ""
		if len(f.srcs) > 1 {
			where = fmt.Sprintf(" on any of the %d engines", len(f.srcs))
		}
		return fmt.Errorf("watch: run %s: %w labelled %s=%s, %s=%s, %s=%s%s (is it up? make up starts the compose cluster)",
			f.run, ErrNoNodes, docker.LabelProject, docker.Project, docker.LabelRun, f.run, docker.LabelRole, docker.RoleNode, where)
	}
	var past []Input
	for src := range f.srcs {
		past = append(past, f.pastStates(ctx, src, ws, created, start)...)
	}
	if err := f.replay(ctx, ws, past); err != nil {
		return err
	}
	for _, st := range states {
		st.Logged, st.Live = time.Now(), true
		if !f.send(ctx, st) {
			return nil
		}
	}
	for _, w := range ws {
		f.add(ctx, w)
	}

	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-cev:
			f.containerEvent(ctx, e.src, e.m)
		case e := <-nev:
			f.networkEvent(ctx, e.src, e.m)
		case err := <-cerr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch: docker events: %w", err)
		case err := <-nerr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch: docker network events: %w", err)
		}
	}
}

// onEngine says which engine src is, in a message about a cluster that
// spans several ("" on one engine).
func (f *follower) onEngine(src int) string {
	if len(f.srcs) < 2 {
		return ""
	}
	return " on " + f.srcs[src].Name
}

func unixArg(t time.Time) string { return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

var nodeSuffix = regexp.MustCompile(`node(\d+)$`)

// inspect reads a container's node ID, state and networks. The node ID is
// its RINGLEADER_ID (the node contract; nothing else of the environment
// is read, and the cluster's secret there is never kept), else the number
// its name ends with.
func (f *follower) inspect(ctx context.Context, src int, id string) (*watched, Input, error) {
	res, err := f.srcs[src].Engine.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, Input{}, err
	}
	c := res.Container
	w := &watched{id: c.ID, name: strings.TrimPrefix(c.Name, "/"), src: src, started: make(chan struct{})}
	if c.Config != nil {
		w.tty = c.Config.Tty
		for _, e := range c.Config.Env {
			if v, ok := strings.CutPrefix(e, "RINGLEADER_ID="); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					w.node = election.NodeID(n)
				}
			}
		}
	}
	if c.Config != nil && c.Config.Labels[docker.LabelSystem] != "" {
		sys, id, err := docker.SystemOfLabels(c.Config.Labels)
		if err != nil {
			return nil, Input{}, fmt.Errorf("container %s: %w", w.name, err)
		}
		w.sys, w.node, w.ip = sys, id, firstIP(c)
	}
	if w.node == 0 {
		if m := nodeSuffix.FindStringSubmatch(w.name); m != nil {
			n, _ := strconv.Atoi(m[1])
			w.node = election.NodeID(n)
		}
	}
	in := stateInput(w, c)
	in.Engine = f.engineName(src)
	return w, in, nil
}

func stateInput(w *watched, c container.InspectResponse) Input {
	in := Input{Node: w.node, Container: w.name, State: Down}
	if s := c.State; s != nil {
		switch {
		case s.Paused:
			in.State = Paused
		case s.Running:
			in.State = Running
		}
	}
	in.Isolated = in.State != Down && (c.NetworkSettings == nil || len(c.NetworkSettings.Networks) == 0)
	return in
}

// pastStates asks engine src for the container events it still holds
// (it keeps the last few hundred) between from and until, as states.
func (f *follower) pastStates(ctx context.Context, src int, ws []*watched, from, until time.Time) []Input {
	byID := map[string]*watched{}
	for _, w := range ws {
		if w.src == src {
			byID[w.id] = w
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ev := f.srcs[src].Engine.Events(ctx, client.EventsListOptions{Since: unixArg(from.Add(-time.Second)), Until: unixArg(until),
		Filters: Selector(f.run).Add("type", string(events.ContainerEventType))})
	var out []Input
	for {
		select {
		case m, ok := <-ev.Messages:
			if !ok {
				return out
			}
			w := byID[m.Actor.ID]
			if s, ok := actionState(m.Action); ok && w != nil {
				out = append(out, Input{Node: w.node, Container: w.name, State: s, Logged: time.Unix(0, m.TimeNano), Engine: f.engineName(src)})
			}
		case <-ev.Err:
			return out // io.EOF at the end, or the engine refused: the logs suffice
		case <-ctx.Done():
			return out
		}
	}
}

// actionState is the state a container event leaves it in.
func actionState(a events.Action) (State, bool) {
	switch a {
	case events.ActionStart, events.ActionUnPause:
		return Running, true
	case events.ActionPause:
		return Paused, true
	case events.ActionDie, events.ActionDestroy:
		return Down, true
	}
	return Unknown, false
}

// replay reads every container's log so far and sends the lines, merged
// in time order with the past container states.
func (f *follower) replay(ctx context.Context, ws []*watched, past []Input) error {
	type stream struct {
		w    *watched
		ch   chan Input
		head *Input
	}
	rctx, cancel := context.WithCancel(ctx)
	var streams []*stream
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for _, w := range ws {
		s := &stream{w: w, ch: make(chan Input, 256)}
		streams = append(streams, s)
		wg.Go(func() {
			defer close(s.ch)
			if w.sys != nil {
				return // a server's log holds no event lines: its probes say its views
			}
			_ = f.readLog(rctx, w, false, func(in Input) bool {
				select {
				case s.ch <- in:
					return true
				case <-rctx.Done():
					return false
				}
			})
		})
	}
	next := func(s *stream) {
		if in, ok := <-s.ch; ok {
			s.head = &in
		} else {
			s.head = nil
		}
	}
	for _, s := range streams {
		next(s)
	}
	slices.SortStableFunc(past, func(a, b Input) int { return a.Logged.Compare(b.Logged) })
	for {
		var best *stream
		for _, s := range streams {
			if s.head != nil && (best == nil || s.head.Logged.Before(best.head.Logged)) {
				best = s
			}
		}
		if len(past) > 0 && (best == nil || !best.head.Logged.Before(past[0].Logged)) {
			if !f.send(ctx, past[0]) {
				return ctx.Err()
			}
			past = past[1:]
			continue
		}
		if best == nil {
			return ctx.Err()
		}
		if !f.send(ctx, *best.head) {
			return ctx.Err()
		}
		next(best)
	}
}

// add starts following w's log unless it is followed already.
func (f *follower) add(ctx context.Context, w *watched) *watched {
	f.mu.Lock()
	if old := f.byID[w.id]; old != nil {
		f.mu.Unlock()
		return old
	}
	f.byID[w.id] = w
	f.mu.Unlock()
	if w.sys != nil {
		f.wg.Go(func() { f.probe(ctx, w) })
	} else {
		f.wg.Go(func() { f.follow(ctx, w) })
	}
	return w
}

// follow reads w's log as it grows, for as long as ctx lasts. A docker
// log stream ends when the container stops; the follower waits for it to
// start again and attaches from the last line it read (the Board drops
// the lines read twice).
func (f *follower) follow(ctx context.Context, w *watched) {
	for {
		w.mu.Lock()
		started := w.started
		w.mu.Unlock()
		err := f.readLog(ctx, w, true, func(in Input) bool { return f.send(ctx, in) })
		if ctx.Err() != nil {
			return
		}
		res, ierr := f.engineOf(w).ContainerInspect(ctx, w.id, client.ContainerInspectOptions{})
		if ierr != nil && ctx.Err() == nil && isGone(ierr) {
			return // removed
		}
		if ierr == nil && res.Container.State != nil && res.Container.State.Running {
			if err != nil {
				// Do not spin against an engine that fails.
				select {
				case <-time.After(200 * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
			continue
		}
		select {
		case <-started:
		case <-time.After(5 * time.Second): // a start event missed: look again
		case <-ctx.Done():
			return
		}
	}
}

func isGone(err error) bool { return cerrdefs.IsNotFound(err) }

// readLog reads w's log from the last line read (all of it the first
// time), following it when follow is set, and hands every line to emit.
func (f *follower) readLog(ctx context.Context, w *watched, follow bool, emit func(Input) bool) error {
	w.mu.Lock()
	since := w.lastTS
	w.mu.Unlock()
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: follow, Timestamps: true}
	if !since.IsZero() {
		opts.Since = unixArg(since)
	}
	rc, err := f.engineOf(w).ContainerLogs(ctx, w.id, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	go func() {
		var err error
		if w.tty {
			_, err = io.Copy(pw, rc)
		} else {
			_, err = stdcopy.StdCopy(pw, pw, rc)
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		ts, rest, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, string(ts))
		if err != nil {
			continue
		}
		w.mu.Lock()
		if t.After(w.lastTS) {
			w.lastTS = t
		}
		w.mu.Unlock()
		line := bytes.Clone(bytes.TrimRight(rest, "\r"))
		if !emit(Input{Node: w.node, Container: w.name, Line: line, Logged: t, Live: follow, Engine: f.engineName(w.src)}) {
			return ctx.Err()
		}
	}
	return sc.Err()
}

func (f *follower) lookup(id string) *watched {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byID[id]
}

func (f *follower) containerEvent(ctx context.Context, src int, m events.Message) {
	s, ok := actionState(m.Action)
	if !ok && m.Action != events.ActionCreate {
		return
	}
	w := f.lookup(m.Actor.ID)
	if w == nil {
		// A node container that appeared after the start.
		nw, st, err := f.inspect(ctx, src, m.Actor.ID)
		if err != nil {
			return
		}
		w = f.add(ctx, nw)
		st.Logged, st.Live = time.Unix(0, m.TimeNano), true
		f.send(ctx, st)
		return
	}
	if !ok {
		return
	}
	in := Input{Node: w.node, Container: w.name, State: s, Logged: time.Unix(0, m.TimeNano), Live: true, Engine: f.engineName(w.src)}
	if s == Running {
		// Started again (or unpaused): is it on a network?
		if _, st, err := f.inspect(ctx, w.src, w.id); err == nil {
			in.Isolated = st.Isolated
		}
		if m.Action == events.ActionStart {
			w.wake()
		}
	}
	f.send(ctx, in)
}

// networkEvent: a node container was connected to or disconnected from a
// network; it is isolated when it is attached to none.
func (f *follower) networkEvent(ctx context.Context, src int, m events.Message) {
	w := f.lookup(m.Actor.Attributes["container"])
	if w == nil || w.src != src {
		return
	}
	_, st, err := f.inspect(ctx, w.src, w.id)
	if err != nil {
		return
	}
	st.Logged, st.Live = time.Unix(0, m.TimeNano), true
	f.send(ctx, st)
}
