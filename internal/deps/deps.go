//go:build deps

// Package deps pins the project's libraries in go.mod while the packages
// that use them are being written; go mod tidy honours every build tag.
package deps

import (
	_ "github.com/google/nftables"
	_ "github.com/nats-io/nats-server/v2/server"
	_ "github.com/nats-io/nats.go"
	_ "github.com/sirupsen/logrus"
	_ "github.com/testcontainers/testcontainers-go"
	_ "github.com/testcontainers/testcontainers-go/network"
	_ "go.yaml.in/yaml/v3"
)
