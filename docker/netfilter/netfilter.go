// Package netfilter installs the docker backend's network faults inside one
// network namespace with nftables, spoken over netlink in pure Go (no nft
// binary exists in the FROM-scratch node image). Everything lives in one
// table, family inet, named "ringleader": an input and an output chain whose
// rules drop packets to or from given peers, drop a random share of them
// (loss), or hand them to an NFQUEUE reader that releases them late (delay).
//
// The backend runs this code inside a node's namespace through the
// `ringleader netfilter` subcommand in a short-lived helper container; Rules
// travel there as command-line flags (Args, Parse).
package netfilter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

// Table is the name of the one table this package owns. Deleting it removes
// every fault the backend put into a namespace.
const Table = "ringleader"

// Rules is everything one namespace should hold: the desired state, not a
// change. Apply replaces whatever the table held before, so the backend
// never has to remember what a namespace currently has.
type Rules struct {
	// DropOut: every packet this namespace sends to one of these
	// addresses is dropped (output chain). A cut from this node to them.
	DropOut []netip.Addr
	// DropIn: every packet from one of these addresses is dropped (input
	// chain). A cut from them to this node.
	DropIn []netip.Addr
	// RefuseOut: connection attempts to these addresses are refused by
	// this namespace's own stack, and nothing else is dropped: the first
	// half of lifting a cut (see the docker backend's syncRules). Every
	// DropOut address is refused as well.
	RefuseOut []netip.Addr
	// LossPercent (1..100) of the packets to and from LossPeers are
	// dropped at random, independently in each direction.
	LossPercent int
	LossPeers   []netip.Addr
	// QueuePeers: packets to and from these addresses go to NFQUEUE
	// number Queue, where a reader (Delayer) releases them late. The
	// queue bypasses when no reader is bound, so a dead reader degrades
	// to no delay rather than a silent partition.
	QueuePeers []netip.Addr
	Queue      uint16
}

// Empty reports whether r holds no rule at all (the table can go).
func (r Rules) Empty() bool {
	return len(r.DropOut) == 0 && len(r.DropIn) == 0 && len(r.RefuseOut) == 0 &&
		(r.LossPercent == 0 || len(r.LossPeers) == 0) && len(r.QueuePeers) == 0
}

// Validate names the first thing wrong with r.
func (r Rules) Validate() error {
	for _, l := range [][]netip.Addr{r.DropOut, r.DropIn, r.RefuseOut, r.LossPeers, r.QueuePeers} {
		for _, a := range l {
			if !a.Is4() {
				return fmt.Errorf("netfilter: address %s is not IPv4 (docker bridge networks are IPv4; that is all the rules match)", a)
			}
		}
	}
	if r.LossPercent < 0 || r.LossPercent > 100 {
		return fmt.Errorf("netfilter: loss %d%% out of range (valid: 0..100)", r.LossPercent)
	}
	if len(r.LossPeers) > 0 && r.LossPercent == 0 {
		return fmt.Errorf("netfilter: loss peers given without a loss percentage (valid: 1..100)")
	}
	return nil
}

// Args encodes r as the flags Parse reads, for the helper container's
// command line.
func (r Rules) Args() []string {
	var out []string
	add := func(name string, l []netip.Addr) {
		if len(l) == 0 {
			return
		}
		s := make([]string, len(l))
		for i, a := range l {
			s[i] = a.String()
		}
		out = append(out, "--"+name, strings.Join(s, ","))
	}
	add("drop-out", r.DropOut)
	add("drop-in", r.DropIn)
	add("refuse-out", r.RefuseOut)
	if r.LossPercent > 0 {
		out = append(out, "--loss", strconv.Itoa(r.LossPercent))
	}
	add("loss-peers", r.LossPeers)
	add("queue-peers", r.QueuePeers)
	if len(r.QueuePeers) > 0 {
		out = append(out, "--queue", strconv.Itoa(int(r.Queue)))
	}
	return out
}

// addrList is a flag.Value holding comma-separated IPv4 addresses.
type addrList struct{ l *[]netip.Addr }

func (a addrList) String() string {
	if a.l == nil {
		return ""
	}
	s := make([]string, len(*a.l))
	for i, x := range *a.l {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (a addrList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		ip, err := netip.ParseAddr(f)
		if err != nil {
			return fmt.Errorf("%q is not an IP address (valid: comma-separated IPv4 addresses such as 172.18.0.2,172.18.0.3)", f)
		}
		*a.l = append(*a.l, ip)
	}
	return nil
}

// Flags registers r's fields on fs, the command-line form Args writes.
func (r *Rules) Flags(fs *flag.FlagSet) {
	fs.Var(addrList{&r.DropOut}, "drop-out", "drop every packet sent to these addresses (comma-separated)")
	fs.Var(addrList{&r.DropIn}, "drop-in", "drop every packet received from these addresses")
	fs.Var(addrList{&r.RefuseOut}, "refuse-out", "refuse connection attempts to these addresses at once, dropping nothing")
	fs.IntVar(&r.LossPercent, "loss", 0, "percentage (1..100) of packets to and from --loss-peers to drop at random")
	fs.Var(addrList{&r.LossPeers}, "loss-peers", "addresses --loss applies to")
	fs.Var(addrList{&r.QueuePeers}, "queue-peers", "addresses whose packets go to the NFQUEUE --queue (delay)")
	fs.Func("queue", "NFQUEUE number for --queue-peers (0..65535)", func(s string) error {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			return fmt.Errorf("%q is not a queue number (valid: 0..65535)", s)
		}
		r.Queue = uint16(n)
		return nil
	})
}

// Parse reads the flags Args wrote.
func Parse(args []string) (Rules, error) {
	var r Rules
	fs := flag.NewFlagSet("netfilter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return Rules{}, fmt.Errorf("netfilter: %w", err)
	}
	if fs.NArg() > 0 {
		return Rules{}, fmt.Errorf("netfilter: unexpected argument %q (valid: only flags)", fs.Arg(0))
	}
	return r, r.Validate()
}

// Option configures the netlink connection.
type Option = nftables.ConnOption

// InNamespace makes the connection act on the network namespace fd refers
// to instead of the caller's (tests use it with a private namespace).
func InNamespace(fd int) Option { return nftables.WithNetNSFd(fd) }

var table = &nftables.Table{Name: Table, Family: nftables.TableFamilyINet}

func chains() (in, out *nftables.Chain) {
	policy := nftables.ChainPolicyAccept
	in = &nftables.Chain{Name: "input", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter, Policy: &policy}
	out = &nftables.Chain{Name: "output", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &policy}
	return in, out
}

// Apply makes the namespace hold exactly r, in one netlink batch: the old
// table (if any) is deleted and the new one created atomically, so no packet
// ever sees half a rule set. Empty rules delete the table.
func Apply(r Rules, opts ...Option) error {
	if err := r.Validate(); err != nil {
		return err
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return fmt.Errorf("netfilter: netlink: %w", err)
	}
	// Adding before deleting makes the delete valid whether or not the
	// table existed: the usual idempotent-replace idiom of nft scripts.
	c.AddTable(table)
	c.DelTable(table)
	if !r.Empty() {
		c.AddTable(table)
		in, out := chains()
		c.AddChain(in)
		c.AddChain(out)
		for _, rule := range ruleExprs(r, in, out) {
			c.AddRule(rule)
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("netfilter: install table inet %s: %w", Table, err)
	}
	return nil
}

// Heal deletes the table and with it every rule. It succeeds when there was
// nothing to delete.
func Heal(opts ...Option) error { return Apply(Rules{}, opts...) }

// Header offsets of the IPv4 source and destination addresses.
const (
	offSaddr = 12
	offDaddr = 16
)

// matchAddr matches IPv4 packets whose address at off equals a.
func matchAddr(off uint32, a netip.Addr) []expr.Any {
	b := a.As4()
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: b[:]},
	}
}

// randomBelow matches with probability p/100. numgen writes a host-order
// u32 and cmp compares bytes, so the value is turned big-endian first, as
// nft itself does for `numgen random mod 100 < p`.
func randomBelow(p int) []expr.Any {
	return []expr.Any{
		&expr.Numgen{Register: 1, Modulus: 100, Type: unix.NFT_NG_RANDOM},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binaryutil.BigEndian.PutUint32(uint32(p))},
	}
}

// nfqueueInfo is struct xt_NFQ_info_v3 {u16 queuenum, queues_total, flags}
// in host order, padded to 8 bytes as xtables aligns target info.
func nfqueueInfo(q uint16) *xt.Unknown {
	const bypass = 0x01 // NFQ_FLAG_BYPASS: accept when no reader is bound
	b := make([]byte, 8)
	binary.NativeEndian.PutUint16(b[0:], q)
	binary.NativeEndian.PutUint16(b[2:], 1)
	binary.NativeEndian.PutUint16(b[4:], bypass)
	u := xt.Unknown(b)
	return &u
}

func queueTo(q uint16) expr.Any {
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: nfqueueInfo(q)}
}

func drop() expr.Any { return &expr.Verdict{Kind: expr.VerdictDrop} }

// TCP header: the flags byte, and the SYN and ACK bits in it.
const (
	offTCPFlags = 13
	tcpSYN      = 0x02
	tcpACK      = 0x10
)

// refuseConnect answers a TCP connection attempt (SYN without ACK) this
// namespace sends with a reset from its own stack, so connect() fails at
// once instead of waiting out SYN retransmissions: what a host behind a
// router that knows the path is gone sees. Nothing crosses the cut either
// way. Without it, a route re-dialled during a partition blocks in its dial
// for a second, and the peer is heard again only that long after the heal.
// Packets of connections already open are dropped as before, so a cut is
// still noticed by silence (route pings), never by a reset.
func refuseConnect() []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: offTCPFlags, Len: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 1, Mask: []byte{tcpSYN | tcpACK}, Xor: []byte{0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{tcpSYN}},
		&expr.Reject{Type: unix.NFT_REJECT_TCP_RST},
	}
}

// ruleExprs lays r out as rules: cuts first (a cut wins over loss or
// delay), each refusing new connections before it drops the rest, then
// loss, then the queue.
func ruleExprs(r Rules, in, out *nftables.Chain) []*nftables.Rule {
	var rules []*nftables.Rule
	add := func(c *nftables.Chain, e ...expr.Any) {
		rules = append(rules, &nftables.Rule{Table: table, Chain: c, Exprs: e})
	}
	for _, a := range r.DropOut {
		add(out, append(matchAddr(offDaddr, a), refuseConnect()...)...)
		add(out, append(matchAddr(offDaddr, a), drop())...)
	}
	for _, a := range r.RefuseOut {
		if !slices.Contains(r.DropOut, a) {
			add(out, append(matchAddr(offDaddr, a), refuseConnect()...)...)
		}
	}
	for _, a := range r.DropIn {
		add(in, append(matchAddr(offSaddr, a), drop())...)
	}
	if r.LossPercent > 0 {
		for _, a := range r.LossPeers {
			add(out, slices.Concat(matchAddr(offDaddr, a), randomBelow(r.LossPercent), []expr.Any{drop()})...)
			add(in, slices.Concat(matchAddr(offSaddr, a), randomBelow(r.LossPercent), []expr.Any{drop()})...)
		}
	}
	for _, a := range r.QueuePeers {
		add(out, append(matchAddr(offDaddr, a), queueTo(r.Queue))...)
		add(in, append(matchAddr(offSaddr, a), queueTo(r.Queue))...)
	}
	return rules
}

// Read returns what the namespace's table holds, decoded back into Rules
// (zero Rules when there is no table). It understands only rules this
// package writes; anything else is an error naming the rule.
func Read(opts ...Option) (Rules, error) {
	c, err := nftables.New(opts...)
	if err != nil {
		return Rules{}, fmt.Errorf("netfilter: netlink: %w", err)
	}
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyINet)
	if err != nil {
		return Rules{}, fmt.Errorf("netfilter: list tables: %w", err)
	}
	if !slices.ContainsFunc(tables, func(t *nftables.Table) bool { return t.Name == Table }) {
		return Rules{}, nil
	}
	var r Rules
	in, out := chains()
	for _, ch := range []*nftables.Chain{out, in} {
		rules, err := c.GetRules(table, ch)
		if err != nil {
			return Rules{}, fmt.Errorf("netfilter: list chain %s: %w", ch.Name, err)
		}
		for i, rule := range rules {
			if err := decode(&r, ch == out, rule.Exprs); err != nil {
				return Rules{}, fmt.Errorf("netfilter: chain %s rule %d: %w", ch.Name, i+1, err)
			}
		}
	}
	// Loss and queue rules come in output/input pairs; keep one address
	// per pair.
	r.RefuseOut = slices.DeleteFunc(r.RefuseOut, func(a netip.Addr) bool { return slices.Contains(r.DropOut, a) })
	if len(r.RefuseOut) == 0 {
		r.RefuseOut = nil
	}
	r.LossPeers = compactAddrs(r.LossPeers)
	r.QueuePeers = compactAddrs(r.QueuePeers)
	return r, nil
}

func compactAddrs(l []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range l {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

var errUnknownRule = errors.New("not a rule this package writes")

func decode(r *Rules, output bool, es []expr.Any) error {
	var (
		addr    netip.Addr
		loss    = -1
		queue   = -1
		dropped bool
		refused bool
	)
	for _, e := range es {
		switch e := e.(type) {
		case *expr.Cmp:
			switch {
			case e.Op == expr.CmpOpEq && len(e.Data) == 4:
				addr = netip.AddrFrom4([4]byte(e.Data))
			case e.Op == expr.CmpOpLt && len(e.Data) == 4:
				loss = int(binary.BigEndian.Uint32(e.Data))
			}
		case *expr.Verdict:
			dropped = e.Kind == expr.VerdictDrop
		case *expr.Reject:
			refused = e.Type == unix.NFT_REJECT_TCP_RST
		case *expr.Target:
			if e.Name != "NFQUEUE" {
				return fmt.Errorf("%w: target %s", errUnknownRule, e.Name)
			}
			info, ok := e.Info.(*xt.Unknown)
			if !ok || len(*info) < 2 {
				return fmt.Errorf("%w: NFQUEUE without queue info", errUnknownRule)
			}
			queue = int(binary.NativeEndian.Uint16(*info))
		}
	}
	if !addr.IsValid() {
		return fmt.Errorf("%w: matches no address", errUnknownRule)
	}
	switch {
	case refused && output:
		// Read drops it again where a drop rule for the same address
		// follows: then it is the first half of a DropOut.
		r.RefuseOut = append(r.RefuseOut, addr)
	case queue >= 0:
		r.QueuePeers = append(r.QueuePeers, addr)
		r.Queue = uint16(queue)
	case loss >= 0 && dropped:
		r.LossPercent = loss
		r.LossPeers = append(r.LossPeers, addr)
	case dropped && output:
		r.DropOut = append(r.DropOut, addr)
	case dropped:
		r.DropIn = append(r.DropIn, addr)
	default:
		return fmt.Errorf("%w: neither drops, refuses nor queues", errUnknownRule)
	}
	return nil
}

// String renders r for people (the helper's output and error messages).
func (r Rules) String() string {
	if r.Empty() {
		return "no rules"
	}
	var b bytes.Buffer
	sep := ""
	part := func(name string, l []netip.Addr) {
		if len(l) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s%s %s", sep, name, addrList{&l}.String())
		sep = "; "
	}
	part("drop out to", r.DropOut)
	part("drop in from", r.DropIn)
	part("refuse connections to", r.RefuseOut)
	if r.LossPercent > 0 {
		part(fmt.Sprintf("lose %d%% to/from", r.LossPercent), r.LossPeers)
	}
	part(fmt.Sprintf("queue %d to/from", r.Queue), r.QueuePeers)
	return b.String()
}
