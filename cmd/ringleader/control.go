package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ringleader-dev/ringleader/clock"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/trust"
)

func init() {
	commands["control"] = command{summary: "change a running node's clock, drop set or hold set, or start a gated node (the harness's control account; needs the cluster's secret)", run: runControl}
}

// runControl: exit 0 once the node answered that the change is in effect,
// 2 for a bad flag or a missing secret, 1 when the node cannot be reached,
// does not answer in time, or refuses.
func runControl(args []string) int {
	fs := flag.NewFlagSet("ringleader control", flag.ContinueOnError)
	server := fs.String("server", "nats://127.0.0.1:4222", "a node's NATS client URL (inside a node's container: its own server)")
	cluster := fs.String("cluster", "ringleader", "cluster name: the compose cluster's is compose, a harness run's is its run label")
	id := fs.Int("node", 0, "the node to change (required)")
	rate := fs.Float64("clock-rate", 0, fmt.Sprintf("set the node's clock rate, %g to %g (1 is real speed, 0.5 half speed)", clock.MinRate, clock.MaxRate))
	jump := fs.Duration("clock-jump", 0, "jump the node's clock by this much, whole milliseconds (e.g. 250ms, -1s)")
	dropFrom := fs.String("drop-from", "", "replace the node's drop set: the IDs whose messages it drops on arrival, comma-separated; empty drops nothing")
	holdFrom := fs.String("hold-from", "", "replace the node's hold set: the IDs whose messages it holds on arrival until a later set no longer names them, comma-separated; empty holds nothing (and delivers what was held)")
	start := fs.Bool("start", false, "start the election machine of a node that booted gated (RINGLEADER_GATED), after the rest of the request; a node that runs already takes it as done")
	timeout := fs.Duration("timeout", control.Timeout, "how long to wait for the node's answer")
	wait := fs.Duration("wait", 0, "how long to wait first for a node that is starting to listen: for its NATS server and its control subject (it logs its boot line before either); 0: a node that does not listen is an error at once")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ringleader control --node ID [--clock-rate R | --clock-jump D] [--drop-from IDS] [--hold-from IDS] [--start] [flags]\n\n"+
			"Logs in as the control account and asks one node to change its clock, its\n"+
			"drop set (the receiving end of a one-way cut) or its hold set (the receiving\n"+
			"end of a jam), live, or to start the machine of a node that booted gated\n"+
			"(the harness's way to put a scenario's opening faults first). Prints the node's answer\n"+
			"once the change is in effect. The secret comes from $%s, never a flag.\n\nFlags:\n", trust.SecretEnv)
		printFlags(fs.Output(), fs)
	}
	if status, done := parseFlags(fs, args); done {
		return status
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	c, err := controlOf(fs.NArg(), *id, given, *rate, *jump, *dropFrom, *holdFrom, *start)
	if err == nil && *timeout <= 0 {
		err = fmt.Errorf("--timeout: %v is not a positive duration", *timeout)
	}
	if err == nil && *wait < 0 {
		err = fmt.Errorf("--wait: %v is negative", *wait)
	}
	if err != nil {
		return usageError("control", "%v", err)
	}
	secret := os.Getenv(trust.SecretEnv)
	if secret == "" {
		return usageError("control", "%s: required: the cluster's secret (see docs/trust.md)", trust.SecretEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait+*timeout)
	defer cancel()
	r, err := node.SendControl(ctx, *server, *cluster, secret, election.NodeID(*id), c, *wait)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader %v\n", err)
		return 1
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// controlOf is the request the flags ask for, or what is wrong with them.
func controlOf(nargs, id int, given map[string]bool, rate float64, jump time.Duration, dropFrom, holdFrom string, start bool) (control.Request, error) {
	var c control.Request
	switch {
	case nargs > 0:
		return c, errors.New("unexpected arguments: control takes flags only")
	case id <= 0:
		return c, errors.New("--node: required: the ID of the node to change, a positive integer")
	case given["clock-rate"] && given["clock-jump"]:
		return c, errors.New("--clock-rate and --clock-jump: give one per request")
	case given["clock-rate"]:
		c = control.SetRate(rate)
	case given["clock-jump"]:
		if jump%time.Millisecond != 0 {
			return c, fmt.Errorf("--clock-jump: %v is not a whole number of milliseconds", jump)
		}
		c = control.Jump(jump)
	}
	for _, set := range []struct {
		flag, val, none string
		dst             **[]election.NodeID
	}{{"drop-from", dropFrom, "drop", &c.DropFrom}, {"hold-from", holdFrom, "hold", &c.HoldFrom}} {
		if !given[set.flag] {
			continue
		}
		ids := []election.NodeID{}
		for _, f := range strings.Split(set.val, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("--%s: %q is not a node ID; want IDs such as 1,2 (or empty to %s nothing)", set.flag, f, set.none)
			}
			ids = append(ids, election.NodeID(n))
		}
		*set.dst = &ids
	}
	c.Start = start
	if c.Clock == nil && c.DropFrom == nil && c.HoldFrom == nil && !c.Start {
		return c, errors.New("nothing to change: give --clock-rate, --clock-jump, --drop-from, --hold-from or --start")
	}
	if _, err := control.Encode(c); err != nil {
		return c, fmt.Errorf("%s: %v", flagOf(c), strings.TrimPrefix(err.Error(), "wire: bad-field: "))
	}
	return c, nil
}

// flagOf names the flag a refused request came from.
func flagOf(c control.Request) string {
	switch {
	case c.Clock != nil && c.Clock.Rate != nil:
		return "--clock-rate"
	case c.Clock != nil:
		return "--clock-jump"
	case c.HoldFrom != nil && c.DropFrom == nil:
		return "--hold-from"
	}
	return "--drop-from"
}
