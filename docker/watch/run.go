package watch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"
)

// Output is how Run shows the board on Out.
type Output int

const (
	// Lines: one line of text per change (for a pipe or a file).
	Lines Output = iota
	// Screen: a view of every node redrawn in place with ANSI escapes,
	// at most ten times a second (for a terminal).
	Screen
	// JSON: one JSON record per change (a Change), for tools.
	JSON
)

// Options configure Run.
type Options struct {
	// Run is the run label of the cluster: "compose" for the compose
	// cluster, a harness run's label otherwise.
	Run    string
	Output Output
	Out    io.Writer
	// HTTP, when set, is a loopback address to serve the live page on
	// (see CheckLoopback); Served is told the address it listens on.
	HTTP   string
	Served func(url string)
	// Engine reads the containers (required unless Engines is given: the
	// command line opens the local Docker engine's client).
	Engine Engine
	// Engines, when given, are every engine of a cluster that spans
	// several (FollowEngines), in --engines order; Engine is then unused.
	Engines []Source
	// Window is the span rates are counted over (0: DefaultRateWindow).
	Window time.Duration
}

// errOutput marks a failed write: the reader has gone (a closed pipe).
var errOutput = errors.New("watch: output closed")

// OutputClosed reports whether Run ended because its output went away.
func OutputClosed(err error) bool { return errors.Is(err, errOutput) }

// Run shows run's nodes on o.Out (and on the live page) until ctx ends,
// the output is closed or the engine fails. It returns nil when ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Out == nil {
		o.Out = io.Discard
	}
	var srv *server
	if o.HTTP != "" {
		var err error
		if srv, err = listen(o.HTTP, o.Run); err != nil {
			return err
		}
		defer srv.close()
		if o.Served != nil {
			o.Served(srv.url())
		}
	}
	srcs := o.Engines
	if len(srcs) == 0 && o.Engine != nil {
		srcs = []Source{{Engine: o.Engine}}
	}
	if len(srcs) == 0 {
		return errors.New("watch: no engine to read the cluster from (Options.Engine)")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inputs := make(chan Input, 1024)
	followed := make(chan error, 1)
	go func() { followed <- FollowEngines(ctx, srcs, o.Run, inputs) }()
	return show(ctx, NewBoard(o.Window), o, srv, inputs, followed)
}

// show drives the board from inputs and draws it until ctx ends or the
// follower stops.
func show(ctx context.Context, b *Board, o Options, srv *server, inputs <-chan Input, followed <-chan error) error {
	var scr *screen
	if o.Output == Screen {
		scr = newScreen(o.Out, o.Run)
		if err := scr.start(); err != nil {
			return err
		}
		defer scr.stop()
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var (
		dirty    bool
		lastDraw time.Time
		lastTick time.Time
	)
	enc := json.NewEncoder(o.Out)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-followed:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case in := <-inputs:
			for _, c := range in.Feed(b) {
				switch o.Output {
				case JSON:
					if err := enc.Encode(c); err != nil {
						return errors.Join(errOutput, err)
					}
				case Lines:
					if _, err := io.WriteString(o.Out, lineOf(c)+"\n"); err != nil {
						return errors.Join(errOutput, err)
					}
				}
				if srv != nil {
					srv.publish(c)
				}
				dirty = true
			}
		case now := <-tick.C:
			// Rates move with time alone: redraw at least once a
			// second, changes at most ten times a second.
			if scr != nil && (dirty || now.Sub(lastDraw) >= time.Second) {
				if err := scr.draw(b, now); err != nil {
					return errors.Join(errOutput, err)
				}
				lastDraw, dirty = now, false
			}
			if srv != nil && now.Sub(lastTick) >= 500*time.Millisecond {
				srv.tick(b, now)
				lastTick = now
			}
		}
	}
}
