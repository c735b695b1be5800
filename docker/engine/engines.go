package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
)

// EnginesEnv names the engines of a run that spans several, as
// --engines does: a comma-separated list of Docker hosts or contexts.
const EnginesEnv = "RINGLEADER_ENGINES"

// Named resolves one engine a user named in a list: an address
// (anything with "://", as DOCKER_HOST spells it) or a Docker context's
// name, read from the CLI's context store as Resolve reads one.
func Named(name string) (Engine, error) {
	if strings.Contains(name, "://") {
		return Engine{Host: name, Source: EnginesEnv + " or --engines"}, nil
	}
	if name == "default" {
		return Engine{Host: client.DefaultDockerHost, Source: `context "default"`}, nil
	}
	return fromContext(configDir(), name, "--engines")
}

// ParseList resolves a comma-separated list of engines (blanks around
// names ignored). An empty entry, a name given twice or two names for
// one address are mistakes, named.
func ParseList(list string) ([]Engine, error) {
	var out []Engine
	seen := map[string]string{}
	for i, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("engines %q: entry %d is empty", list, i+1)
		}
		e, err := Named(name)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[e.Host]; dup {
			return nil, fmt.Errorf("engines %q: %q and %q are the same engine (%s)", list, prev, name, e.Host)
		}
		seen[e.Host] = name
		out = append(out, e)
	}
	return out, nil
}

// ConnectList resolves list (RINGLEADER_ENGINES when list is empty;
// nil, nil when both are) and pings every engine; the first that does
// not answer is the error, never skipped.
func ConnectList(ctx context.Context, list string) ([]Engine, error) {
	if list == "" {
		list = os.Getenv(EnginesEnv)
	}
	if list == "" {
		return nil, nil
	}
	es, err := ParseList(list)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if err := e.Ping(ctx); err != nil {
			return nil, err
		}
	}
	return es, nil
}

// ErrNotOneSwarm is wrapped by SameSwarm's error when the engines do
// not share a swarm.
var ErrNotOneSwarm = errors.New("the engines are not in one swarm")

// SameSwarm checks that every engine is an active node of one swarm,
// which an attachable overlay network needs; the error names each engine
// that is not, and says how to join. It never changes a swarm.
func SameSwarm(ctx context.Context, es []Engine) error {
	var (
		manager Engine
		members map[string]bool // node IDs the manager lists
		infos   = make([]swarm.Info, len(es))
	)
	for i, e := range es {
		c, err := e.Client()
		if err != nil {
			return err
		}
		r, err := c.Info(ctx, client.InfoOptions{})
		if err == nil && r.Info.Swarm.ControlAvailable && members == nil {
			var nodes client.NodeListResult
			if nodes, err = c.NodeList(ctx, client.NodeListOptions{}); err == nil {
				manager, members = e, map[string]bool{}
				for _, n := range nodes.Items {
					members[n.ID] = true
				}
			}
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("docker engine at %s: %w (%s)", e.Host, err, e.Source)
		}
		infos[i] = r.Info.Swarm
	}
	var bad []string
	for i, e := range es {
		if s := infos[i].LocalNodeState; s != swarm.LocalNodeStateActive {
			bad = append(bad, fmt.Sprintf("%s is not in a swarm (state %q)", e.Host, s))
		}
	}
	if len(bad) == 0 && members == nil {
		bad = append(bad, "none of them is a swarm manager, so which swarm each is in cannot be checked; name a manager among them")
	}
	if len(bad) == 0 {
		for i, e := range es {
			if !members[infos[i].NodeID] {
				bad = append(bad, fmt.Sprintf("%s (node %s) is not in the swarm of %s", e.Host, infos[i].NodeID, manager.Host))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s. Join them (docker swarm init on one, docker swarm join on the others; ringleader never joins or leaves a swarm), or try it on one machine with `ringleader rig up`", ErrNotOneSwarm, strings.Join(bad, "; "))
	}
	return nil
}

// CopyImage streams image img from engine from into engine to (docker
// save | docker load): an engine with no registry gets the very image,
// same ID. It fails unless img is on to afterwards.
func CopyImage(ctx context.Context, from, to Engine, img string) error {
	src, err := from.Client()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := to.Client()
	if err != nil {
		return err
	}
	defer dst.Close()
	saved, err := src.ImageSave(ctx, []string{img})
	if err != nil {
		return fmt.Errorf("save %s from %s: %w", img, from.Host, err)
	}
	defer saved.Close()
	loaded, err := dst.ImageLoad(ctx, saved, client.ImageLoadWithQuiet(true))
	if err != nil {
		return fmt.Errorf("load %s into %s: %w", img, to.Host, err)
	}
	defer loaded.Close()
	if _, err := io.Copy(io.Discard, loaded); err != nil {
		return fmt.Errorf("load %s into %s: %w", img, to.Host, err)
	}
	if _, err := dst.ImageInspect(ctx, img); err != nil {
		return fmt.Errorf("load %s into %s: not there after the load: %w", img, to.Host, err)
	}
	return nil
}
