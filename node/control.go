package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// listenRetry is how often SendControl asks again while it waits for a
// node to listen.
const listenRetry = 20 * time.Millisecond

// refusedWhileWaiting, when set (by a test), is called each time a
// request that may wait for its node finds nobody listening.
var refusedWhileWaiting func()

// SendControl logs in to the NATS server at url as the control account of
// cluster and asks node id to apply c; it returns the node's answer once
// the change is in effect. ctx bounds the whole exchange (control.Timeout
// when it has no deadline). A refusal by the node is an error carrying
// its reason.
//
// wait is how long a node that does not listen yet is waited for: a node
// logs its boot line before its NATS server accepts connections and
// before it subscribes to its control subject, so a sender that acts on
// the boot line (the harness, after a restart or to open the gate) can be
// a moment early for either. With 0, a node that does not listen is
// ErrNotListening at once, which is what a person who typed a wrong ID
// wants to hear.
func SendControl(ctx context.Context, url, cluster, secret string, id election.NodeID, c control.Request, wait time.Duration) (control.Reply, error) {
	req, err := control.Encode(c)
	if err != nil {
		return control.Reply{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+control.Timeout)
		defer cancel()
	}
	listenBy := time.Now().Add(wait)
	nc, err := connectControl(ctx, url, secret, listenBy)
	if err != nil {
		waited := ""
		if wait > 0 && errors.Is(err, nats.ErrNoServers) {
			waited = fmt.Sprintf(" (nothing listened there within the %v waited)", wait)
		}
		return control.Reply{}, fmt.Errorf("control: connect to %s as %s: %w%s", url, trust.ControlUser, err, waited)
	}
	defer nc.Close()
	subject := trust.ControlSubject(cluster, int(id))
	msg, err := nc.RequestWithContext(ctx, subject, req)
	// The server answers "no responders" at once: try again a little
	// later, until the node subscribes or wait is over.
	for errors.Is(err, nats.ErrNoResponders) && retryLater(ctx, listenBy) {
		msg, err = nc.RequestWithContext(ctx, subject, req)
	}
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

// connectControl logs in as the control account. A server that refuses
// the connection outright (nats.ErrNoServers: nothing listens on url
// yet) is tried again every listenRetry until listenBy; any other error,
// a wrong secret among them, is returned at once.
func connectControl(ctx context.Context, url, secret string, listenBy time.Time) (*nats.Conn, error) {
	for {
		nc, err := nats.Connect(url, nats.UserInfo(trust.ControlUser, secret), nats.Name("ringleader-control"), nats.NoReconnect())
		if err == nil || !errors.Is(err, nats.ErrNoServers) || !retryLater(ctx, listenBy) {
			return nc, err
		}
	}
}

// retryLater is the pause before trying again what a starting node was
// not ready for: it reports false at once when listenBy has passed, else
// after listenRetry, or false when ctx ends first.
func retryLater(ctx context.Context, listenBy time.Time) bool {
	if !time.Now().Before(listenBy) {
		return false
	}
	if refusedWhileWaiting != nil {
		refusedWhileWaiting()
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(listenRetry):
		return true
	}
}
