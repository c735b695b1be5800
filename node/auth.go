package node

import (
	"net/url"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/ringleader-dev/ringleader/trust"
)

// authorize requires the secret of every client and route of opts's server.
// Only the control account publishes on control subjects: a node may
// answer a control request it received (a response permission, good for
// one reply) but never send one, so a member's traffic cannot move
// another member's clock or cut its links.
func authorize(opts *server.Options, cluster, secret string) {
	subjects := []string{trust.Subjects(cluster)}
	opts.Users = []*server.User{
		{
			Username: trust.NodeUser,
			Password: secret,
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: subjects, Deny: []string{trust.ControlSubjects(cluster)}},
				Subscribe: &server.SubjectPermission{Allow: subjects},
				Response:  &server.ResponsePermission{MaxMsgs: 1},
			},
		},
		{
			Username: trust.ControlUser,
			Password: secret,
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: []string{trust.ControlSubjects(cluster)}},
				Subscribe: &server.SubjectPermission{Allow: []string{trust.ReplyInboxes}},
			},
		},
		{
			Username: trust.ObserverUser,
			Password: secret,
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Deny: []string{">"}},
				Subscribe: &server.SubjectPermission{Allow: subjects},
			},
		},
	}
	opts.Cluster.Username = trust.RouteUser
	opts.Cluster.Password = secret
}

// routeURL is a peer's route URL carrying the route login.
func routeURL(hostport, secret string) *url.URL {
	return &url.URL{Scheme: "nats-route", Host: hostport, User: url.UserPassword(trust.RouteUser, secret)}
}
