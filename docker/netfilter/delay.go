package netfilter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nfnetlink_queue protocol numbers (linux/netfilter/nfnetlink_queue.h).
// The kernel has no netem here, so delay is a userspace path: the rules
// hand packets to an NFQUEUE, and Delayer gives each its accept verdict
// late.
const (
	nfnlSubsysQueue = 3

	nfqnlMsgPacket  = 0
	nfqnlMsgVerdict = 1
	nfqnlMsgConfig  = 2

	nfqaPacketHdr  = 1
	nfqaVerdictHdr = 2

	nfqaCfgCmd    = 1
	nfqaCfgParams = 2
	nfqaCfgMask   = 4
	nfqaCfgFlags  = 5

	nfqnlCfgCmdBind  = 1
	nfqnlCopyMeta    = 1 // the verdict needs the packet id, not the payload
	nfqaCfgFFailOpen = 1 // accept, not drop, when the queue is full

	nfAccept = 1
)

// Delayer releases the packets of one NFQUEUE after Delay plus a uniform
// random extra in [-Jitter, +Jitter] (never below zero). Packets whose
// jittered delays cross are released out of order, as on a real path
// with variable latency.
type Delayer struct {
	Queue         uint16
	Delay, Jitter time.Duration
	// NetNS, when not zero, is an fd of the namespace whose queue to
	// read (tests); zero reads the caller's namespace.
	NetNS int
	// Rand drives the jitter (nil: a random seed).
	Rand *rand.Rand
	// Ready, when set, is called once the queue is bound.
	Ready func()
}

// Run binds the queue and releases packets until ctx ends. Packets still
// held when it returns are lost to the queue; the rules' bypass flag lets
// later ones through undelayed once nobody is bound.
func (d Delayer) Run(ctx context.Context) error {
	if d.Delay < 0 || d.Jitter < 0 {
		return fmt.Errorf("netfilter: delay %v jitter %v: both must be zero or more", d.Delay, d.Jitter)
	}
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: d.NetNS})
	if err != nil {
		return fmt.Errorf("netfilter: delay: netlink: %w", err)
	}
	defer c.Close()
	// A burst larger than the socket buffer must not end the reader.
	_ = c.SetOption(netlink.NoENOBUFS, true)
	_ = c.SetReadBuffer(4 << 20)

	if err := d.config(c); err != nil {
		return err
	}
	if d.Ready != nil {
		d.Ready()
	}
	r := d.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}

	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	var (
		wg      sync.WaitGroup
		sendErr = make(chan error, 1)
	)
	defer wg.Wait()
	for {
		msgs, err := c.Receive()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("netfilter: delay: read queue %d: %w", d.Queue, err)
		}
		select {
		case err := <-sendErr:
			return err
		default:
		}
		for _, m := range msgs {
			if m.Header.Type != netlink.HeaderType(nfnlSubsysQueue<<8|nfqnlMsgPacket) {
				continue
			}
			id, ok := packetID(m.Data)
			if !ok {
				continue
			}
			wait := d.Delay
			if d.Jitter > 0 {
				wait += time.Duration(r.Int64N(int64(2*d.Jitter)+1)) - d.Jitter
			}
			wg.Add(1)
			time.AfterFunc(max(wait, 0), func() {
				defer wg.Done()
				if err := d.verdict(c, id); err != nil && ctx.Err() == nil {
					select {
					case sendErr <- err:
					default:
					}
				}
			})
		}
	}
}

// nfgen is struct nfgenmsg for the queue: family, version, queue number
// (big-endian).
func (d Delayer) nfgen() []byte {
	b := []byte{unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], d.Queue)
	return b
}

func (d Delayer) config(c *netlink.Conn) error {
	send := func(what string, attrs []netlink.Attribute) error {
		body, err := netlink.MarshalAttributes(attrs)
		if err != nil {
			return err
		}
		_, err = c.Execute(netlink.Message{
			Header: netlink.Header{
				Type:  netlink.HeaderType(nfnlSubsysQueue<<8 | nfqnlMsgConfig),
				Flags: netlink.Request | netlink.Acknowledge,
			},
			Data: append(d.nfgen(), body...),
		})
		if err != nil {
			return fmt.Errorf("netfilter: delay: %s queue %d: %w", what, d.Queue, err)
		}
		return nil
	}
	// struct nfqnl_msg_config_cmd {u8 command; u8 pad; be16 pf}
	if err := send("bind", []netlink.Attribute{{Type: nfqaCfgCmd, Data: []byte{nfqnlCfgCmdBind, 0, 0, 0}}}); err != nil {
		return err
	}
	// struct nfqnl_msg_config_params {be32 copy_range; u8 copy_mode} packed
	params := make([]byte, 5)
	binary.BigEndian.PutUint32(params, 0)
	params[4] = nfqnlCopyMeta
	flags := binary.BigEndian.AppendUint32(nil, nfqaCfgFFailOpen)
	return send("configure", []netlink.Attribute{
		{Type: nfqaCfgParams, Data: params},
		{Type: nfqaCfgMask, Data: flags},
		{Type: nfqaCfgFlags, Data: flags},
	})
}

func packetID(data []byte) (uint32, bool) {
	if len(data) < 4 {
		return 0, false
	}
	ad, err := netlink.NewAttributeDecoder(data[4:])
	if err != nil {
		return 0, false
	}
	for ad.Next() {
		if ad.Type() == nfqaPacketHdr {
			// struct nfqnl_msg_packet_hdr {be32 packet_id; be16
			// hw_protocol; u8 hook}
			b := ad.Bytes()
			if len(b) >= 4 {
				return binary.BigEndian.Uint32(b), true
			}
		}
	}
	return 0, false
}

func (d Delayer) verdict(c *netlink.Conn, id uint32) error {
	// struct nfqnl_msg_verdict_hdr {be32 verdict; be32 id}
	v := make([]byte, 8)
	binary.BigEndian.PutUint32(v, nfAccept)
	binary.BigEndian.PutUint32(v[4:], id)
	body, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: nfqaVerdictHdr, Data: v}})
	if err != nil {
		return err
	}
	_, err = c.Send(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(nfnlSubsysQueue<<8 | nfqnlMsgVerdict), Flags: netlink.Request},
		Data:   append(d.nfgen(), body...),
	})
	if err != nil && !errors.Is(err, unix.EBADF) {
		return fmt.Errorf("netfilter: delay: verdict for packet %d: %w", id, err)
	}
	return nil
}
