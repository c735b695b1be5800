package netfilter

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"reflect"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// privateNamespace returns an fd for a fresh network namespace, so the
// tests never touch the host's rules. It skips when the process may not
// create one (no CAP_SYS_ADMIN).
func privateNamespace(t *testing.T) int {
	t.Helper()
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result)
	go func() {
		// The thread that unshares is never unlocked, so it exits with
		// this goroutine and nothing else ever runs in the namespace;
		// the fd keeps the namespace alive.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{-1, err}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- result{fd, err}
	}()
	r := <-ch
	if r.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot create a private network namespace for the netfilter tests: %v", r.err)
		}
		t.Skipf("cannot create a private network namespace (needs CAP_SYS_ADMIN and CAP_NET_ADMIN): %v", r.err)
	}
	t.Cleanup(func() { unix.Close(r.fd) })
	return r.fd
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, x := range s {
		out[i] = netip.MustParseAddr(x)
	}
	return out
}

func TestApplyInstallsExactlyTheRulesAndReadDecodesThem(t *testing.T) {
	ns := privateNamespace(t)
	want := Rules{
		DropOut:     addrs("172.30.0.3", "172.30.0.4"),
		DropIn:      addrs("172.30.0.5"),
		RefuseOut:   addrs("172.30.0.8"),
		LossPercent: 30,
		LossPeers:   addrs("172.30.0.6"),
		QueuePeers:  addrs("172.30.0.7"),
		Queue:       9,
	}
	if err := Apply(want, InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got, err := Read(InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("table holds %v, want %v", got, want)
	}
}

func TestApplyReplacesTheWholeTable(t *testing.T) {
	ns := privateNamespace(t)
	if err := Apply(Rules{DropOut: addrs("10.0.0.1", "10.0.0.2")}, InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	second := Rules{DropIn: addrs("10.0.0.3")}
	if err := Apply(second, InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got, err := Read(InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, second) {
		t.Fatalf("after a second Apply the table holds %v, want only %v", got, second)
	}
}

func TestHealRemovesEverythingAndIsIdempotent(t *testing.T) {
	ns := privateNamespace(t)
	if err := Heal(InNamespace(ns)); err != nil {
		t.Fatalf("heal of a namespace with no table: %v", err)
	}
	if err := Apply(Rules{LossPercent: 100, LossPeers: addrs("10.0.0.9")}, InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := Heal(InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got, err := Read(InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Empty() {
		t.Fatalf("after heal the namespace still holds %v", got)
	}
}

func TestArgsRoundTripThroughParse(t *testing.T) {
	for _, r := range []Rules{
		{},
		{DropOut: addrs("172.18.0.2")},
		{DropOut: addrs("172.18.0.2"), RefuseOut: addrs("172.18.0.3")},
		{DropIn: addrs("172.18.0.2", "172.18.0.3"), LossPercent: 5, LossPeers: addrs("172.18.0.4")},
		{QueuePeers: addrs("172.18.0.9"), Queue: 65535},
	} {
		got, err := Parse(r.Args())
		if err != nil {
			t.Fatalf("Parse(%q): %v", r.Args(), err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("Parse(Args(%v)) = %v", r, got)
		}
	}
}

func TestParseRejectsWhatTheRulesCannotMatch(t *testing.T) {
	for _, args := range [][]string{
		{"--drop-out", "node1"},
		{"--drop-in", "fd00::1"},
		{"--loss", "101", "--loss-peers", "10.0.0.1"},
		{"--loss-peers", "10.0.0.1"},
		{"--queue", "70000"},
		{"stray"},
	} {
		if _, err := Parse(args); err == nil {
			t.Errorf("Parse(%q) accepted it", args)
		}
	}
}

// echoPeer listens on 127.0.0.2 inside the caller's namespace and echoes
// whatever it is sent; the dialer dials it from 127.0.0.1, so a reset a cut
// answers with is addressed to the dialler, not to the cut-off peer (whose
// packets the cut drops). Call it from inNamespace; stop closes it.
func echoPeer() (addr string, d net.Dialer, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return "", net.Dialer{}, nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	d = net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
	return ln.Addr().String(), d, func() { ln.Close() }, nil
}

// A connection attempt across a cut is refused by the sender's own stack,
// so a route re-dialled during a partition fails at once and is dialled
// again soon after the heal, instead of hanging in SYN retransmissions.
// The control dial, before the cut, connects.
func TestACutRefusesConnectionAttemptsAtOnce(t *testing.T) {
	ns := privateNamespace(t)
	var setup, before, during error
	inNamespace(t, ns, func() {
		loopbackUp(t)
		addr, d, stop, err := echoPeer()
		if err != nil {
			setup = err
			return
		}
		defer stop()
		c, err := d.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		before = err
		if err := Apply(Rules{DropOut: addrs("127.0.0.2")}, InNamespace(ns)); err != nil {
			setup = err
			return
		}
		// 5 s is far past the kernel's first SYN retransmission (1 s):
		// a dial that is merely dropped ends in a timeout, not a refusal.
		_, during = d.Dial("tcp", addr)
	})
	if setup != nil {
		t.Fatal(setup)
	}
	if before != nil {
		t.Fatalf("dial before the cut: %v", before)
	}
	if !errors.Is(during, syscall.ECONNREFUSED) {
		t.Fatalf("dial across the cut: %v, want connection refused", during)
	}
}

// Lifting a cut passes through RefuseOut: new connections are still
// refused, but a connection that is open carries data both ways, and so
// would the answer to a peer's connection attempt.
func TestRefuseOutDropsNothingButConnectionAttempts(t *testing.T) {
	ns := privateNamespace(t)
	var setup, dialed, echoed error
	inNamespace(t, ns, func() {
		loopbackUp(t)
		addr, d, stop, err := echoPeer()
		if err != nil {
			setup = err
			return
		}
		defer stop()
		open, err := d.Dial("tcp", addr)
		if err != nil {
			setup = err
			return
		}
		defer open.Close()
		if err := Apply(Rules{RefuseOut: addrs("127.0.0.2")}, InNamespace(ns)); err != nil {
			setup = err
			return
		}
		_, dialed = d.Dial("tcp", addr)
		_ = open.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := open.Write([]byte("x")); err != nil {
			echoed = err
			return
		}
		buf := make([]byte, 1)
		_, echoed = io.ReadFull(open, buf)
	})
	if setup != nil {
		t.Fatal(setup)
	}
	if !errors.Is(dialed, syscall.ECONNREFUSED) {
		t.Errorf("new connection under RefuseOut: %v, want connection refused", dialed)
	}
	if echoed != nil {
		t.Errorf("the open connection under RefuseOut: %v, want its data through", echoed)
	}
}
