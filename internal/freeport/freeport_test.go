package freeport

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

func TestPickNeverGivesAPortTwice(t *testing.T) {
	// Nothing listens on the picked ports here, so a Pick that only checked
	// that a port is free would repeat one: 1,000 draws from some 12,000
	// ports repeat about 40 times.
	seen := map[int]bool{}
	for range 1000 {
		p := Pick(t)
		if seen[p] {
			t.Fatalf("Pick returned port %d twice", p)
		}
		seen[p] = true
	}
}

// childEnv names the port a re-run of this test binary tries to reserve
// instead of running the tests (TestMain), printing what reserve answered.
const childEnv = "FREEPORT_TEST_RESERVE"

func TestMain(m *testing.M) {
	if s := os.Getenv(childEnv); s != "" {
		port, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("reserved=%v\n", reserve(port))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// reserveInChild runs this test binary again to reserve port and reports
// what it answered; the child's reservations end with it.
func reserveInChild(t *testing.T, port int) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	switch {
	case strings.Contains(string(out), "reserved=true"):
		return true
	case strings.Contains(string(out), "reserved=false"):
		return false
	}
	t.Fatalf("child said neither reserved=true nor reserved=false:\n%s", out)
	return false
}

func TestAnotherProcessCannotReserveAPickedPort(t *testing.T) {
	if lockFile() == nil {
		t.Fatalf("the lock file in %s cannot be opened: ports are not reserved across processes", os.TempDir())
	}
	held := Pick(t)
	if reserveInChild(t, held) {
		t.Fatalf("another process reserved port %d, which this one picked", held)
	}
}

func TestAPortIsFreeAgainWhenItsProcessEnds(t *testing.T) {
	// A port neither this process nor any other holds; a child takes it
	// and exits.
	port := lowest
	for ; ; port++ {
		if port == fallbackEphemeralStart {
			t.Fatalf("no port in [%d, %d) that a child could reserve", lowest, port)
		}
		mu.Lock()
		ours := given[port]
		mu.Unlock()
		if !ours && reserveInChild(t, port) {
			break
		}
	}
	if !reserve(port) {
		t.Fatalf("port %d is still held after the process that reserved it ended", port)
	}
}
