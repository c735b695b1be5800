package docker

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/ringleader-dev/ringleader/election"
)

// Every node of a run has a fixed address on the run's network, and its
// peers reach it by that address, never by name. Docker's embedded DNS
// answers from the engine, and on a busy engine a lookup of a name that is
// not there (a killed node's, or one not started yet) was measured taking
// 5 s, then succeeding or not; NATS resolves a route's host on every dial,
// so a restarted node went unheard for 10-20 s among 32 nodes. A fixed
// address also survives a restart, so the rules that name it stay right.
// The names (node<ID>) still resolve, for people.

// firstNodeHost is the host number of the first member's address: .1 is
// the gateway.
const firstNodeHost = 2

// createNetwork makes the run's network with a subnet of its own and
// returns it with each member's address. The engine chooses a free subnet
// for a throwaway network; the run's network is then made with that subnet
// spelt out, because only a network with a configured subnet takes fixed
// addresses.
func (b *Backend) createNetwork(ctx context.Context, cli *testcontainers.DockerClient, members []election.NodeID) (*testcontainers.DockerNetwork, map[election.NodeID]netip.Addr, error) {
	opts := []tcnetwork.NetworkCustomizer{tcnetwork.WithDriver("bridge"), tcnetwork.WithLabels(labels(b.run, RoleNetwork))}
	probe, err := tcnetwork.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: create network: %w", b.run, err)
	}
	res, err := cli.NetworkInspect(ctx, probe.ID, client.NetworkInspectOptions{})
	_ = probe.Remove(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: inspect network: %w", b.run, err)
	}
	subnet, gateway, err := ipv4Subnet(res.Network.IPAM.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	addrs, err := memberAddrs(subnet, members, firstNodeHost)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: %w", b.run, err)
	}
	ipam := &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet, Gateway: gateway}}}
	nw, err := tcnetwork.New(ctx, append(opts, tcnetwork.WithIPAM(ipam))...)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: run %s: create network on %s: %w", b.run, subnet, err)
	}
	return nw, addrs, nil
}

// ipv4Subnet picks the IPv4 subnet of an engine-made network and its
// gateway (the subnet's first host when the engine names none).
func ipv4Subnet(cfg []network.IPAMConfig) (netip.Prefix, netip.Addr, error) {
	for _, c := range cfg {
		if !c.Subnet.IsValid() || !c.Subnet.Addr().Is4() {
			continue
		}
		gw := c.Gateway
		if !gw.IsValid() {
			gw = c.Subnet.Masked().Addr().Next()
		}
		return c.Subnet.Masked(), gw, nil
	}
	return netip.Prefix{}, netip.Addr{}, fmt.Errorf("the engine gave the network no IPv4 subnet (got %v)", cfg)
}

// memberAddrs gives the i-th member the subnet's host first+i.
func memberAddrs(subnet netip.Prefix, members []election.NodeID, first int) (map[election.NodeID]netip.Addr, error) {
	hosts := uint64(1)<<(32-subnet.Bits()) - 2 // no network, no broadcast
	if need := uint64(first - 1 + len(members)); need > hosts {
		return nil, fmt.Errorf("subnet %s holds %d hosts; %d nodes need %d", subnet, hosts, len(members), need)
	}
	out := make(map[election.NodeID]netip.Addr, len(members))
	a := subnet.Masked().Addr()
	for range first {
		a = a.Next()
	}
	for _, m := range members {
		out[m] = a
		a = a.Next()
	}
	return out, nil
}
