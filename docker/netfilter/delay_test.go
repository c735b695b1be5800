package netfilter

import (
	"context"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNamespace runs f on a thread that has joined the namespace fd refers
// to; sockets f creates stay in that namespace.
func inNamespace(t *testing.T, fd int, f func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		// The thread is not unlocked: it dies with the goroutine
		// instead of returning to the pool in a foreign namespace.
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("join namespace: %v", err)
	}
}

func loopbackUp(t *testing.T) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		t.Error(err)
		return
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		t.Error(err)
		return
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Error(err)
	}
}

// TestDelayerHoldsQueuedPacketsThenDeliversThem sends UDP over loopback
// through a queue rule: every packet arrives (nothing is dropped), and none
// before the delay it was held for.
func TestDelayerHoldsQueuedPacketsThenDeliversThem(t *testing.T) {
	ns := privateNamespace(t)
	var conn *net.UDPConn
	inNamespace(t, ns, func() {
		loopbackUp(t)
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Error(err)
			return
		}
		conn = c
	})
	if conn == nil {
		t.FailNow()
	}
	defer conn.Close()
	lo := netip.MustParseAddr("127.0.0.1")
	if err := Apply(Rules{QueuePeers: []netip.Addr{lo}, Queue: 3}, InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	const delay = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Delayer{Queue: 3, Delay: delay, NetNS: ns, Ready: func() { close(ready) }}.Run(ctx)
	}()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("delayer: %v", err)
	}
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("delayer: %v", err)
		}
	}()

	const packets = 5
	buf := make([]byte, 64)
	for i := range packets {
		sent := time.Now()
		if _, err := conn.WriteToUDP([]byte{byte(i)}, conn.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, _, err := conn.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("packet %d never arrived: %v", i, err)
		}
		if n != 1 || buf[0] != byte(i) {
			t.Fatalf("packet %d arrived as %v", i, buf[:n])
		}
		// Queued on the way out and again on the way in: held twice.
		if took := time.Since(sent); took < 2*delay {
			t.Fatalf("packet %d arrived after %v, before the %v it must be held", i, took, 2*delay)
		}
	}
}
