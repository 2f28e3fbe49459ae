package engine

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/rtload/rtload/net/netns"
	"github.com/rtload/rtload/net/tap"
	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/probe"
	"github.com/rtload/rtload/scenario"
)

// Endpoint is the receive sockets of one endpoint group, index = socket
// number. Close is idempotent and removes every kernel object the group
// created.
type Endpoint interface {
	FDs() []int
	Close() error
}

// Injector delivers one message to each socket dst[i] of a group: loopback
// sendmmsg or tap frame writes. Each payload carries a per-socket sequence
// number and the send time nowNs.
type Injector interface {
	Send(dst []int, nowNs int64) (sent int, err error)
	Close() error
}

var (
	_ Injector = (*udp.Sender)(nil)
	_ Injector = (*tapInjector)(nil)
	_ Endpoint = (*endpoint)(nil)
)

// endpoint is a udp or tap group.
type endpoint struct {
	spec    scenario.Endpoint
	group   *udp.Group
	devices []*tap.Device // tap groups only; socket i is behind devices[i % len]
	flows   [][]tap.Flow  // per device: the flow of each socket behind it
	index   [][]int       // per device: global socket index of each flow
	// ping is the cache-line ping's shared lines (probe.PingLines) its
	// sender writes and its reader times; nil unless xControls asks.
	ping *probe.PingLines
}

func (e *endpoint) FDs() []int { return e.group.FDs() }

func (e *endpoint) Close() error {
	err := e.group.Close()
	for _, d := range e.devices {
		if derr := d.Close(); derr != nil && err == nil {
			err = derr
		}
	}
	return err
}

// frameSrcMAC is the locally administered source MAC of injected frames.
var frameSrcMAC = net.HardwareAddr{0x02, 0x72, 0x74, 0x6c, 0x00, 0x01}

// tapAddr returns device k's address (198.18.k.1/24) and the frames'
// source address (198.18.k.2), k < 256.
func tapAddr(k int) (netip.Prefix, netip.Addr) {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(k), 1}), 24), netip.AddrFrom4([4]byte{198, 18, byte(k), 2})
}

// openEndpoint builds one group. It must run on a thread inside ns when ns
// is not nil. firstDevice numbers this group's first tap device; order is
// a UDP group's socket creation order (nil: index order; Setup).
func openEndpoint(e scenario.Endpoint, ns *netns.NS, firstDevice int, order []int) (ep *endpoint, err error) {
	ep = &endpoint{spec: e}
	if xControls("ping") {
		ep.ping = probe.NewPingLines()
	}
	defer func() {
		if err != nil {
			ep.Close()
			ep = nil
		}
	}()
	if e.Kind != scenario.EndpointTap {
		addr, perr := netip.ParseAddr(e.Address)
		if perr != nil {
			return ep, fmt.Errorf("endpoint %s: address %q: %w", e.Name, e.Address, perr)
		}
		g, err := udp.Open(udp.Config{Count: e.Count, Addr: addr, Port: e.Port, RcvBuf: int(e.RcvBuf), Namespaced: ns != nil, Order: order})
		if err != nil {
			return ep, fmt.Errorf("endpoint %s: %w", e.Name, err)
		}
		ep.group = g
		return ep, nil
	}
	if ns == nil {
		return ep, fmt.Errorf("endpoint %s: tap devices need network.namespace: private", e.Name)
	}
	ep.group = &udp.Group{}
	var fds []int
	var addrs []netip.AddrPort
	for d := 0; d < e.Devices; d++ {
		k := firstDevice + d
		prefix, _ := tapAddr(k)
		dev, err := tap.Create(tap.Config{Name: fmt.Sprintf("rtlt%d", k), MTU: e.MTU, Queues: e.Queues, VnetHdr: e.VnetHdr, Addr: prefix})
		if err != nil {
			return ep, fmt.Errorf("endpoint %s: %w", e.Name, err)
		}
		ep.devices = append(ep.devices, dev)
	}
	// Socket i is bound on device i % D's address.
	groups := make([]*udp.Group, e.Devices)
	defer func() {
		for _, g := range groups {
			if g != nil && err != nil {
				g.Close()
			}
		}
	}()
	per := make([]int, e.Devices)
	for i := 0; i < e.Count; i++ {
		per[i%e.Devices]++
	}
	for d := range groups {
		prefix, _ := tapAddr(firstDevice + d)
		port := 0
		if e.Port > 0 {
			port = e.Port // each device has its own address: ports may repeat across devices
		}
		g, err := udp.Open(udp.Config{Count: per[d], Addr: prefix.Addr(), Port: port, RcvBuf: int(e.RcvBuf), Namespaced: true})
		if err != nil {
			return ep, fmt.Errorf("endpoint %s device %d: %w", e.Name, d, err)
		}
		groups[d] = g
	}
	ep.flows = make([][]tap.Flow, e.Devices)
	ep.index = make([][]int, e.Devices)
	for i := 0; i < e.Count; i++ {
		d, j := i%e.Devices, i/e.Devices
		g := groups[d]
		fds = append(fds, g.FDs()[j])
		dst := g.Addrs()[j]
		addrs = append(addrs, dst)
		_, src := tapAddr(firstDevice + d)
		ep.flows[d] = append(ep.flows[d], tap.Flow{SrcMAC: frameSrcMAC, DstMAC: ep.devices[d].MAC(),
			Src: netip.AddrPortFrom(src, uint16(40000+j%20000)), Dst: dst})
		ep.index[d] = append(ep.index[d], i)
	}
	ep.group = udp.Merge(groups, fds, addrs)
	return ep, nil
}

// newInjector returns the sender for traffic into ep: sendmmsg on loopback
// for udp groups, frame writes into the devices for tap groups. Call it on
// a thread inside the namespace (the udp sender's socket is created there).
func newInjector(ep *endpoint, size int) (Injector, error) {
	if len(ep.devices) == 0 {
		return udp.NewSender(ep.group, size, 64)
	}
	ti := &tapInjector{local: make([]int, ep.spec.Count), dev: make([]int, ep.spec.Count), scratch: make([][]int, len(ep.devices))}
	for d, dev := range ep.devices {
		inj, err := tap.NewInjector(dev.FDs(), ep.flows[d], size, ep.spec.VnetHdr)
		if err != nil {
			return nil, err
		}
		ti.inj = append(ti.inj, inj)
		for j, g := range ep.index[d] {
			ti.local[g], ti.dev[g] = j, d
		}
		ti.scratch[d] = make([]int, 0, 64)
	}
	return ti, nil
}

// tapInjector splits a batch of destination sockets across the devices
// they sit behind.
type tapInjector struct {
	inj     []*tap.Injector
	local   []int // socket → index within its device's flows
	dev     []int // socket → device
	scratch [][]int
}

func (t *tapInjector) Send(dst []int, nowNs int64) (int, error) {
	for d := range t.scratch {
		t.scratch[d] = t.scratch[d][:0]
	}
	for _, g := range dst {
		d := t.dev[g]
		t.scratch[d] = append(t.scratch[d], t.local[g])
	}
	total := 0
	for d, l := range t.scratch {
		if len(l) == 0 {
			continue
		}
		n, err := t.inj[d].Send(l, nowNs)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (t *tapInjector) Close() error { return nil }
