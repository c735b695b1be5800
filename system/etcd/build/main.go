// Command etcd is etcd's server, built from its own module at the version
// go.mod pins, for the FROM-scratch image of the etcd system (docs/systems.md).
// It lives in a module of its own so that etcd's dependency tree stays out
// of ringleader's go.mod.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
