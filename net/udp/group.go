package udp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Config describes a socket group. The zero Addr means 127.0.0.1.
type Config struct {
	// Count is the number of sockets, ≥ 1.
	Count int
	// Addr is the bind address; only loopback (127.0.0.0/8, ::1) is accepted.
	Addr netip.Addr
	// Port is the first port; socket i binds Port+i. 0 = ephemeral ports.
	Port int
	// RcvBuf is SO_RCVBUF in bytes (the kernel doubles it and caps it at
	// net.core.rmem_max unless root uses SO_RCVBUFFORCE); 0 = kernel default.
	RcvBuf int
	// Order is the order the sockets are created and bound in, a
	// permutation of 0…Count−1 (nil: in index order); socket i is still
	// index i and binds Port+i. A run's processes each draw one (issue 24)
	// so that the kernel's allocations (fds, socket and slab objects) do
	// not fall in the same layout every time.
	Order []int
	// Namespaced says the caller runs on a thread inside rtload's own
	// network namespace: addresses in 198.18.0.0/15 (the tap devices') are
	// then accepted besides loopback.
	Namespaced bool
}

// benchNet is 198.18.0.0/15 (RFC 2544), the only non-loopback range rtload
// binds to, and only inside its own namespace.
var benchNet = netip.MustParsePrefix("198.18.0.0/15")

// ErrNotLoopback is returned for a bind address outside 127.0.0.0/8 and ::1.
var ErrNotLoopback = errors.New("address is not loopback (allowed: 127.0.0.0/8, ::1)")

// Group is Count bound, non-blocking UDP sockets. Index i is socket i.
type Group struct {
	fds    []int
	addrs  []netip.AddrPort
	rcvbuf int
	closed bool
}

// Open creates and binds the sockets. On error every socket already
// created is closed. Sockets are SOCK_NONBLOCK|SOCK_CLOEXEC raw fds with
// only SO_RCVBUF(FORCE) set, as bench/drain450.c sets them. Drops are read
// with getsockopt SO_MEMINFO (sk_drops, which the kernel keeps whatever
// the options); SO_RXQ_OVFL is not set: it would report the same counter
// and costs every data call a pass through __sock_recv_cmsgs and each
// enqueue a store of the drop count in the skb (bench/GAPS.md).
func Open(cfg Config) (g *Group, err error) {
	addr := cfg.Addr
	if !addr.IsValid() {
		addr = netip.MustParseAddr("127.0.0.1")
	}
	if !addr.IsLoopback() && !(cfg.Namespaced && benchNet.Contains(addr)) {
		return nil, fmt.Errorf("udp group %s: %w", addr, ErrNotLoopback)
	}
	if cfg.Count < 1 {
		return nil, fmt.Errorf("udp group: count %d < 1", cfg.Count)
	}
	if cfg.Port < 0 || cfg.Port > 65535 || (cfg.Port > 0 && cfg.Port+cfg.Count-1 > 65535) {
		return nil, fmt.Errorf("udp group: ports %d..%d outside 1–65535", cfg.Port, cfg.Port+cfg.Count-1)
	}
	if cfg.Order != nil && !isPermutation(cfg.Order, cfg.Count) {
		return nil, fmt.Errorf("udp group: order is not a permutation of 0..%d", cfg.Count-1)
	}
	g = &Group{fds: make([]int, cfg.Count), addrs: make([]netip.AddrPort, cfg.Count)}
	for i := range g.fds {
		g.fds[i] = -1
	}
	defer func() {
		if err != nil {
			g.Close()
			g = nil
		}
	}()
	domain := unix.AF_INET
	if addr.Is6() {
		domain = unix.AF_INET6
	}
	for j := 0; j < cfg.Count; j++ {
		i := j
		if cfg.Order != nil {
			i = cfg.Order[j]
		}
		fd, err := unix.Socket(domain, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
		if err != nil {
			if errors.Is(err, unix.EMFILE) {
				return g, fmt.Errorf("udp socket %d of %d: %w (raise the open files limit: ulimit -n)", i, cfg.Count, os.NewSyscallError("socket", err))
			}
			return g, os.NewSyscallError("socket", err)
		}
		g.fds[i] = fd
		if cfg.RcvBuf > 0 {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.RcvBuf); err != nil {
				if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.RcvBuf); err != nil {
					return g, os.NewSyscallError("setsockopt SO_RCVBUF", err)
				}
			}
		}
		port := 0
		if cfg.Port > 0 {
			port = cfg.Port + i
		}
		var sa unix.Sockaddr
		if addr.Is6() {
			sa = &unix.SockaddrInet6{Port: port, Addr: addr.As16()}
		} else {
			sa = &unix.SockaddrInet4{Port: port, Addr: addr.As4()}
		}
		if err := unix.Bind(fd, sa); err != nil {
			return g, fmt.Errorf("udp socket %d: bind %s: %w", i, netip.AddrPortFrom(addr, uint16(port)), os.NewSyscallError("bind", err))
		}
		got, err := unix.Getsockname(fd)
		if err != nil {
			return g, os.NewSyscallError("getsockname", err)
		}
		switch s := got.(type) {
		case *unix.SockaddrInet4:
			g.addrs[i] = netip.AddrPortFrom(netip.AddrFrom4(s.Addr), uint16(s.Port))
		case *unix.SockaddrInet6:
			g.addrs[i] = netip.AddrPortFrom(netip.AddrFrom16(s.Addr), uint16(s.Port))
		}
	}
	if g.rcvbuf, err = unix.GetsockoptInt(g.fds[0], unix.SOL_SOCKET, unix.SO_RCVBUF); err != nil {
		return g, os.NewSyscallError("getsockopt SO_RCVBUF", err)
	}
	return g, nil
}

// FDs returns the receive sockets, index = socket number. Callers must not close them.
func (g *Group) FDs() []int { return g.fds }

// Addrs returns the bound address of each socket.
func (g *Group) Addrs() []netip.AddrPort { return g.addrs }

// RcvBuf is the SO_RCVBUF the kernel reports (bytes, after its doubling).
func (g *Group) RcvBuf() int { return g.rcvbuf }

// Drops sums the kernel's per-socket drop counter (sk_drops, read with
// getsockopt SO_MEMINFO) over the group.
func (g *Group) Drops() (uint64, error) {
	var total uint64
	for _, fd := range g.fds {
		n, err := SocketDrops(fd)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// SocketDrops returns sk_drops of one socket (SO_MEMINFO, SK_MEMINFO_DROPS).
func SocketDrops(fd int) (uint64, error) {
	var mem [unix.SK_MEMINFO_VARS]uint32
	l := uint32(unsafe.Sizeof(mem))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return 0, os.NewSyscallError("getsockopt SO_MEMINFO", e)
	}
	return uint64(mem[unix.SK_MEMINFO_DROPS]), nil
}

// Close closes every socket. Idempotent.
func (g *Group) Close() error {
	if g == nil || g.closed {
		return nil
	}
	g.closed = true
	var first error
	for _, fd := range g.fds {
		if fd < 0 {
			continue // never created (Open failed first)
		}
		if err := unix.Close(fd); err != nil && first == nil {
			first = os.NewSyscallError("close", err)
		}
	}
	return first
}

// HeaderSize is the bytes every message starts with.
const HeaderSize = 16

// Header is the start of every payload: little-endian sequence number
// (per destination socket, from 0) and send time (CLOCK_MONOTONIC ns).
type Header struct {
	Seq    uint64
	SentNs int64
}

// PutHeader writes h into b[:16].
//
//go:nosplit
func PutHeader(b []byte, h Header) {
	binary.LittleEndian.PutUint64(b[0:8], h.Seq)
	binary.LittleEndian.PutUint64(b[8:16], uint64(h.SentNs))
}

// ReadHeader reads the header of b; ok is false when b is shorter than HeaderSize.
//
//go:nosplit
func ReadHeader(b []byte) (h Header, ok bool) {
	if len(b) < HeaderSize {
		return h, false
	}
	return Header{Seq: binary.LittleEndian.Uint64(b[0:8]), SentNs: int64(binary.LittleEndian.Uint64(b[8:16]))}, true
}

// Merge makes one group of the sockets of several (e.g. one per tap
// device): fds and addrs give the merged order. The merged group owns every
// socket: closing it closes them all, and the parts must not be closed.
func Merge(parts []*Group, fds []int, addrs []netip.AddrPort) *Group {
	g := &Group{fds: fds, addrs: addrs}
	if len(parts) > 0 && parts[0] != nil {
		g.rcvbuf = parts[0].rcvbuf
	}
	for _, p := range parts {
		if p != nil {
			p.closed = true // ownership moved to g
		}
	}
	return g
}

// isPermutation reports whether order holds each of 0…n−1 once.
func isPermutation(order []int, n int) bool {
	if len(order) != n {
		return false
	}
	seen := make([]bool, n)
	for _, i := range order {
		if i < 0 || i >= n || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}
