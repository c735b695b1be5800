// Package freeport picks a TCP port on 127.0.0.1 for a test's server to
// listen on, and keeps it for that test alone.
//
// The usual trick — listen on port 0, read the port, close — hands out a
// port from the kernel's ephemeral range, the same range every outgoing
// connection takes its local port from. With many test binaries at once
// (make test runs several, each starting NATS clusters and containers) an
// outgoing connection can take the port between the close and the test
// server's own listen, and the server fails with "address in use". A port
// below the ephemeral range is never given to a connection by the kernel.
//
// Nor is a port given twice by Pick: a port that is free now may be
// another test's, picked and not listened on yet (the nodes of a test
// cluster are given their ports before any starts), or between a killed
// node and its restart. So every port Pick returns is reserved for as
// long as the process lives — within the process in a set, across the
// test binaries of one machine by a lock on the port's byte of one shared
// file (reserve.go), which the kernel drops when the process ends however
// it ends.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the bottom of the range picked from: above the well-known
// and commonly configured service ports.
const lowest = 20000

// fallbackEphemeralStart is Linux's default ip_local_port_range start,
// used where the kernel's value cannot be read.
const fallbackEphemeralStart = 32768

// draws is how many random ports Pick tries before it gives up.
const draws = 200

// Pick returns a port on 127.0.0.1 below the kernel's ephemeral range that
// nothing listens on and that no Pick of this or another process on this
// machine has returned while that process lives; it fails t if none is
// found.
func Pick(t testing.TB) int {
	t.Helper()
	hi := ephemeralStart()
	if hi <= lowest+100 {
		hi = fallbackEphemeralStart
	}
	for range draws {
		port := lowest + rand.IntN(hi-lowest)
		if !reserve(port) {
			continue // another test's: draw again
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use by something else: stays reserved, draw again
		}
		ln.Close()
		return port
	}
	t.Fatalf("freeport: no free port on 127.0.0.1 in [%d, %d) after %d draws", lowest, hi, draws)
	return 0
}

// ephemeralStart is the first port of the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), or the Linux default.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallbackEphemeralStart
	}
	var lo, hi int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &lo, &hi); err != nil || lo <= 0 {
		return fallbackEphemeralStart
	}
	return lo
}
