package program_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/program"
	"github.com/ringleader-dev/ringleader/sim"
)

// badProgram is a program that answers start correctly (a view and a
// timer) and then fails, the way mode says, when the timer fires.
func badProgram(mode string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, program.MaxLine)
	var id election.NodeID
	for in.Scan() {
		var req program.Request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			os.Exit(2)
		}
		if req.Init != nil {
			id = req.Init.ID
		}
		switch {
		case mode == "selfish" || mode == "random":
			// Every node leads itself (agreement fails); "random" also
			// re-announces at an instant drawn from the wall clock.
			after := 100 * time.Millisecond
			if mode == "random" {
				after += time.Duration(time.Now().UnixNano() % int64(time.Second))
			}
			fx := `[]`
			if req.Event.Kind == election.EventStart {
				fx = fmt.Sprintf(`[{"kind":"view","view":{"leader":%d,"epoch":1,"role":"leader"}},{"kind":"set-timer","timer":"again","after_ns":%d}]`, req.Init.ID, after)
			} else if req.Event.Kind == election.EventTimer {
				fx = `[{"kind":"broadcast","msg":{"type":"MINE","from":0,"to":0,"epoch":1}}]`
			}
			fmt.Printf(`{"v":1,"seq":%d,"effects":%s,"claims":["agreement"]}`+"\n", req.Seq, fx)
			continue
		case req.Event.Kind == election.EventStart:
			fmt.Printf(`{"v":1,"seq":%d,"effects":[{"kind":"view","view":{"leader":%d,"epoch":1,"role":"leader"}},{"kind":"set-timer","timer":"tick","after_ns":100000000}],"claims":["agreement"]}`+"\n", req.Seq, req.Init.ID)
			continue
		}
		fmt.Fprintln(os.Stderr, "about to fail:", mode)
		switch mode {
		case "exit":
			os.Exit(3)
		case "hang":
			time.Sleep(time.Hour) // a hung program (select {} would be a deadlock, and exit)
		case "kind":
			fmt.Printf(`{"v":1,"seq":%d,"effects":[{"kind":"view","view":{"leader":1,"epoch":1,"role":"leader"}},{"kind":"sned","msg":{"type":"X","to":2}}]}`+"\n", req.Seq)
		case "type":
			fmt.Printf(`{"v":1,"seq":%d,"effects":[{"kind":"set-timer","timer":"tick","after_ns":"soon"}]}`+"\n", req.Seq)
		case "garbage":
			fmt.Println("hello, runtime")
		case "seq":
			fmt.Printf(`{"v":1,"seq":%d,"effects":[]}`+"\n", req.Seq+1)
		case "types":
			// A message type made up per message, more than a run holds.
			var fx bytes.Buffer
			for i := range sim.MaxTypes + 1 {
				if i > 0 {
					fx.WriteByte(',')
				}
				fmt.Fprintf(&fx, `{"kind":"send","msg":{"type":"T%d","to":%d}}`, i, 3-id)
			}
			fmt.Printf(`{"v":1,"seq":%d,"effects":[%s]}`+"\n", req.Seq, fx.Bytes())
		case "flood":
			os.Stdout.Write(bytes.Repeat([]byte("x"), program.MaxLine+1))
			time.Sleep(time.Hour) // a hung program (select {} would be a deadlock, and exit)
		}
	}
}

// TestBadProgramsCrashTheirNode: a program that exits, hangs, floods or
// writes what the protocol does not allow crashes its node, as a kill
// would (down, a stop record naming the failure), and the report names the
// event, the line and the field, and quotes its stderr.
func TestBadProgramsCrashTheirNode(t *testing.T) {
	for _, c := range []struct {
		mode string
		want []string
	}{
		{"exit", []string{"program exited (exit status 3) while it was to answer event seq 3 (timer \"tick\")", "about to fail: exit"}},
		{"hang", []string{"did not answer event seq 3 (timer \"tick\") within 300ms", "treated as crashed", "about to fail: hang"}},
		{"kind", []string{"answer to event seq 3 (timer \"tick\"): line 3: field effects[1].kind: effect kind \"sned\": want one of"}},
		{"type", []string{"line 3: field effects[0].after_ns: a JSON string, want time.Duration"}},
		{"garbage", []string{"line 3: invalid character 'h'"}},
		{"seq", []string{"line 3: field seq: 4, want 3"}},
		{"flood", []string{"line 3 is longer than 4194304 bytes"}},
		{"types", []string{`sent a message of type "T65534", more than the 65534 distinct message types one run can hold`}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			timeout := 10 * time.Second // room for a slow machine (the race detector) to read a flood
			if c.mode == "hang" {
				timeout = 300 * time.Millisecond
			}
			name, err := program.Register([]string{os.Args[0], "badprog", c.mode}, election.NoQuorum, []election.NodeID{1, 2}, election.Timing{}, program.Options{Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			var mem history.Memory
			s, err := sim.New(sim.Options{Algorithm: name, Members: []election.NodeID{1, 2}}, &mem)
			if err != nil {
				t.Fatal(err)
			}
			s.Start()
			s.RunFor(time.Second)
			crashes := s.Crashes()
			if len(crashes) != 2 {
				t.Fatalf("crashes %v, want both nodes'", crashes)
			}
			msg := crashes[0].Err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("crash report\n%s\nlacks %q", msg, w)
				}
			}
			if s.Up(1) || s.Up(2) {
				t.Error("a node whose program failed is still up")
			}
			stops := 0
			for _, r := range mem.Records() {
				if r.Kind == history.KindStop && strings.HasPrefix(r.Reason, "program-failed: ") {
					stops++
				}
			}
			if stops != 2 {
				t.Errorf("%d stop records naming the failure, want 2", stops)
			}
			// A restart brings the node back on a new process.
			must(t, s.Restart(1))
			if !s.Up(1) || s.View(1).Leader != 1 {
				t.Errorf("after a restart: up %v, view %v; want up, leading", s.Up(1), s.View(1))
			}
		})
	}
}

// TestExplorerReportsANondeterministicProgram: the explorer plays a
// program's failing schedule twice more; a program that reads the wall
// clock is reported as nondeterministic, naming the first history record
// that differed, and a deterministic one is not.
func TestExplorerReportsANondeterministicProgram(t *testing.T) {
	for _, c := range []struct {
		mode string
		want bool
	}{{"random", true}, {"selfish", false}} {
		name, err := program.Register([]string{os.Args[0], "badprog", c.mode}, election.NoQuorum, election.FirstIDs(3), election.Timing{}, program.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := explore.Run(explore.Options{Algorithm: name, N: 3, Schedules: 2, Seed: 1, MaxFaults: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.FailedSchedules != 2 {
			t.Fatalf("%s: %d failing schedules, want both (every node leads itself)", c.mode, res.FailedSchedules)
		}
		got := res.Failing[0].Nondeterministic
		if c.want != (got != "") || res.NondeterministicSchedules != map[bool]int{true: 2}[c.want] {
			t.Fatalf("%s: nondeterministic %q (%d schedules), want reported: %v", c.mode, got, res.NondeterministicSchedules, c.want)
		}
		if c.want && !strings.Contains(got, "first differ at history record") || c.want && !strings.Contains(got, `"type":"MINE"`) {
			t.Errorf("%s: report %q does not name the first differing record", c.mode, got)
		}
	}
}

// TestAProgramBehindAWrapperIsEndedWithItsChildren: a program started
// through a wrapper (a shell script whose child holds the pipes, as
// `cargo run` or `npm start` do) that stops answering is treated as
// crashed after the timeout like any hung program, and the wrapper's
// child is ended with it: the whole process group goes, so nothing holds
// the pipes and the run goes on.
func TestAProgramBehindAWrapperIsEndedWithItsChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "hang.sh")
	// Answers the probe start, then never answers again; its child
	// sleeps on, holding the pipes.
	body := "#!/bin/sh\nsleep 600 &\necho $! > " + pidFile + "\nread line\n" +
		`echo '{"v":1,"seq":1,"effects":[{"kind":"view","view":{"leader":1,"epoch":1,"role":"leader"}}],"claims":["agreement"]}'` + "\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	name, err := program.Register([]string{script}, election.NoQuorum, election.FirstIDs(1), election.Timing{}, program.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(sim.Options{Algorithm: name, Members: election.FirstIDs(1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		s.Start() // the machine's start is the process's second event
		s.RunFor(time.Second)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound on a hang, not a timing goal
		t.Fatal("the run still waits after a minute: the wrapper's child holds the pipe")
	}
	crashes := s.Crashes()
	if len(crashes) != 1 || !strings.Contains(crashes[0].Err.Error(), "did not answer event seq 2 (start) within 300ms") {
		t.Fatalf("crashes %v; want the node's start unanswered within the timeout", crashes)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatalf("the wrapper never wrote its child's PID: %v", rerr)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the wrapper's child %d still runs after the program was ended", pid)
		}
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its reaper has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...; comm may hold spaces, so read after the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
