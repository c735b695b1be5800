// Package benchmarks measures the simulator on the real algorithms. It is a
// package of its own so that the simulator's unit tests do not depend on
// every algorithm package compiling.
package benchmarks

import (
	"syscall"
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/election"
	_ "github.com/ringleader-dev/ringleader/election/all"
	"github.com/ringleader-dev/ringleader/explore"
	"github.com/ringleader-dev/ringleader/sim"
)

// BenchmarkSimChangRoberts10000 is one fault-free Chang–Roberts election on
// a randomly arranged ring of 10,000 nodes, from every node's start until
// the cluster is quiet (the election decided and announced). Building the
// machines is left out: it is the algorithm's cost, not the simulator's.
// Goal: under a second.
//
// The timing is scaled to the ring: an announcement needs 10 s (10,000
// hops of 1 ms) to go round, and a leader heartbeating 9,999 followers
// every 100 ms (the default) would send a million heartbeats meanwhile,
// which measures heartbeats, not the election. The /default-timing variant
// keeps the defaults and shows that cost.
func BenchmarkSimChangRoberts10000(b *testing.B) {
	b.Run("scaled-timing", func(b *testing.B) {
		benchCR(b, election.Timing{Heartbeat: time.Second, Suspicion: 5 * time.Second, Answer: 200 * time.Millisecond})
	})
	b.Run("default-timing", func(b *testing.B) { benchCR(b, election.Timing{}) })
}

func benchCR(b *testing.B, timing election.Timing) {
	ids, err := sim.Arrange("random", 10000, 1)
	if err != nil {
		b.Fatal(err)
	}
	var msgs int
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := sim.New(sim.Options{Algorithm: "changroberts", Members: ids, Seed: 1, Timing: timing}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cpuTime()
		s.Start()
		if !s.RunUntilQuiet(time.Hour) {
			b.Fatal("not quiet after an hour of virtual time")
		}
		cpu += cpuTime() - c0
		c := s.Counts()
		if a, _ := election.Lookup("changroberts"); a.Formula != nil {
			if f := a.Formula(ids); float64(c.Election) != f.Value {
				b.Fatalf("%d election messages, formula %s says %v", c.Election, f.Name, f.Value)
			}
		}
		msgs = c.Total()
	}
	b.ReportMetric(float64(msgs), "msgs/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the process's user+system CPU time. The machine these run on
// is shared, so wall time alone says more about the neighbours than about
// the simulator; CPU time is reported beside it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExploreBully5 is the explorer's throughput on 5-node bully in
// quorum mode. Goal: 1,000 schedules a second.
func BenchmarkExploreBully5(b *testing.B) {
	const per = 200
	start, c0 := time.Now(), cpuTime()
	var simulated float64
	for i := 0; i < b.N; i++ {
		res, err := explore.Run(explore.Options{Algorithm: "bully", N: 5, Quorum: election.Majority, Schedules: per, Seed: int64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		simulated += res.SimulatedSeconds
	}
	// Simulated seconds per wall second: how much faster than real time
	// the explorer runs a cluster.
	b.ReportMetric(simulated/time.Since(start).Seconds(), "sim-s/s")
	b.ReportMetric(float64(per*b.N)/time.Since(start).Seconds(), "schedules/s")
	// Schedules per CPU-second: what one idle core would give.
	b.ReportMetric(float64(per*b.N)/(cpuTime()-c0).Seconds(), "schedules/cpu-s")
}

// BenchmarkExploreRaft5 is the explorer's throughput on 5-node raft (its
// default options: pre-vote and check-quorum), on one worker: the
// workers of one process take turns inside raft's library (election/raft,
// determinism.go), so one worker is what a process gives; `sim explore
// --processes` runs more. Goal: 500 schedules per CPU-second, so that two
// processes on two cores make 1,000 a second.
func BenchmarkExploreRaft5(b *testing.B) {
	const per = 100
	start, c0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := explore.Run(explore.Options{Algorithm: "raft", N: 5, Schedules: per, Seed: int64(i + 1), Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(per*b.N)/time.Since(start).Seconds(), "schedules/s")
	b.ReportMetric(float64(per*b.N)/(cpuTime()-c0).Seconds(), "schedules/cpu-s")
}
