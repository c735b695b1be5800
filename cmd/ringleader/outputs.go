//go:build !nodeimage

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ringleader-dev/ringleader/outpath"
	"github.com/ringleader-dev/ringleader/scenario"
)

// outputPath is one path a command will write, named by the flag that gave it.
type outputPath struct {
	flag string // "--junit"
	path string
	kind outpath.Kind
	// madeBy is the directory the command makes itself, if missing,
	// before it writes path: the store of `run --junit store/junit.xml`.
	madeBy string
	// ours, for a file, is what the command's own file of this kind
	// looks like: an existing file that does not is not replaced.
	ours *outpath.Signature
}

// checkOutputs checks every output path before any work starts (see
// package outpath) and prints one line per bad one, prefixed with the
// command's name. It returns false when any is bad: the command then
// exits 2 having written nothing.
func checkOutputs(stderr io.Writer, cmd string, outs ...outputPath) bool {
	ok := true
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		err := outpath.Check(o.path, o.kind)
		if err == nil && o.ours != nil {
			err = outpath.CheckOurs(o.path, *o.ours)
		}
		if err != nil && o.madeBy != "" && filepath.Clean(filepath.Dir(o.path)) == filepath.Clean(o.madeBy) {
			if _, serr := os.Stat(o.madeBy); os.IsNotExist(serr) {
				// The directory comes with the run, and its own
				// check (listed before) decides.
				err = nil
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "ringleader %s: %s %v\n", cmd, o.flag, err)
			ok = false
		}
	}
	return ok
}

// checkRunOutputs checks run's outputs: the store, each scenario's
// directory in it, and the JUnit file (which may sit in a store the run
// makes).
func checkRunOutputs(stderr io.Writer, f runFlags, scs []*scenario.Scenario) bool {
	store := f.store
	if store == "" {
		store = "store"
	}
	outs := []outputPath{{flag: "--store", path: store, kind: outpath.Dir}}
	if fi, err := os.Stat(store); err == nil && fi.IsDir() && outpath.Check(store, outpath.Dir) == nil {
		for _, sc := range scs {
			outs = append(outs, outputPath{flag: "--store", path: filepath.Join(store, sc.Name), kind: outpath.Dir})
		}
	}
	outs = append(outs, outputPath{flag: "--junit", path: f.junit, kind: outpath.File, madeBy: store, ours: &outpath.JUnitFile})
	return checkOutputs(stderr, "run", outs...)
}
