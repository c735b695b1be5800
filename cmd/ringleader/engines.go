//go:build !nodeimage

package main

import (
	"context"
	"flag"
	"os"

	"github.com/ringleader-dev/ringleader/docker/engine"
)

// enginesFlag adds --engines to fs, RINGLEADER_ENGINES its default:
// the Docker engines a cluster spans, for run, fault, watch and up
// (docs/engines.md). what says what the command does with them.
func enginesFlag(fs *flag.FlagSet, what string) *string {
	return fs.String("engines", os.Getenv(engine.EnginesEnv), what+", `A,B,...` (Docker hosts or contexts; the first is the one this process uses), which must share one swarm (docs/engines.md); default $"+engine.EnginesEnv)
}

// connectEngines resolves list as run --engines does (engine.ConnectList:
// every engine named must answer, never a fallback) and pins the first,
// the process's own engine; nil for an empty list.
func connectEngines(ctx context.Context, list string) ([]engine.Engine, error) {
	es, err := engine.ConnectList(ctx, list)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	es[0].Pin()
	return es, nil
}
