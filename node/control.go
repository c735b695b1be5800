package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/election"
	"github.com/ringleader-dev/ringleader/node/control"
	"github.com/ringleader-dev/ringleader/trust"
)

// The sending end of the control channel (package control holds its
// messages): `ringleader control` and the tests ask a node for a change
// over NATS, as the control account (docs/trust.md).

// ErrNotListening is returned by SendControl when no node listens on the
// control subject (it is down, or not the ID asked for).
var ErrNotListening = errors.New("no node listens on that control subject (is it running, and is the ID right?)")

// SendControl logs in to the NATS server at url as the control account of
// cluster and asks node id to apply c; it returns the node's answer once
// the change is in effect. ctx bounds the whole exchange (control.Timeout
// when it has no deadline). A refusal by the node is an error carrying
// its reason.
func SendControl(ctx context.Context, url, cluster, secret string, id election.NodeID, c control.Request) (control.Reply, error) {
	req, err := control.Encode(c)
	if err != nil {
		return control.Reply{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, control.Timeout)
		defer cancel()
	}
	nc, err := nats.Connect(url, nats.UserInfo(trust.ControlUser, secret), nats.Name("ringleader-control"), nats.NoReconnect())
	if err != nil {
		return control.Reply{}, fmt.Errorf("control: connect to %s as %s: %w", url, trust.ControlUser, err)
	}
	defer nc.Close()
	subject := trust.ControlSubject(cluster, int(id))
	msg, err := nc.RequestWithContext(ctx, subject, req)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return control.Reply{}, fmt.Errorf("control: node %d on %s: %w", id, subject, ErrNotListening)
	case err != nil:
		return control.Reply{}, fmt.Errorf("control: node %d on %s: %w", id, subject, err)
	}
	var r control.Reply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return control.Reply{}, fmt.Errorf("control: node %d answered with something not a reply: %v", id, err)
	}
	if !r.OK {
		return r, fmt.Errorf("control: node %d refused %s: %s", id, c, r.Error)
	}
	return r, nil
}
