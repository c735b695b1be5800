package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/wire"
)

// nodeClientURL is a node's own NATS server as seen from inside its
// container: the node contract's default client port (nodeEnv sets no
// other) on the loopback, so a control request reaches the node even
// while every link of its container is cut.
const nodeClientURL = "nats://127.0.0.1:4222"

// controlListenWait is how long `ringleader control` waits for the node to
// listen on its control subject. The backend acts on a node's boot line,
// and a node logs it before it subscribes: after a restart, the request
// that starts a gated machine or puts a drop set back can come first
// ("no node listens on that control subject", seen once in a suite run).
const controlListenWait = 10 * time.Second

// controlTimeout bounds one control exchange: `ringleader control`'s
// own waits, for the node to listen and for its answer, plus docker
// exec's overhead.
const controlTimeout = controlListenWait + control.Timeout + 10*time.Second

// control asks node id to apply c (a clock fault, a drop set) by running
// `ringleader control` inside the node's container: the container holds
// the run's secret in its environment, and the request goes to the node's
// own server on the loopback, as the control account (docs/trust.md). It
// returns once the node answered that the change is in effect, with its
// answer. A paused node cannot be asked (docker exec refuses); a node
// that is down has no one to answer.
func (b *Backend) control(ctx context.Context, id election.NodeID, c control.Request) (control.Reply, error) {
	args, err := controlArgs(id, c)
	if err != nil {
		return control.Reply{}, fmt.Errorf("docker: control node %d: %w", id, err)
	}
	b.mu.Lock()
	n, cluster := b.nodes[id], b.spec.Name
	cli := b.cliOfLocked(n)
	b.mu.Unlock()
	if n == nil {
		return control.Reply{}, fmt.Errorf("docker: control node %d: no such node in run %s", id, b.run)
	}
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	cmd := append([]string{"/ringleader", "control", "--server", nodeClientURL, "--cluster", cluster, "--wait", controlListenWait.String()}, args...)
	stdout, stderr, code, err := execIn(ctx, cli.Client, n.cid, cmd)
	if err != nil {
		return control.Reply{}, fmt.Errorf("docker: control node %d (%s): %w", id, n.name, err)
	}
	if code != 0 {
		msg := strings.TrimSpace(stderr + stdout)
		if msg == "" {
			msg = "(no output)"
		}
		return control.Reply{}, fmt.Errorf("docker: control node %d (%s): `%s` exited %d: %s", id, n.name, strings.Join(cmd[1:], " "), code, wire.ClipTo(msg, 400))
	}
	var r control.Reply
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || !r.OK {
		return r, fmt.Errorf("docker: control node %d (%s): not an answer: %s", id, n.name, wire.ClipTo(stdout, 200))
	}
	return r, nil
}

// controlArgs is `ringleader control`'s flags for c (the cluster and
// server aside).
func controlArgs(id election.NodeID, c control.Request) ([]string, error) {
	if _, err := control.Encode(c); err != nil {
		return nil, err
	}
	args := []string{"--node", strconv.Itoa(int(id))}
	if cc := c.Clock; cc != nil {
		if cc.Rate != nil {
			args = append(args, "--clock-rate", strconv.FormatFloat(*cc.Rate, 'g', -1, 64))
		} else {
			args = append(args, "--clock-jump", (time.Duration(*cc.JumpMS) * time.Millisecond).String())
		}
	}
	for _, set := range []struct {
		flag string
		ids  *[]election.NodeID
	}{{"--drop-from", c.DropFrom}, {"--hold-from", c.HoldFrom}} {
		if set.ids == nil {
			continue
		}
		ids := make([]string, len(*set.ids))
		for i, from := range *set.ids {
			ids[i] = strconv.Itoa(int(from))
		}
		args = append(args, set.flag+"="+strings.Join(ids, ","))
	}
	if c.Start {
		args = append(args, "--start")
	}
	return args, nil
}

// execIn runs cmd in container cid (as its own user, with its own
// environment) and returns what it wrote and its exit status.
func execIn(ctx context.Context, cli *client.Client, cid string, cmd []string) (stdout, stderr string, code int, err error) {
	created, err := cli.ExecCreate(ctx, cid, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", "", 0, fmt.Errorf("exec create: %w", err)
	}
	att, err := cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", "", 0, fmt.Errorf("exec start: %w", err)
	}
	defer att.Close()
	var out, errb bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(&out, &errb, att.Reader)
		copied <- err
	}()
	select {
	case err := <-copied:
		if err != nil {
			return "", "", 0, fmt.Errorf("exec read: %w", err)
		}
	case <-ctx.Done():
		return "", "", 0, fmt.Errorf("exec: %w", ctx.Err())
	}
	// The stream ends with the process; its exit status is set just
	// after, asynchronously.
	for {
		ins, err := cli.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
		if err != nil {
			return "", "", 0, fmt.Errorf("exec inspect: %w", err)
		}
		if !ins.Running {
			return out.String(), errb.String(), ins.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return "", "", 0, fmt.Errorf("exec: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
