package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/ringleader-dev/ringleader/internal/neigh"
)

// What one node costs the machine that runs the engine, measured on
// 2-core build machines (docs/performance.md, "How many containers"). CPU
// binds first: past NodesPerCore nodes per core, timers fire late, nodes
// suspect live leaders, and the elections that follow load the machine
// further until nothing settles. A node's route pings to its peers cost
// the same whatever the cluster's size (package routes), so the cluster's
// steady load grows with its nodes: on one machine of this kind 64 idle
// nodes' pings alone kept both cores busy and 64 never settled in three
// runs, while 32 did; on a faster one 64 had settled. The rule is what
// held on both; RINGLEADER_NODES_PER_CORE admits more on a machine
// measured to hold them. Memory is the node's own (about 25 MiB), the
// engine's per container, and the harness's share of the history.
const (
	NodesPerCore = 16
	NodeMemory   = 96 << 20
	// NodesPerCoreEnv overrides NodesPerCore, for a machine measured to
	// hold more (or less).
	NodesPerCoreEnv = "RINGLEADER_NODES_PER_CORE"
)

// CheckCapacity refuses a cluster of n nodes that the engine's machine
// cannot hold, before anything is created, saying why: too few cores or
// too little memory, or a kernel neighbour table too small for the mesh
// that this process may not raise (neighbours.go). Start raises the table
// when it may.
func CheckCapacity(ctx context.Context, n int) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = checkCapacity(ctx, cli, n)
	return err
}

// checkCapacity is CheckCapacity on an open engine client; it also returns
// what the neighbour table needs, for Start to carry out.
func checkCapacity(ctx context.Context, cli *testcontainers.DockerClient, n int) (neighbourPlan, error) {
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return neighbourPlan{}, fmt.Errorf("docker: ask the engine what it has: %w", err)
	}
	if err := admit(n, res.Info.NCPU, res.Info.MemTotal, os.Getenv(NodesPerCoreEnv)); err != nil {
		return neighbourPlan{}, err
	}
	// The table is the engine's kernel's: readable (and raisable) from
	// here only when the engine is local and runs on this very kernel,
	// not in a VM of its own (Docker Desktop) or on another machine.
	_, unix := unixSocket(cli.DaemonHost())
	local := unix && res.Info.KernelVersion == kernelRelease()
	return planNeighbours(n, neigh.Dir, local, local && neigh.Writable(neigh.Dir, neigh.Soft, neigh.Hard))
}

// admit is CheckCapacity's rule, for an engine with cpus cores and mem
// bytes; perCore overrides NodesPerCore when set.
func admit(n, cpus int, mem int64, perCore string) error {
	per, err := perCoreOr(perCore, NodesPerCore)
	if err != nil {
		return err
	}
	if cpus < 1 {
		cpus = 1
	}
	if limit := cpus * per; n > limit {
		return fmt.Errorf("docker: %d nodes are more than this machine holds: %d CPU(s) × %d nodes per CPU = %d. "+
			"Past that, timers fire late, nodes suspect live leaders and the elections never settle (docs/performance.md). "+
			"Run %d or fewer, use the simulator (--backend sim), or set %s if this machine was measured to hold more",
			n, cpus, per, limit, limit, NodesPerCoreEnv)
	}
	if need := int64(n) * NodeMemory; mem > 0 && need > mem {
		return fmt.Errorf("docker: %d nodes need about %d MiB (%d MiB each, engine and harness included); the engine's machine has %d MiB",
			n, need>>20, NodeMemory>>20, mem>>20)
	}
	return nil
}

// perCoreOr is the nodes per core a rule allows: def, or perCore (the
// value of NodesPerCoreEnv) when it is set.
func perCoreOr(perCore string, def int) (int, error) {
	if perCore == "" {
		return def, nil
	}
	v, err := strconv.Atoi(perCore)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("docker: %s=%q: want a whole number of nodes per core, 1 or more", NodesPerCoreEnv, perCore)
	}
	return v, nil
}

// RunsPerCore is how many container runs go at once per core by default
// (Parallel). Once a fault's netfilter rules no longer took a container
// each, two per core on the 2-core build machine ran the 43 shipped runs
// in 113 s against 195 s at one per core, every one passing; of the kill
// scenarios' failover p50s only Bully's, which rides on how soon a
// process gets a core, moved beyond the noise: 19 ms alone, 24 ms two at
// a time, 29 ms four (docs/performance.md, "Runs at once"). A failover
// figure is still measured with --parallel 1.
const RunsPerCore = 2

// Parallel is how many runs of clusters of these sizes (nodes each) go at
// once by default on the engine's machine: RunsPerCore per core, and no
// more than the largest runs' nodes together fit in its memory at
// NodeMemory each and on its cores at NodesPerCore each (or
// $RINGLEADER_NODES_PER_CORE, as CheckCapacity reads it); at least 1.
func Parallel(ctx context.Context, sizes []int) (int, error) {
	per, err := perCoreOr(os.Getenv(NodesPerCoreEnv), NodesPerCore)
	if err != nil {
		return 0, err
	}
	cli, err := newClient(ctx)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return 0, fmt.Errorf("docker: ask the engine what it has: %w", err)
	}
	return parallel(sizes, res.Info.NCPU, res.Info.MemTotal, per), nil
}

// parallel is Parallel's rule for an engine with cpus cores and mem bytes
// (0: unknown), holding nodesPerCore nodes per core.
func parallel(sizes []int, cpus int, mem int64, nodesPerCore int) int {
	cpus = max(cpus, 1)
	k := cpus * RunsPerCore
	largest := slices.Sorted(slices.Values(sizes))
	slices.Reverse(largest)
	var need int64
	nodes := 0
	for i, n := range largest {
		if i == k {
			break
		}
		need += int64(n) * NodeMemory
		nodes += n
		if (mem > 0 && need > mem) || nodes > cpus*nodesPerCore {
			k = i
			break
		}
	}
	return max(k, 1)
}
