package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickGivesAListenablePortBelowTheEphemeralRange(t *testing.T) {
	start := ephemeralStart()
	for range 20 {
		p := Pick(t)
		if p < lowest || p >= start {
			t.Fatalf("Pick = %d, want in [%d, %d)", p, lowest, start)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("Pick = %d, but listening on it failed: %v", p, err)
		}
		ln.Close()
	}
}

func TestPickSkipsAPortInUse(t *testing.T) {
	// Hold every port but one of a tiny range is not possible without
	// changing the range; instead hold the port Pick gave and check the
	// next picks never return it while it is held.
	held := Pick(t)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(held))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for range 200 {
		if p := Pick(t); p == held {
			t.Fatalf("Pick returned port %d, which is held", p)
		}
	}
}
