// Command bully-go is the project's own Bully (package election/bully)
// as an external program: it speaks the protocol of docs/protocol.md on
// its stdin and stdout, so the simulator runs it over a pipe exactly as it
// runs a program in any other language. Its histories equal the in-process
// Bully's for the same seeds (program's TestGoProgramEqualsInProcess):
// a cross-check of the pipe.
//
//	go build -o bully-go ./examples/bully-go
//	ringleader sim explore --program ./bully-go --n 5
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/bully"
	"github.com/ringleader-dev/ringleader/program"
)

func main() {
	// The explorer runs a program on one CPU (sim explore --pin), so
	// GOMAXPROCS defaults to 1. With one P, every blocking read of the
	// next event makes the runtime hand that P to another thread (sysmon
	// retakes a P held in a system call when no other P is idle): a
	// wake-up per event. A second, idle P stops that; docs/protocol.md,
	// "Cost".
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	alg, err := election.Lookup("bully")
	if err == nil {
		err = program.Serve(os.Stdin, os.Stdout, alg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bully-go:", err)
		os.Exit(1)
	}
}
