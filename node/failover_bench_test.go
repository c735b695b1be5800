package node

import (
	"testing"
	"time"
)

// stall blocks the node's event loop until the returned function is called:
// the machine sees nothing and sends nothing, while its NATS server keeps
// its routes up. That is a silent failure, as docker pause is to peers that
// are still within their route ping timeout.
func (n *Node) stall() (resume func()) {
	ch := make(chan struct{})
	n.post(input{kind: inStall, stall: ch})
	return func() { close(ch) }
}

// BenchmarkFailoverKill: leader 3 of three nodes is killed (its
// connections close); measured until both survivors view leader 2, and
// until the first survivor logs a peer-down hint.
func BenchmarkFailoverKill(b *testing.B) {
	benchFailover(b, func(c *testCluster) func() {
		c.kill(3)
		return func() { c.start(3) }
	})
}

// BenchmarkFailoverFreeze: leader 3's loop is frozen; only the survivors'
// suspicion timeout can notice.
func BenchmarkFailoverFreeze(b *testing.B) {
	benchFailover(b, func(c *testCluster) func() {
		n := c.forget(3)
		resume := n.stall()
		return func() {
			resume()
			n.Stop()
			c.start(3)
		}
	})
}

func benchFailover(b *testing.B, fault func(*testCluster) (undo func())) {
	c := newTestCluster(b, testAlgorithm, 1, 2, 3)
	c.startAll()
	c.awaitLeader(3)
	var failover, hinted time.Duration
	hints := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.mu.Lock()
		seen := len(c.hints)
		c.mu.Unlock()
		start := time.Now()
		undo := fault(c)
		c.awaitLeader(2)
		done := time.Now()
		failover += done.Sub(start)
		c.mu.Lock()
		if len(c.hints) > seen && c.hints[seen].at.Before(done) {
			hinted += c.hints[seen].at.Sub(start)
			hints++
		}
		c.mu.Unlock()

		b.StopTimer()
		undo()
		c.awaitLeader(3)
		b.StartTimer()
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(failover)/float64(b.N), "failover-ms")
	b.ReportMetric(float64(failover)/float64(b.N)/float64(c.timing.Suspicion), "x-suspicion")
	if hints > 0 {
		b.ReportMetric(ms(hinted)/float64(hints), "first-hint-ms")
	}
	b.ReportMetric(float64(hints)/float64(b.N), "hinted-fraction")
}
