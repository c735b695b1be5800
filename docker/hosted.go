package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/history"
	"github.com/ringleader-dev/ringleader/history/logrecord"
	"github.com/ringleader-dev/ringleader/program"
)

// hostedProgram is the registry name, in this process, of the program a
// running cluster's nodes host: its claims and message classes are what
// a node's own probe start found and wrote on its boot line
// (history.ParseProgramBoot). The program itself is never started here:
// whoever attaches judges the cluster by its nodes' word, which only the
// node runtime writes (a program's own output goes to the node, not to
// the log). It waits up to wait for a node to have logged its boot: a
// program's node logs it once the program has answered its probe.
func hostedProgram(ctx context.Context, run string, spec chaos.ClusterSpec, found []foundNode, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		for _, f := range found {
			pb, booted, err := programBoot(ctx, f.cli, f.cid)
			switch {
			case err != nil:
				return "", fmt.Errorf("docker: attach %s: read %s's log: %w", run, f.name, err)
			case !booted:
				continue
			case pb.Program == "":
				return "", fmt.Errorf("docker: attach %s: %s's boot line says nothing of its program (a node built before boot lines described programs: rebuild its image)", run, f.name)
			}
			return registerHosted(run, f.name, spec, pb)
		}
		if !time.Now().Before(deadline) {
			return "", fmt.Errorf("docker: attach %s: no node has logged its boot line within %v, so what the program %q claims is unknown "+
				"(a node logs it once its program has answered the probe start; `docker logs %s` shows why it has not)", run, wait, strings.Join(spec.Program, " "), found[0].name)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// registerHosted registers the program as node name's boot line pb
// describes it, after checking that the line is about the program the
// cluster's environment names, in its quorum mode.
func registerHosted(run, name string, spec chaos.ClusterSpec, pb history.ProgramBoot) (string, error) {
	where := fmt.Sprintf("docker: attach %s: %s's boot line", run, name)
	if pb.Program != strings.Join(spec.Program, " ") {
		return "", fmt.Errorf("%s names the program %q, its environment %q", where, pb.Program, strings.Join(spec.Program, " "))
	}
	q, err := election.ParseQuorum(pb.Quorum)
	if err != nil {
		return "", fmt.Errorf("%s: quorum: %w", where, err)
	}
	if q != spec.Quorum {
		return "", fmt.Errorf("%s says quorum %s, its environment %s", where, q.Text(), spec.Quorum.Text())
	}
	alg, err := program.RegisterHosted(program.Hosted{Command: slices.Clone(spec.Program), Quorum: q,
		Claims: pb.Claims, ElectionTypes: pb.ElectionTypes, AnnounceTypes: pb.AnnounceTypes})
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, err)
	}
	return alg, nil
}

// errFound ends a log read once the line sought was read.
var errFound = errors.New("found")

// programBoot reads container cid's log up to its first boot line and
// returns what that line says of the program (booted false: no boot line
// yet; an empty Program: the line says nothing of one).
func programBoot(ctx context.Context, cli client.APIClient, cid string) (history.ProgramBoot, bool, error) {
	rc, err := cli.ContainerLogs(ctx, cid, client.ContainerLogsOptions{ShowStdout: true})
	if err != nil {
		return history.ProgramBoot{}, false, err
	}
	defer rc.Close()
	var (
		pb     history.ProgramBoot
		booted bool
	)
	lines := logrecord.NewLines(func(l []byte) {
		if booted {
			return
		}
		if rec, ok, _ := history.ParseNodeLog(l); ok && rec.Kind == history.KindBoot {
			booted = true
			pb, _ = history.ParseProgramBoot(l)
		}
	})
	w := writerFunc(func(p []byte) (int, error) {
		n, err := lines.Write(p)
		if err == nil && booted {
			err = errFound
		}
		return n, err
	})
	if _, err := stdcopy.StdCopy(w, io.Discard, rc); err != nil && !errors.Is(err, errFound) {
		return history.ProgramBoot{}, false, err
	}
	return pb, booted, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
