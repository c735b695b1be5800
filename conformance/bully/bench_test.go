package bully_test

import (
	"testing"
	"time"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/sim"
)

// BenchmarkBullyFailover measures, in the simulator's virtual time, how
// long a 5-node cluster takes from killing its leader to every live node
// agreeing on the next one, with the kill placed at a different point of
// the heartbeat cycle in each iteration. It reports the mean in
// milliseconds and as a multiple of the suspicion timeout, the floor for a
// crash that sends nothing.
func BenchmarkBullyFailover(b *testing.B) {
	for _, q := range []election.QuorumMode{election.NoQuorum, election.Majority} {
		name := "plain"
		if q == election.Majority {
			name = "majority"
		}
		b.Run(name, func(b *testing.B) {
			const n = 5
			timing := election.DefaultTiming
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				s, err := sim.New(sim.Options{Algorithm: "bully", Members: election.FirstIDs(n), Quorum: q, Seed: int64(i + 1)}, nil)
				if err != nil {
					b.Fatal(err)
				}
				s.Start()
				s.RunFor(time.Second + time.Duration(i%100)*time.Millisecond)
				kill := s.Now()
				if err := s.Kill(n); err != nil {
					b.Fatal(err)
				}
				if !s.RunUntil(10*time.Second, func(st chaos.State) bool {
					for id := election.NodeID(1); id < n; id++ {
						v := st.Views[id]
						if v.Leader != n-1 || (id == n-1) != (v.Role == election.Leader) {
							return false
						}
					}
					return true
				}) {
					b.Fatalf("iteration %d: no agreement on %d within 10 s", i, n-1)
				}
				total += s.Now() - kill
			}
			mean := total / time.Duration(b.N)
			b.ReportMetric(float64(mean)/float64(time.Millisecond), "failover-ms")
			b.ReportMetric(float64(mean)/float64(timing.Suspicion), "x-suspicion")
		})
	}
}
