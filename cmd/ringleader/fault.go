//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/harness"
	"github.com/ringleader-dev/ringleader/scenario"
)

func init() {
	commands["fault"] = command{summary: "break a running cluster by hand: kill, pause, partition, isolate, cut, loss, delay, heal", run: runFault}
}

// runFault: exit 0 when the fault is in effect, 1 when it could not be
// applied, 2 for a bad fault or flag (said before anything is touched).
func runFault(args []string) int {
	fs := flag.NewFlagSet("ringleader fault", flag.ContinueOnError)
	run := fs.String("run", worlds[liveWorld].defaultRun, "the cluster: compose (make up) or a harness run's label (docker ps shows it as org.ringleader.run)")
	within := fs.Duration("within", 10*time.Second, "how long to wait for the cluster to settle before printing the views")
	seed := fs.Int64("seed", 0, "seed for random targets (one, minority, ...; default: from the time)")
	verbose := fs.Bool("v", false, "print what the backend does (helpers started, latencies)")
	engines := enginesFlag(fs, "reach a cluster that spans these Docker engines (ringleader up --engines, run --engines)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader fault [flags] FAULT...\n\n"+
			"Applies one fault to a running cluster, the way a scenario step would, with\n"+
			"targets resolved from the nodes' views now; then waits for the cluster to settle\n"+
			"and prints every node's view. Faults stay in force when it exits (heal removes\n"+
			"cuts, loss and delay; restart and resume undo the others; clock --rate 1 restores a clock).\n"+
			"A cluster across Docker engines is reached with --engines (or RINGLEADER_ENGINES):\n"+
			"each fault is carried out on the engine that holds its node, the views name each\n"+
			"node's engine, and `partition engines` cuts every engine's nodes from the others'.\n\nFaults:\n%s\n\n"+
			"Examples:\n  ringleader fault partition 1,2,3 4,5\n  ringleader fault isolate leader\n"+
			"  ringleader fault cut 1 5 --one-way\n  ringleader fault clock leader --rate 0.4\n  ringleader fault clock 2 --jump 2s\n  ringleader fault heal\n"+
			"  ringleader fault --engines unix:///var/run/docker.sock,unix:///var/run/ringleader-h2.sock partition engines\n\nFlags:\n", scenario.WordsUsage)
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	words := fs.Args()
	// The words are checked before anything is touched; node IDs once
	// the cluster's members are known.
	if _, err := scenario.ParseWords(words, nil); err != nil {
		return usageError("fault", "%v", err)
	}
	if *engines != "" {
		if _, err := engine.ParseList(*engines); err != nil {
			return usageError("fault", "--engines: %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	progress := io.Discard
	if *verbose {
		progress = os.Stderr
	}
	es, err := connectEngines(ctx, *engines)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader fault: --engines: %v\n", err)
		return 1
	}
	b := worlds[liveWorld].attach(worldOptions{progress: progress, warnings: os.Stderr, engines: es})
	defer b.Close(context.Background())
	spec, err := b.Attach(ctx, *run, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader fault: %v\n", err)
		return 1
	}
	step, err := scenario.ParseWords(words, spec.Members)
	if err != nil {
		return usageError("fault", "%v", err)
	}
	hosts, placement := placementOf(b)
	if step.Fault.Op == chaos.Partition && step.Fault.Partition.Shape == chaos.Engines && len(placement) < 2 {
		fmt.Fprintf(os.Stderr, "ringleader fault: partition engines: cluster %s runs on one engine, so there is nothing to cut along; "+
			"a cluster across engines (ringleader up --engines A,B, run --engines) is reached with --engines A,B\n", *run)
		return 1
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	cluster := scenario.Cluster{Algorithm: spec.Algorithm, IDs: spec.Members, Quorum: spec.Quorum, Options: spec.Options, Timing: spec.Timing}
	p := harness.NewPlayer(b, cluster, *seed)
	before := b.State()
	t0 := time.Now()
	var sr harness.StepResult
	if err := p.Play(ctx, step, &sr); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader fault: %v\n", err)
		return 1
	}
	did := step.Fault.String()
	if sr.Resolved != "" {
		did += " → " + sr.Resolved
	}
	fmt.Printf("%s: %s, in effect after %d ms\n", spec.Name, did, time.Since(t0).Milliseconds())
	wait := scenario.Step{Op: scenario.OpWait, Stable: true, Within: *within}
	var ws harness.StepResult
	if err := p.Play(ctx, wait, &ws); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader fault: %v\n", err)
		return 1
	}
	after := b.State()
	if ws.Expect != nil && ws.Expect.Pass {
		fmt.Printf("settled after %d ms:\n", time.Since(t0).Milliseconds())
	} else {
		fmt.Printf("not settled within %v; the views now:\n", *within)
	}
	printViews(os.Stdout, spec.Members, before, after, engineNames(hosts, placement))
	return 0
}

// placementOf is which engine holds each node of the attached cluster
// (nil on one engine).
func placementOf(b chaos.Attacher) ([]string, chaos.Placement) {
	if p, ok := b.(chaos.Placed); ok {
		return p.Placement()
	}
	return nil, nil
}

// engineNames maps each placed node to its engine's address (nil on one
// engine).
func engineNames(hosts []string, p chaos.Placement) map[election.NodeID]string {
	if len(p) < 2 {
		return nil
	}
	out := map[election.NodeID]string{}
	for i, g := range p {
		for _, id := range g {
			out[id] = hosts[i]
		}
	}
	return out
}

// printViews is one line per node: its process, its view, what it cannot
// hear, and what changed since before; across engines (engines not nil)
// also the engine that holds it.
func printViews(w io.Writer, members []election.NodeID, before, after chaos.State, engines map[election.NodeID]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	engCol := func(s string) string {
		if engines == nil {
			return ""
		}
		return s + "\t"
	}
	fmt.Fprintln(tw, "NODE\t"+engCol("ENGINE")+"STATE\tLEADER\tEPOCH\tROLE\tDEAF TO\tWAS")
	for _, m := range members {
		v, ok := after.Views[m]
		leader, epoch, role := "-", "-", "-"
		if ok && after.Up[m] {
			leader, epoch, role = leaderText(v.Leader), fmt.Sprint(v.Epoch), string(v.Role)
		}
		var deaf []string
		for _, o := range members {
			if o != m && after.Cut[[2]election.NodeID{o, m}] {
				deaf = append(deaf, fmt.Sprint(o))
			}
		}
		state := after.Status(m)
		if after.Degraded(m) {
			state += "+degraded"
		}
		if c := after.ClockOf(m); c.Rate != 1 {
			state += fmt.Sprintf("+clock×%g", c.Rate)
		}
		was := ""
		if bv, ok := before.Views[m]; ok && (bv.Leader != v.Leader || before.Status(m) != after.Status(m)) {
			was = fmt.Sprintf("%s, leader %s", before.Status(m), leaderText(bv.Leader))
		}
		fmt.Fprintf(tw, "%d\t%s%s\t%s\t%s\t%s\t%s\t%s\n", m, engCol(engines[m]), state, leader, epoch, role, strings.Join(deaf, ","), was)
	}
	tw.Flush()
}

func leaderText(l election.NodeID) string {
	if l == election.None {
		return "none"
	}
	return fmt.Sprint(l)
}
