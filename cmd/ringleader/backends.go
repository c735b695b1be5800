//go:build !nodeimage

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/docker/watch"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// This file is the one place the command line names its backends' code.
// The commands reach a backend through chaos.Backend (run), chaos.Attacher
// (fault, run --attach) and watch.Engine (watch); a second backend that can
// hold a cluster is one more entry in worlds.

// A world is a backend implementation as the commands know it: what it
// is able to do, asked by the commands instead of its name.
type world struct {
	// title names the world where a table shows it ("containers").
	title string
	// real: its clusters are real processes on a real network. A system
	// (real servers) runs only there; an algorithm that needs the
	// simulator's synchrony (election.Algorithm.SimOnly) never does.
	real bool
	// imaged: its nodes run from an image, so a program without an
	// image of its own (cluster.image) goes into the node image and
	// must be one static executable.
	imaged bool
	// capacity refuses, before anything starts, a cluster of n nodes the
	// machine cannot hold; nil: any size.
	capacity func(ctx context.Context, n int) error
	// spreadCapacity refuses, before anything starts, a cluster spread
	// over engines (--engines) that a machine holding several of them
	// cannot hold; nil: the world has no engines.
	spreadCapacity func(ctx context.Context, es []engine.Engine, members []election.NodeID, p chaos.Placement) error
	// parallel is how many runs of clusters of these sizes go at once
	// unless --parallel says; parallelRule says how, for the help.
	parallel     func(ctx context.Context, sizes []int) (int, error)
	parallelRule string
	// build makes what starting a cluster needs (the node image); nil:
	// nothing to make.
	build func(ctx context.Context, o worldOptions) error
	// start is a backend that starts a cluster of its own.
	start func(o worldOptions) chaos.Backend
	// attach is a backend that adopts a running cluster; nil: this
	// world's clusters do not outlive the command that started them.
	attach func(o worldOptions) chaos.Attacher
	// defaultRun is the run label of the cluster fault and watch reach
	// when none is named (the one `make up` starts).
	defaultRun string
	// watch opens what `ringleader watch` reads a running cluster through
	// (one source per engine of es, or the one engine when es names
	// fewer than two), and what closes it; nil: nothing to watch.
	watch func(ctx context.Context, es []engine.Engine) ([]watch.Source, func() error, error)
	// describe reads a running cluster's shape without attaching (for a
	// cluster of programs, the program as its nodes describe it,
	// registered in this process); programCommand is the command line a
	// program runs as in this world's nodes. run --attach compares the
	// two for a scenario that names a program, so that the program is
	// never started here.
	describe       func(ctx context.Context, run string, es []engine.Engine) (chaos.ClusterSpec, error)
	programCommand func(argv []string, runtime string) (string, error)
}

// worldOptions are the command-line settings a backend takes.
type worldOptions struct {
	image              string
	progress, warnings io.Writer
	// engines a cluster spans (--engines); none: the one engine.
	engines []engine.Engine
}

// worlds by the name --backend takes.
var worlds = map[string]world{
	"docker": {
		title: "containers", real: true, imaged: true,
		capacity:       docker.CheckCapacity,
		spreadCapacity: docker.CheckSpread,
		parallel:       docker.Parallel,
		parallelRule: fmt.Sprintf("%s of the engine's machine, fewer when the largest scenarios' nodes would not fit together in its memory (%d MiB each) or on its cores (%d each)",
			perCore(docker.RunsPerCore), docker.NodeMemory>>20, docker.NodesPerCore),
		build: func(ctx context.Context, o worldOptions) error { return docker.BuildImage(ctx, o.image, nil) },
		start: func(o worldOptions) chaos.Backend {
			return docker.New(docker.WithImage(o.image), docker.WithBuild(false), docker.WithWarnings(o.warnings), docker.WithProgress(o.progress), docker.WithEngines(o.engines))
		},
		attach: func(o worldOptions) chaos.Attacher {
			return docker.New(docker.WithBuild(false), docker.WithWarnings(o.warnings), docker.WithProgress(o.progress), docker.WithEngines(o.engines))
		},
		defaultRun:     docker.ComposeRun,
		describe:       docker.Describe,
		programCommand: docker.ProgramCommand,
		watch:          watchSources,
	},
	"sim": {
		title:        "simulator",
		parallel:     func(context.Context, []int) (int, error) { return runtime.NumCPU(), nil },
		parallelRule: "one per core",
		start:        func(worldOptions) chaos.Backend { return &sim.Backend{} },
	},
}

// watchSources opens a client of every engine of es for watch (the
// process's own engine when es names fewer than two); the returned
// function closes them.
func watchSources(ctx context.Context, es []engine.Engine) ([]watch.Source, func() error, error) {
	if len(es) < 2 {
		cli, err := docker.NewClient(ctx)
		if err != nil {
			return nil, nil, err
		}
		return []watch.Source{{Engine: cli}}, cli.Close, nil
	}
	var (
		srcs   []watch.Source
		closes []func() error
	)
	closeAll := func() error {
		var errs []error
		for _, c := range closes {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	for _, e := range es {
		c, err := e.Client()
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		srcs = append(srcs, watch.Source{Name: e.Host, Engine: c})
		closes = append(closes, c.Close)
	}
	return srcs, closeAll, nil
}

// perCore says n runs per core in words.
func perCore(n int) string {
	if n == 1 {
		return "one per core"
	}
	return fmt.Sprintf("%d per core", n)
}

// worldNames lists the names --backend takes, for a message: "docker or sim".
func worldNames() string {
	names := slices.Sorted(maps.Keys(worlds))
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// liveWorld is the world whose clusters outlive a command: the one fault,
// run --attach and watch reach, and where run starts its clusters unless
// told. simWorld is where compare runs unless told.
const (
	liveWorld = "docker"
	simWorld  = "sim"
)

// defaultImage is the node image `run` starts containers from.
const defaultImage = docker.DefaultImage
