package node

import (
	"time"
	_ "unsafe" // for go:linkname

	"github.com/ringleader-dev/ringleader/routes"
)

// NATS waits a second before re-dialling a lost route and a second between
// failed attempts, and offers no option for either: the two delays are
// package variables of the server (routeReconnectDelay, routeConnectDelay),
// which its own tests lower the same way. A healed or resumed peer was
// unheard for 0.9–1.4 s because of them, longer than the election that
// follows. They are set once, before any server of this process starts,
// to routes.Redial (package node imports the server, so the server's own
// initialisation of them has run by then). nats-server is pinned in go.mod; if a new version
// renames them the build fails at link time rather than silently keeping
// the second.

//go:linkname natsRouteReconnectDelay github.com/nats-io/nats-server/v2/server.routeReconnectDelay
var natsRouteReconnectDelay time.Duration

//go:linkname natsRouteConnectDelay github.com/nats-io/nats-server/v2/server.routeConnectDelay
var natsRouteConnectDelay time.Duration

func init() {
	natsRouteReconnectDelay = routes.Redial
	natsRouteConnectDelay = routes.Redial
}
