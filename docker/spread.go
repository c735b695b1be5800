package docker

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/docker/engine"
	"github.com/ringleader-dev/ringleader/election"
)

// NodesPerCoreAcrossEngines is how many nodes per core a machine holds
// when a cluster spans engines that share it (the rig: two engines, one
// kernel), measured on the 2-core build machine (docs/engines.md, "How
// many nodes across engines on one machine"): across the rig's two
// engines, dealt round-robin, 32 nodes settled in 3 runs of 3, 40 in 1 of
// 1, 48 in 1 of 2 and 64 in none of 7, while 64 settle on one engine and
// 63 + 1 or 1 + 63 across the two. Above 32 the second engine's nodes stop
// hearing one another, and why is not known; every message between the
// engines crosses the overlay's VXLAN in the same kernel, on the cores the
// nodes need.
const NodesPerCoreAcrossEngines = 16

// machine is the engines of a spread cluster that run on one machine, as
// their engines report it: the same host name and kernel (the rig's
// second engine runs in a network namespace of the first's host).
type machine struct {
	host, kernel string
	cpus         int
	engines      []string
	nodes        int
}

// checkSpread refuses a cluster spread over engines (placement, one ID list
// per engine of es; clis in the same order) that a machine among them
// cannot hold, before anything is created.
func checkSpread(ctx context.Context, clis []client.APIClient, es []engine.Engine, placement chaos.Placement) error {
	var ms []*machine
	for i, c := range clis {
		res, err := c.Info(ctx, client.InfoOptions{})
		if err != nil {
			return fmt.Errorf("docker: ask engine %s what it has: %w", es[i], err)
		}
		in := res.Info
		var m *machine
		for _, x := range ms {
			if x.host == in.Name && x.kernel == in.KernelVersion {
				m = x
			}
		}
		if m == nil {
			m = &machine{host: in.Name, kernel: in.KernelVersion, cpus: in.NCPU}
			ms = append(ms, m)
		}
		m.engines = append(m.engines, es[i].Host)
		m.nodes += len(placement[i])
	}
	return admitSpread(ms, os.Getenv(NodesPerCoreEnv))
}

// admitSpread is checkSpread's rule: a machine that holds two or more of
// the cluster's engines holds NodesPerCoreAcrossEngines per core (perCore
// overrides it when set, as it overrides NodesPerCore). A machine with
// one engine is CheckCapacity's to judge.
func admitSpread(ms []*machine, perCore string) error {
	per, err := perCoreOr(perCore, NodesPerCoreAcrossEngines)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if len(m.engines) < 2 {
			continue
		}
		cpus := max(m.cpus, 1)
		if limit := cpus * per; m.nodes > limit {
			return fmt.Errorf("docker: %d nodes are more than engines %s hold: they share one machine (host %s), "+
				"%d CPU(s) × %d nodes per CPU = %d when a cluster spans engines there, whose overlay traffic costs the same cores "+
				"(docs/engines.md). Run %d or fewer across them, put the nodes on one engine, or set %s if this machine was measured to hold more",
				m.nodes, strings.Join(m.engines, " and "), m.host, cpus, per, limit, limit, NodesPerCoreEnv)
		}
	}
	return nil
}

// CheckSpread refuses, before anything starts, a cluster of members spread
// over the engines es (placement, or round-robin when nil) that a machine
// holding several of them cannot hold (checkSpread). Fewer than two
// engines: nothing to check.
func CheckSpread(ctx context.Context, es []engine.Engine, members []election.NodeID, placement chaos.Placement) error {
	if len(es) < 2 {
		return nil
	}
	placement, err := spreadPlacement(members, placement, len(es))
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	var clis []client.APIClient
	defer func() {
		for _, c := range clis {
			c.Close()
		}
	}()
	for _, e := range es {
		c, err := testcontainers.NewDockerClientWithOpts(ctx, e.Options()...)
		if err != nil {
			return fmt.Errorf("docker: engine %s: %w", e, err)
		}
		clis = append(clis, c)
	}
	return checkSpread(ctx, clis, es, placement)
}
