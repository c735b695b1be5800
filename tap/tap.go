// Package tap watches a cluster's traffic: it logs in to one node's NATS
// server as the read-only observer (with the cluster's secret), subscribes
// to every subject of the cluster and prints each message as it passes. It
// can publish nothing, and what it holds open is plain subject interest,
// which the nodes' failure hints do not depend on (docs/trust.md,
// docs/node.md): attaching a tap changes no election.
package tap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ringleader-dev/ringleader/trust"
	"github.com/ringleader-dev/ringleader/wire"
)

// Options says where to listen and how to print.
type Options struct {
	// Server is a node's client URL, nats://HOST:4222.
	Server string
	// Cluster is the cluster name (the subject namespace).
	Cluster string
	// Secret is the cluster's secret.
	Secret string
	// JSON prints each message as one JSON object per line instead of a
	// line for people.
	JSON bool
	// Out receives the lines.
	Out io.Writer
	// Ready, when set, is called once the subscription is in place.
	Ready func()
}

// Line is one message seen, as --json prints it.
type Line struct {
	Time    time.Time       `json:"time"`
	Subject string          `json:"subject"`
	Type    string          `json:"type,omitempty"`
	From    int64           `json:"from,omitempty"`
	To      int64           `json:"to,omitempty"`
	Epoch   uint64          `json:"epoch,omitempty"`
	Raw     json.RawMessage `json:"envelope,omitempty"`
	// Note says why a message could not be read as an envelope.
	Note string `json:"note,omitempty"`
}

// Run prints the cluster's traffic until ctx ends.
func Run(ctx context.Context, o Options) error {
	if err := trust.CheckSecret(o.Secret); err != nil {
		return fmt.Errorf("tap: %s: %w", trust.SecretEnv, err)
	}
	nc, err := nats.Connect(o.Server, nats.UserInfo(trust.ObserverUser, o.Secret), nats.Name("ringleader-tap"),
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return fmt.Errorf("tap: connect to %s as %s: %w", o.Server, trust.ObserverUser, err)
	}
	defer nc.Close()
	msgs := make(chan *nats.Msg, 4096)
	sub, err := nc.ChanSubscribe(trust.Subjects(o.Cluster), msgs)
	if err != nil {
		return fmt.Errorf("tap: subscribe to %s: %w", trust.Subjects(o.Cluster), err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	if o.Ready != nil {
		o.Ready()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-msgs:
			if err := write(o, describe(m)); err != nil {
				return err
			}
		}
	}
}

// describe reads what it can of a message without trusting it: the tap
// shows forged or garbled traffic too, marked as such.
func describe(m *nats.Msg) Line {
	l := Line{Time: time.Now().UTC(), Subject: m.Subject}
	var env wire.Envelope
	if len(m.Data) > wire.MaxSize {
		l.Note = fmt.Sprintf("%d bytes, over the wire limit", len(m.Data))
		return l
	}
	if strings.Contains(m.Subject, ".control.") {
		// The harness changing a node's clock or drop set
		// (docs/node.md, "The control channel"): not an election
		// message.
		l.Note = "control request: " + wire.ClipTo(string(m.Data), 120)
		return l
	}
	if err := json.Unmarshal(m.Data, &env); err != nil {
		l.Note = "not an envelope: " + wire.Clip(string(m.Data))
		return l
	}
	l.Type, l.From, l.To, l.Epoch = env.Msg.Type, int64(env.Msg.From), int64(env.Msg.To), env.Msg.Epoch
	l.Raw = json.RawMessage(m.Data)
	return l
}

func write(o Options, l Line) error {
	var err error
	if o.JSON {
		err = json.NewEncoder(o.Out).Encode(l)
	} else if l.Note != "" {
		_, err = fmt.Fprintf(o.Out, "%s  %-28s  %s\n", l.Time.Format("15:04:05.000"), l.Subject, l.Note)
	} else {
		_, err = fmt.Fprintf(o.Out, "%s  %-14s %d → %d  epoch %d\n", l.Time.Format("15:04:05.000"), l.Type, l.From, l.To, l.Epoch)
	}
	if err != nil {
		return errors.Join(errOutput, err)
	}
	return nil
}

// errOutput marks a failed write: the reader has gone (a closed pipe).
var errOutput = errors.New("tap: output closed")

// OutputClosed reports whether Run ended because its output went away.
func OutputClosed(err error) bool { return errors.Is(err, errOutput) }
