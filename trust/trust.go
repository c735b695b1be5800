// Package trust holds what admits a program to a cluster: the cluster's
// secret and the accounts its NATS servers know. Every cluster — a harness
// run, the compose cluster, an in-process test cluster — gets its own secret
// when it starts; no image holds one. docs/trust.md is the trust model.
package trust

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
)

// SecretEnv is the environment variable that carries a cluster's secret to
// its nodes and tools. A variable rather than a flag: a flag is visible to
// every user of the host in the process list.
const SecretEnv = "RINGLEADER_SECRET"

// The accounts of a node's embedded server. All four log in with the one
// secret: the secret admits a program to the room, the user name says what
// it means to do there.
const (
	// NodeUser is a node's own client: it publishes and subscribes on
	// its cluster's subjects and nowhere else.
	NodeUser = "node"
	// ObserverUser is for people and tools that watch the traffic (a tap,
	// a `nats sub`): it subscribes to the cluster's subjects and may
	// publish nothing, so a watcher cannot take part by mistake.
	ObserverUser = "observer"
	// RouteUser is the account routes between the cluster's servers log
	// in with.
	RouteUser = "route"
	// ControlUser is the harness's: it may publish only on the nodes'
	// control subjects (a clock fault, a message-level cut) and read
	// the nodes' answers. Nodes may not publish there, so no member's
	// election traffic can change another member's clock.
	ControlUser = "control"
)

// ReadSecret is the secret a node or tool was given: the contents of file
// when one is named (--secret-file), else getenv(SecretEnv). Surrounding
// white space is not part of it ("" when neither holds one).
func ReadSecret(file string, getenv func(string) string) (string, error) {
	if file == "" {
		if getenv == nil {
			return "", nil
		}
		return getenv(SecretEnv), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Secret lengths: short enough for a URL's user info, long enough that
// guessing one over a network is hopeless.
const (
	MinSecretLen = 16
	MaxSecretLen = 256
)

// NewSecret returns a fresh cluster secret: 24 random bytes as URL-safe
// base64 (32 characters), fit for a URL's user info and an environment
// variable alike.
func NewSecret() string {
	b := make([]byte, 24)
	rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckSecret says what is wrong with a cluster secret, if anything.
func CheckSecret(s string) error {
	if len(s) < MinSecretLen || len(s) > MaxSecretLen {
		return fmt.Errorf("the secret is %d characters; want %d to %d", len(s), MinSecretLen, MaxSecretLen)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return fmt.Errorf("the secret holds a space, control or non-ASCII character at offset %d; want printable ASCII", i)
		}
	}
	return nil
}

// Subjects is the subject space of a cluster: every inbox, reply and
// no-responders subject its nodes use lies under it.
func Subjects(cluster string) string { return "ringleader." + cluster + ".>" }

// ControlSubject is node id's control subject: the only place its clock
// and its drop and hold sets are changed from (control.Request, package
// node/control).
func ControlSubject(cluster string, id int) string {
	return fmt.Sprintf("ringleader.%s.control.%d", cluster, id)
}

// ControlSubjects matches every node's control subject of a cluster.
func ControlSubjects(cluster string) string { return "ringleader." + cluster + ".control.*" }

// ReplyInboxes is where the control account reads the nodes' answers
// (nats.go's request inboxes).
const ReplyInboxes = "_INBOX.>"
