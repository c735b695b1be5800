//go:build !nodeimage

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/internal/progress"
	"github.com/ringleader-dev/ringleader/sim"
)

// shardFlags checks --shard and --processes against each other and the
// flags they cannot go with, and returns the shard to run.
func shardFlags(shard string, processes int, shrink bool, hist string, asJSON bool) (explore.Shard, error) {
	var sh explore.Shard
	if shard != "" {
		var err error
		if sh, err = explore.ParseShard(shard); err != nil {
			return sh, err
		}
	}
	switch {
	case processes < 0:
		return explore.Shard{}, fmt.Errorf("--processes %d: need at least one (or 0 for the default)", processes)
	case processes > maxProcesses():
		return explore.Shard{}, fmt.Errorf("--processes %d: more than this machine's %d CPU(s) can run side by side (at most %d, four a CPU); use --shard to spread an exploration over machines", processes, runtime.NumCPU(), maxProcesses())
	case processes > 1 && shard != "":
		return explore.Shard{}, fmt.Errorf("--processes and --shard both given: --processes runs every shard itself")
	case (processes > 1 || shard != "") && (shrink || hist != ""):
		return explore.Shard{}, fmt.Errorf("--shrink and --history play schedules in this process: not with --shard or --processes")
	case shard != "" && !asJSON:
		return explore.Shard{}, fmt.Errorf("--shard %s: add --json, the form --merge reads", shard)
	}
	return sh, nil
}

// maxProcesses is the most --processes may ask for: four per CPU. Each
// process is a runtime with a simulator per worker; past a few per CPU
// they only take turns, and a thousand of them (a typo) would fill the
// machine's memory before its first schedule.
func maxProcesses() int { return 4 * runtime.NumCPU() }

// mergeExplore is sim explore --merge FILE...: each file holds the --json
// output of one shard; the merged summary is printed as a whole run's,
// timed by the longest shard (shards run side by side).
func mergeExplore(fs *flag.FlagSet, asJSON bool, stdout, stderr io.Writer) int {
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "merge" && f.Name != "json" {
			other = append(other, "--"+f.Name)
		}
	})
	switch {
	case len(other) > 0:
		return badFlag(stderr, "explore", fmt.Errorf("--merge takes result files and --json only, not %s", strings.Join(other, ", ")))
	case fs.NArg() == 0:
		return badFlag(stderr, "explore", fmt.Errorf("--merge: name the --json result of every shard"))
	}
	var parts []exploreJSON
	for _, path := range fs.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader sim explore: --merge: %v\n", err)
			return 1
		}
		p, err := decodeShard(b)
		if err != nil {
			fmt.Fprintf(stderr, "ringleader sim explore: --merge: %s: %v\n", path, err)
			return 1
		}
		parts = append(parts, p)
	}
	return printMerged(parts, 0, asJSON, stdout, stderr)
}

// decodeShard reads one shard's --json output.
func decodeShard(b []byte) (exploreJSON, error) {
	var p exploreJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("not the --json output of sim explore: %w", err)
	}
	return p, nil
}

// printMerged merges the shards' results and prints them as one run's,
// timed by longest (zero: the longest shard's own time).
func printMerged(parts []exploreJSON, longest time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	results := make([]explore.Result, len(parts))
	for i, p := range parts {
		results[i] = p.Result
		if longest == 0 {
			longest = max(longest, time.Duration(p.Seconds*float64(time.Second)))
		}
	}
	res, err := explore.Merge(results, 0)
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: %v\n", err)
		return 1
	}
	return printExploreResult(res, max(longest, time.Nanosecond), nil, asJSON, stdout, stderr)
}

// exploreProcesses is how many processes an exploration runs in: the
// --processes given, or, left at 0, one per worker for an algorithm whose
// machines step one at a time in a process (raft), so that its workers do
// not take turns, and one otherwise. A shard, or a run that shrinks what
// it finds, plays its schedules in this process.
func exploreProcesses(given, workers, schedules int, alg election.Algorithm, inThisProcess bool) int {
	switch {
	case given > 0:
		return min(given, schedules) // a process with no schedule would start for nothing
	case !alg.OneAtATime || inThisProcess:
		return 1
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, schedules, maxProcesses()))
}

// exploreInProcesses runs sim explore with args as n child processes of
// this program, shard i/n each, --workers shared among them, and merges
// their results. Each child has its own raft lock (election/raft,
// determinism.go), so on raft the processes run side by side where the
// workers of one process take turns. The children's counts of finished
// schedules add up on this process's progress meter.
func exploreInProcesses(args []string, n, workers, schedules int, maxMemory int64, asJSON bool, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: --processes: %v\n", err)
		return 1
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	base := append([]string{"sim", "explore"}, withoutFlags(args, "processes", "workers", "json", "max-memory")...)
	// The budget is the machine's, shared by the children.
	base = slices.Clip(append(base, "--max-memory", childBudget(maxMemory, n))) // each child's append copies
	start := time.Now()
	parts := make([]exploreJSON, n)
	errs := make([]error, n)
	meter := progress.New(stderr, isTerminalWriter(stderr), "explore", "schedules", schedules, time.Now)
	done := make([]atomic.Int64, n)
	meter.Start()
	var wg sync.WaitGroup
	for i := range n {
		w := workers/n + btoi(i < workers%n) // spread the workers as evenly as they go
		child := append(base, "--shard", fmt.Sprintf("%d/%d", i, n), "--json", "--workers", fmt.Sprint(max(w, 1)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = runShard(self, child, func(k int) {
				done[i].Store(int64(k))
				var sum int64
				for j := range done {
					sum += done[j].Load()
				}
				meter.Set(int(sum))
			})
		}()
	}
	wg.Wait()
	meter.Done()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "ringleader sim explore: --processes: %v\n", err)
		return 1
	}
	return printMerged(parts, time.Since(start), asJSON, stdout, stderr)
}

// childBudget is --max-memory for each of n children sharing the budget
// maxMemory asks for (as sim.Options.MaxMemory).
func childBudget(maxMemory int64, n int) string {
	if maxMemory < 0 {
		return "none"
	}
	if maxMemory == 0 {
		maxMemory = sim.DefaultMaxMemory()
		if maxMemory == 0 {
			return "none" // unknown here: none for the children either
		}
	}
	return strconv.FormatInt(max(maxMemory/int64(n), 1), 10)
}

// runShard runs one child and reads its result. Exit status 1 with a
// result is a failing schedule, not an error. progress is called with the
// child's count of finished schedules as it reports them.
func runShard(self string, args []string, progress func(int)) (exploreJSON, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	counts, w, err := os.Pipe()
	if err != nil {
		return exploreJSON{}, err
	}
	cmd.ExtraFiles = []*os.File{w} // the child's descriptor 3
	cmd.Env = append(os.Environ(), shardProgressEnv+"=3")
	err = cmd.Start()
	w.Close() // the child holds its own copy
	read := make(chan struct{})
	go func() {
		defer close(read)
		readCounts(counts, progress)
	}()
	if err == nil {
		err = cmd.Wait()
	}
	counts.Close()
	<-read
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1 && out.Len() > 0) {
		return exploreJSON{}, fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, lastLines(errb.String(), 5))
	}
	p, err := decodeShard(out.Bytes())
	if err != nil {
		return p, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, lastLines(errb.String(), 5))
	}
	return p, nil
}

// withoutFlags is args without the named flags and their values, in either
// spelling (--name value, --name=value; one dash or two). json is the one
// boolean among them.
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || !slices.Contains(names, name) {
			out = append(out, args[i])
			continue
		}
		if !hasValue && name != "json" {
			i++ // the value that follows
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lastLines is the last n lines of s (a child's stderr, for an error).
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// shardProgressEnv, in a child of --processes, names the file descriptor
// on which it writes its count of finished schedules, one number a line,
// for the parent's meter. Its own meter still writes to its stderr, which
// the parent keeps for an error.
const shardProgressEnv = "RINGLEADER_SHARD_PROGRESS_FD"

// toParent is set, and when this process is a child of --processes, set
// that also tells the parent each count.
func toParent(set func(int)) func(int) {
	fd, err := strconv.Atoi(os.Getenv(shardProgressEnv))
	if err != nil || fd < 3 {
		return set
	}
	f := os.NewFile(uintptr(fd), "progress")
	if f == nil {
		return set
	}
	// Not handed on to what this process runs (a program's processes):
	// the parent's reader ends when the last copy closes.
	syscall.CloseOnExec(fd)
	return reportTo(f, set)
}

// reportTo is set, and also writes each count to w as a line.
func reportTo(w io.Writer, set func(int)) func(int) {
	var mu sync.Mutex // the explorer's workers report concurrently
	return func(done int) {
		set(done)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, done) // a parent gone is no reason to stop
	}
}

// readCounts calls progress with each count a child writes to r, until r
// ends; a line that is not a count is skipped.
func readCounts(r io.Reader, progress func(int)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if k, err := strconv.Atoi(sc.Text()); err == nil && k >= 0 {
			progress(k)
		}
	}
}
