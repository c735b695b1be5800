package docker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Limits on every node container. A node uses 7–17 MiB and about a dozen
// threads (measured at 32 nodes); the limits leave room for a burst and
// stop a runaway node from taking the machine with it.
const (
	nodeMemory    = 128 << 20
	nodePidsLimit = 256
)

// hardenNode is what every node container runs under besides its read-only
// root: no capabilities at all (the node needs none: it binds ports above
// 1024 as uid 65532), no way to gain privileges through a setuid binary,
// memory and process limits, and no published port.
func hardenNode(hc *container.HostConfig) {
	confine(hc)
	hc.PublishAllPorts = false
	hc.PortBindings = nil
}

// hardenHelper is the same for a netfilter helper, which keeps exactly one
// capability, NET_ADMIN, to change its node's tables. It runs as root:
// Docker 20.10 gives a non-root process no capabilities (it sets no ambient
// set), so as uid 65532 nftables answers "operation not permitted" (tried).
func hardenHelper(hc *container.HostConfig) {
	confine(hc)
	hc.CapAdd = []string{"NET_ADMIN"}
}

// confine is what every container of a run gets: no capabilities, no
// privilege gain, bounded memory and processes.
func confine(hc *container.HostConfig) {
	hc.CapDrop = []string{"ALL"}
	hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges:true")
	hc.Memory = nodeMemory
	pids := int64(nodePidsLimit)
	hc.PidsLimit = &pids
}

// checkImageExposesNothing refuses a node image that declares EXPOSE:
// testcontainers publishes every exposed port on 0.0.0.0 whatever the
// request says, so such an image would open the nodes to every network the
// host is on. The project's Dockerfile declares none; an image built from an
// older one does.
func checkImageExposesNothing(ctx context.Context, cli client.APIClient, image string) error {
	res, err := cli.ImageInspect(ctx, image)
	if err != nil {
		return fmt.Errorf("docker: inspect image %s: %w", image, err)
	}
	if res.Config == nil || len(res.Config.ExposedPorts) == 0 {
		return nil
	}
	var ports []string
	for p := range res.Config.ExposedPorts {
		ports = append(ports, string(p))
	}
	slices.Sort(ports)
	return fmt.Errorf("docker: image %s declares EXPOSE %s, which testcontainers would publish on every host address; rebuild it from this checkout (make images) or let the harness build it", image, strings.Join(ports, " "))
}
