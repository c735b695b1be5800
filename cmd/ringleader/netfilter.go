package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringleader-dev/ringleader/docker/netfilter"
)

func init() {
	commands["netfilter"] = command{
		summary: "install network faults in this network namespace (run by the docker backend's helper containers)",
		run:     runNetfilter,
	}
}

const netfilterUsage = `Usage: ringleader netfilter apply [rule flags]   replace the ringleader table with these rules
       ringleader netfilter heal                  delete the ringleader table
       ringleader netfilter show                  print the table's rules as JSON
       ringleader netfilter delay --delay D [--jitter J] [rule flags]
                                                  install the rules and release queued packets after D±J until killed

Needs CAP_NET_ADMIN in the namespace; the docker backend runs it as
  docker run --user 0 --network container:<node> --cap-drop ALL --cap-add NET_ADMIN \
    --security-opt no-new-privileges:true --entrypoint /ringleader <image> netfilter ...
By hand, ringleader fault does all of this for you (ringleader fault -h).

Rule flags (apply and delay):
`

// printNetfilterUsage prints the actions and every rule flag on w.
func printNetfilterUsage(w io.Writer) {
	fmt.Fprint(w, netfilterUsage)
	fs := flag.NewFlagSet("netfilter", flag.ContinueOnError)
	var r netfilter.Rules
	r.Flags(fs)
	printFlags(w, fs)
	fmt.Fprint(w, "\nDelay flags:\n  --delay duration\n    \thow long each queued packet is held (e.g. 100ms)\n  --jitter duration\n    \tuniform random extra in [-jitter, +jitter]\n")
}

func runNetfilter(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || (len(args) == 2 && (args[1] == "-h" || args[1] == "--help")) {
		if len(args) == 0 {
			printNetfilterUsage(errOut)
			return 2
		}
		printNetfilterUsage(helpOut)
		return 0
	}
	sub, rest := args[0], args[1:]
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "ringleader netfilter %s: %v\n", sub, err)
		return 1
	}
	switch sub {
	case "apply":
		r, err := netfilter.Parse(rest)
		if err != nil {
			return usageError("netfilter apply", "%v", dashes(err.Error()))
		}
		if err := netfilter.Apply(r); err != nil {
			return fail(err)
		}
		fmt.Println("netfilter: installed:", r)
	case "heal", "show":
		if len(rest) > 0 {
			return usageError("netfilter "+sub, "takes no arguments, got %q", rest)
		}
		if sub == "heal" {
			if err := netfilter.Heal(); err != nil {
				return fail(err)
			}
			fmt.Println("netfilter: healed")
			return 0
		}
		r, err := netfilter.Read()
		if err != nil {
			return fail(err)
		}
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	case "delay":
		return runNetfilterDelay(rest)
	default:
		return usageError("netfilter", "unknown action %q (valid: apply, heal, show, delay)", sub)
	}
	return 0
}

// runNetfilterDelay installs the rules, binds their queue and releases
// every packet late until SIGTERM or SIGINT; then it removes the table, so
// a stopped helper leaves no queue rule behind.
func runNetfilterDelay(args []string) int {
	var (
		r             netfilter.Rules
		delay, jitter time.Duration
	)
	fs := flag.NewFlagSet("netfilter delay", flag.ContinueOnError)
	r.Flags(fs)
	fs.DurationVar(&delay, "delay", 0, "how long each queued packet is held (e.g. 100ms)")
	fs.DurationVar(&jitter, "jitter", 0, "uniform random extra in [-jitter, +jitter]")
	fs.Usage = func() { printNetfilterUsage(fs.Output()) }
	if status, done := parseFlags(fs, args); done {
		return status
	}
	if err := r.Validate(); err != nil {
		return usageError("netfilter delay", "%v", err)
	}
	if delay <= 0 || jitter < 0 || len(r.QueuePeers) == 0 {
		return usageError("netfilter delay", "need --delay > 0, --jitter >= 0 and --queue-peers (got delay %v, jitter %v, %d peers)", delay, jitter, len(r.QueuePeers))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := netfilter.Apply(r); err != nil {
		fmt.Fprintf(os.Stderr, "ringleader netfilter delay: %v\n", err)
		return 1
	}
	d := netfilter.Delayer{Queue: r.Queue, Delay: delay, Jitter: jitter, Ready: func() {
		fmt.Printf("netfilter: delaying %v±%v: %s\n", delay, jitter, r)
		fmt.Println("READY")
	}}
	err := d.Run(ctx)
	if herr := netfilter.Heal(); herr != nil && err == nil {
		err = herr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ringleader netfilter delay: %v\n", err)
		return 1
	}
	return 0
}
