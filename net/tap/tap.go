package tap

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
)

// Config describes one tap device. Create must be called on an OS thread
// that is inside the target network namespace (the caller uses a locked
// thread that entered rtload's private namespace): the device is created
// in the namespace of the thread that opens /dev/net/tun.
type Config struct {
	// Name is the interface name: at most 15 bytes, starting with "rtl",
	// without '/', ':', '%' or white space.
	Name string
	// MTU in bytes, 68–65521 (tun's maximum, 65535 minus the 14-byte
	// Ethernet header); 0 = 1500.
	MTU int
	// Queues is the number of queues, 1–256; 0 = 1. More than one sets
	// IFF_MULTI_QUEUE, with one fd per queue.
	Queues int
	// VnetHdr sets IFF_VNET_HDR: every frame written starts with a 10-byte
	// struct virtio_net_hdr (zeroed by Builder: no offloads, checksums in
	// the frame are verified by the kernel).
	VnetHdr bool
	// Addr is put on the device. It must lie in 198.18.0.0/15 (RFC 2544
	// benchmarking), e.g. 198.18.3.1/24, or for IPv6 in 2001:2::/48
	// (RFC 5180), e.g. 2001:2::1/64. Required.
	Addr netip.Prefix
}

// ErrAddress is returned (wrapped) for a device or flow address outside the
// benchmarking ranges.
var ErrAddress = errors.New("address outside 198.18.0.0/15 (allowed: 198.18.0.0/15, or 2001:2::/48 for IPv6, inside rtload's namespace)")

// ErrNoTun is returned (wrapped) when /dev/net/tun cannot be opened because
// it or the tun driver is missing.
var ErrNoTun = errors.New("/dev/net/tun missing (load the tun module: modprobe tun)")

// ErrHostNamespace is returned when Create runs on a thread that is still in
// the process's own network namespace.
var ErrHostNamespace = errors.New("calling thread is in the process's own network namespace (Create must run on a locked thread inside rtload's private namespace)")

var (
	bench4 = netip.MustParsePrefix("198.18.0.0/15")
	bench6 = netip.MustParsePrefix("2001:2::/48")
)

const (
	minMTU    = 68
	maxMTU    = 65521
	maxQueues = 256 // MAX_TAP_QUEUES in drivers/net/tun.c
	// VnetHdrLen is sizeof(struct virtio_net_hdr), the kernel's default
	// TUNSETVNETHDRSZ.
	VnetHdrLen = 10
)

// inRange reports whether a lies in one of the benchmarking ranges.
func inRange(a netip.Addr) bool {
	return (a.Is4() && bench4.Contains(a)) || (a.Is6() && !a.Is4In6() && bench6.Contains(a))
}

// validate checks cfg without changing it.
func validate(cfg Config) error {
	name := cfg.Name
	if !strings.HasPrefix(name, "rtl") {
		return fmt.Errorf("tap %s: name must start with \"rtl\" (rtload removes only its own devices)", name)
	}
	if len(name) > unix.IFNAMSIZ-1 {
		return fmt.Errorf("tap %s: name is %d bytes (allowed: at most %d)", name, len(name), unix.IFNAMSIZ-1)
	}
	if strings.ContainsAny(name, "/:% \t\n\r\v\f") {
		return fmt.Errorf("tap %s: name contains '/', ':', '%%' or white space", name)
	}
	if cfg.MTU != 0 && (cfg.MTU < minMTU || cfg.MTU > maxMTU) {
		return fmt.Errorf("tap %s: mtu %d out of range (allowed: %d–%d)", name, cfg.MTU, minMTU, maxMTU)
	}
	if cfg.Queues < 0 || cfg.Queues > maxQueues {
		return fmt.Errorf("tap %s: %d queues out of range (allowed: 1–%d; 0 = 1)", name, cfg.Queues, maxQueues)
	}
	if !cfg.Addr.IsValid() {
		return fmt.Errorf("tap %s: no address (Addr is required, e.g. 198.18.3.1/24): %w", name, ErrAddress)
	}
	p := cfg.Addr.Masked()
	if !inRange(cfg.Addr.Addr()) || (cfg.Addr.Addr().Is4() && p.Bits() < bench4.Bits()) || (cfg.Addr.Addr().Is6() && p.Bits() < bench6.Bits()) {
		return fmt.Errorf("tap %s: %s: %w", name, cfg.Addr, ErrAddress)
	}
	return nil
}

// Device is a tap device created by Create, with its queue fds.
type Device struct {
	name   string
	index  int
	mac    net.HardwareAddr
	addr   netip.Prefix
	mtu    int
	vnet   bool
	files  []*os.File // netlink's Tuntap.Fds, kept referenced so no finalizer closes them
	fds    []int
	h      *netlink.Handle // NETLINK_ROUTE socket bound to the device's namespace
	closed bool
}

// Create makes the device through netlink (TAP, IFF_NO_PI [|IFF_VNET_HDR]
// [|IFF_MULTI_QUEUE], non-persistent: it vanishes when its fds close), in
// the calling thread's network namespace, sets its MTU, adds Addr (IPv6
// without DAD), sets rp_filter to 0 on the device and on conf/all
// (/proc/sys/net of the calling thread's namespace), and sets it up.
//
// Errors: invalid Config (name, MTU, queues, ErrAddress) before anything is
// created; ErrHostNamespace; ErrNoTun; *rt.PrivilegeError (matches
// rt.ErrNoPrivilege) without CAP_NET_ADMIN; "name in use" when a link of
// that name exists. On error nothing is left behind: fds closed, link
// deleted, netlink socket closed.
func Create(cfg Config) (d *Device, err error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	name := cfg.Name
	if err := checkPrivateNS(); err != nil {
		return nil, fmt.Errorf("tap %s: %w", name, err)
	}
	mtu, queues := cfg.MTU, cfg.Queues
	if mtu == 0 {
		mtu = 1500
	}
	if queues == 0 {
		queues = 1
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("tap %s: netlink socket: %w", name, err)
	}
	d = &Device{name: name, addr: cfg.Addr, vnet: cfg.VnetHdr, h: h}
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()
	if _, err := h.LinkByName(name); err == nil {
		return d, fmt.Errorf("tap %s: name in use (delete it, or pick another name)", name)
	}
	flags := netlink.TUNTAP_NO_PI
	if cfg.VnetHdr {
		flags |= netlink.TUNTAP_VNET_HDR
	}
	if queues > 1 {
		flags |= netlink.TUNTAP_MULTI_QUEUE
	}
	tt := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: name}, Mode: netlink.TUNTAP_MODE_TAP,
		Flags: flags, Queues: queues, NonPersist: true}
	if err := h.LinkAdd(tt); err != nil {
		d.files = tt.Fds // nil unless netlink failed after creating them
		return d, tunError(name, err)
	}
	d.files = tt.Fds
	if len(d.files) != queues {
		return d, fmt.Errorf("tap %s: netlink returned %d fds for %d queues", name, len(d.files), queues)
	}
	for i, f := range d.files {
		fd, err := rawFD(f)
		if err != nil {
			return d, fmt.Errorf("tap %s: queue %d: %w", name, i, err)
		}
		d.fds = append(d.fds, fd)
	}
	link, err := h.LinkByName(name)
	if err != nil {
		return d, fmt.Errorf("tap %s: after create: %w", name, err)
	}
	d.index = link.Attrs().Index
	if err := h.LinkSetMTU(link, mtu); err != nil {
		return d, fmt.Errorf("tap %s: set mtu %d: %w", name, mtu, err)
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(cfg.Addr.Addr().AsSlice()),
		Mask: net.CIDRMask(cfg.Addr.Bits(), cfg.Addr.Addr().BitLen())}}
	if cfg.Addr.Addr().Is6() {
		// A tentative address (DAD pending) drops the frames sent to it.
		a.Flags = unix.IFA_F_NODAD
	}
	if err := h.AddrAdd(link, a); err != nil {
		return d, fmt.Errorf("tap %s: add address %s: %w", name, cfg.Addr, err)
	}
	for _, p := range []string{"/proc/sys/net/ipv4/conf/" + name + "/rp_filter", "/proc/sys/net/ipv4/conf/all/rp_filter"} {
		if err := os.WriteFile(p, []byte("0\n"), 0); err != nil {
			return d, fmt.Errorf("tap %s: %w", name, err)
		}
	}
	if err := h.LinkSetUp(link); err != nil {
		return d, fmt.Errorf("tap %s: set up: %w", name, err)
	}
	if cfg.Addr.Addr().Is6() {
		if err := waitLocal(h, link, cfg.Addr.Addr(), addrWait); err != nil {
			return d, fmt.Errorf("tap %s: %w", name, err)
		}
	}
	if link, err = h.LinkByIndex(d.index); err != nil {
		return d, fmt.Errorf("tap %s: after set up: %w", name, err)
	}
	d.mac = link.Attrs().HardwareAddr
	d.mtu = link.Attrs().MTU
	if d.mtu != mtu {
		return d, fmt.Errorf("tap %s: mtu reads back %d, set %d", name, d.mtu, mtu)
	}
	return d, nil
}

// addrWait bounds how long Create waits for an IPv6 address to be
// delivered to (waitLocal) once the device is up.
const addrWait = 5 * time.Second

// waitLocal waits until IPv6 delivers to addr on link, at most limit:
// the address is no longer tentative (IFA_F_TENTATIVE clear) and its
// local route is in place (RTM_GETROUTE of addr answers RTN_LOCAL). Even
// with IFA_F_NODAD the kernel does both for an address added while the
// device was down from its addrconf workqueue after NETDEV_UP
// (addrconf_dad_begin clears the flag, then addrconf_dad_completed →
// ipv6_ifa_notify inserts the route), not within the RTM_NEWLINK that
// set the device up. Until the route is there the device counts the
// frames (RxPackets) and IPv6 drops every one as Ip6InAddrErrors (no
// local route: measured here under load, 2250 of 2250 frames of
// TestDeliver's IPv6 case, /proc/net/dev_snmp6). On a quiet machine the
// first check passes; under load the kworker can run much later, so this
// polls, backing off from 100 µs to 20 ms.
func waitLocal(h *netlink.Handle, link netlink.Link, addr netip.Addr, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	pause := 100 * time.Microsecond
	for {
		ready, err := deliversTo(h, link, addr)
		if ready || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("address %s: no local route %v after the device went up (the kernel's addrconf workqueue did not run: machine overloaded?)", addr, limit)
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// deliversTo reports whether addr on link is usable: present, not
// tentative, and with a local route. DAD failure is an error.
func deliversTo(h *netlink.Handle, link netlink.Link, addr netip.Addr) (bool, error) {
	addrs, err := h.AddrList(link, netlink.FAMILY_V6)
	if err != nil {
		return false, fmt.Errorf("read back address %s: %w", addr, err)
	}
	found := false
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || ip.Unmap() != addr {
			continue
		}
		found = true
		switch {
		case a.Flags&unix.IFA_F_DADFAILED != 0:
			return false, fmt.Errorf("address %s: duplicate address detection failed (IFA_F_DADFAILED)", addr)
		case a.Flags&unix.IFA_F_TENTATIVE != 0:
			return false, nil
		}
	}
	if !found {
		return false, fmt.Errorf("address %s: not on the device after it was added", addr)
	}
	routes, err := h.RouteGet(net.IP(addr.AsSlice()))
	if err != nil {
		return false, nil // no route yet (ENETUNREACH and the like)
	}
	for _, r := range routes {
		if r.Type == unix.RTN_LOCAL {
			return true, nil
		}
	}
	return false, nil
}

// processNS is the network namespace of the thread that initialised the
// package (the main thread during package initialisation, before any
// goroutine could move a thread), read as "net:[inode]". /proc/self/ns/net
// would not do: it is the thread group leader's, and a locked goroutine
// that entered the private namespace may be running on the leader.
var processNS, processNSErr = os.Readlink("/proc/thread-self/ns/net")

// checkPrivateNS refuses to run on a thread in the process's original
// network namespace.
func checkPrivateNS() error {
	if processNSErr != nil {
		return fmt.Errorf("network namespace check: %w", processNSErr)
	}
	thread, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		return fmt.Errorf("network namespace check: %w", err)
	}
	if thread == processNS {
		return ErrHostNamespace
	}
	return nil
}

// tunError maps a netlink LinkAdd error. netlink returns open(2) errors
// as bare errnos but formats TUNSETIFF errors with %v ("Tuntap IOCTL
// TUNSETIFF failed [0], errno operation not permitted"), so those are
// recognised by their text.
func tunError(name string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		for _, e := range []unix.Errno{unix.EPERM, unix.EBUSY, unix.EEXIST, unix.EINVAL, unix.EACCES} {
			if strings.HasSuffix(err.Error(), "errno "+e.Error()) {
				errno = e
				break
			}
		}
	}
	ioctl := strings.Contains(err.Error(), "TUNSETIFF")
	switch {
	case !ioctl && (errno == unix.ENOENT || errno == unix.ENODEV || errno == unix.ENXIO):
		return fmt.Errorf("tap %s: %w: %w", name, ErrNoTun, os.NewSyscallError("open /dev/net/tun", errno))
	case !ioctl && (errno == unix.EACCES || errno == unix.EPERM):
		return &rt.PrivilegeError{Op: "open /dev/net/tun", Cap: "CAP_NET_ADMIN and read-write access to /dev/net/tun", Err: errno}
	case errno == unix.EPERM:
		return &rt.PrivilegeError{Op: "TUNSETIFF " + name, Cap: "CAP_NET_ADMIN", Err: errno}
	case errno == unix.EBUSY || errno == unix.EEXIST || errno == unix.EINVAL:
		return fmt.Errorf("tap %s: name in use (delete it, or pick another name): %w", name, os.NewSyscallError("ioctl TUNSETIFF", errno))
	}
	return fmt.Errorf("tap %s: create: %w", name, err)
}

// rawFD returns f's descriptor through SyscallConn().Control, leaving it
// non-blocking (File.Fd would switch it to blocking mode).
func rawFD(f *os.File) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	if err := sc.Control(func(p uintptr) { fd = int(p) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// Name is the interface name.
func (d *Device) Name() string { return d.name }

// Index is the interface index in the device's namespace.
func (d *Device) Index() int { return d.index }

// MAC is the device's (kernel-chosen, random) Ethernet address: frames
// written into the tap must carry it as destination to be PACKET_HOST.
func (d *Device) MAC() net.HardwareAddr { return d.mac }

// Addr is the address on the device.
func (d *Device) Addr() netip.Prefix { return d.addr }

// MTU is the MTU in bytes, read back from the kernel.
func (d *Device) MTU() int { return d.mtu }

// VnetHdr reports whether frames written must start with a VnetHdrLen-byte
// virtio_net_hdr.
func (d *Device) VnetHdr() bool { return d.vnet }

// FDs returns one raw, non-blocking fd per queue (index = queue). The fds
// belong to the Device: callers must not close them, and must stop using
// them before Close.
func (d *Device) FDs() []int { return d.fds }

// Stats are device counters (struct rtnl_link_stats64). A frame written
// into the tap fd is *received* by the device from the kernel's point of
// view: injected frames count in Rx*, frames the kernel sends out of the
// device (ARP, ICMP, IPv6 ND) in Tx*, and Tx frames nobody reads from the
// fd end up in TxDropped once the queue is full.
type Stats struct{ RxPackets, RxDropped, RxErrors, TxPackets, TxDropped uint64 }

// Stats reads the counters through netlink (RTM_GETLINK). h may be nil: the
// Device then uses its own NETLINK_ROUTE socket, opened in the device's
// namespace by Create, so Stats works from any thread. A non-nil h must be
// bound to the device's namespace.
func (d *Device) Stats(h *netlink.Handle) (Stats, error) {
	if h == nil {
		h = d.h
	}
	if d.closed || h == nil {
		return Stats{}, fmt.Errorf("tap %s: stats: device closed", d.name)
	}
	link, err := h.LinkByIndex(d.index)
	if err != nil {
		return Stats{}, fmt.Errorf("tap %s: stats: %w", d.name, err)
	}
	s := link.Attrs().Statistics
	if s == nil {
		return Stats{}, fmt.Errorf("tap %s: stats: kernel sent no IFLA_STATS64", d.name)
	}
	return Stats{RxPackets: s.RxPackets, RxDropped: s.RxDropped, RxErrors: s.RxErrors,
		TxPackets: s.TxPackets, TxDropped: s.TxDropped}, nil
}

// Close closes the queue fds (the non-persistent link vanishes with the
// last one), deletes the link if it is still present, and closes the
// netlink socket. Idempotent; safe on a partly created Device.
func (d *Device) Close() error {
	if d == nil || d.closed {
		return nil
	}
	d.closed = true
	var first error
	for _, f := range d.files {
		if err := f.Close(); err != nil && first == nil {
			first = fmt.Errorf("tap %s: %w", d.name, err)
		}
	}
	d.files, d.fds = nil, nil
	if d.h != nil {
		// Only a link this Device created (index known) is deleted: after a
		// "name in use" error the link of that name belongs to someone else.
		if link, err := d.h.LinkByIndex(d.index); d.index != 0 && err == nil && link.Attrs().Name == d.name {
			if err := d.h.LinkDel(link); err != nil && first == nil {
				first = fmt.Errorf("tap %s: delete link: %w", d.name, err)
			}
		}
		d.h.Close()
		d.h = nil
	}
	return first
}
