package udp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"unsafe"

	"github.com/mdlayher/socket"
	"golang.org/x/sys/unix"
)

// Sender sends sequence-numbered, timestamped messages to the sockets of a
// Group with sendmmsg(2), in batches of up to Batch. Its own socket is a
// github.com/mdlayher/socket Conn: when the send queue is full it waits in
// the netpoller instead of spinning. Not safe for concurrent use.
type Sender struct {
	conn  *socket.Conn
	dst   []unix.RawSockaddrInet6 // large enough for either family
	dlen  uint32
	seq   []uint64
	size  int
	bufs  []byte
	iovs  []unix.Iovec
	hdrs  []mmsghdr
	todo  int // messages in hdrs not yet sent
	done  int
	write func(fd int) error
	fd    int // the socket's fd, for the direct (allocation-free) path
	sent  uint64
}

// NewSender opens a sending socket on the group's address family, bound to
// the group's loopback address, for size-byte payloads (≥ HeaderSize),
// batch messages per sendmmsg call.
func NewSender(g *Group, size, batch int) (s *Sender, err error) {
	if size < HeaderSize || size > 65507 {
		return nil, fmt.Errorf("udp sender: size %d outside %d–65507 bytes", size, HeaderSize)
	}
	if batch < 1 {
		batch = 64
	}
	addrs := g.Addrs()
	if len(addrs) == 0 {
		return nil, errors.New("udp sender: empty group")
	}
	domain := unix.AF_INET
	if addrs[0].Addr().Is6() {
		domain = unix.AF_INET6
	}
	conn, err := socket.Socket(domain, unix.SOCK_DGRAM, unix.IPPROTO_UDP, "rtload-udp-sender", nil)
	if err != nil {
		return nil, fmt.Errorf("udp sender: %w", err)
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	// Bound to the address it sends from (the group's loopback or
	// namespace address), never to the wildcard the kernel would pick on
	// the first send.
	var local unix.Sockaddr
	if domain == unix.AF_INET6 {
		local = &unix.SockaddrInet6{Addr: addrs[0].Addr().As16()}
	} else {
		local = &unix.SockaddrInet4{Addr: addrs[0].Addr().As4()}
	}
	if err := conn.Bind(local); err != nil {
		return nil, fmt.Errorf("udp sender: bind %s: %w", addrs[0].Addr(), err)
	}
	_ = conn.SetWriteBuffer(4 << 20)
	s = &Sender{conn: conn, dst: make([]unix.RawSockaddrInet6, len(addrs)), seq: make([]uint64, len(addrs)),
		size: size, bufs: make([]byte, size*batch), iovs: make([]unix.Iovec, batch), hdrs: make([]mmsghdr, batch)}
	for i, ap := range addrs {
		p := (*[2]byte)(unsafe.Pointer(&s.dst[i].Port))
		p[0], p[1] = byte(ap.Port()>>8), byte(ap.Port())
		if domain == unix.AF_INET6 {
			s.dst[i].Family = unix.AF_INET6
			s.dst[i].Addr = ap.Addr().As16()
			s.dlen = unix.SizeofSockaddrInet6
		} else {
			sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.dst[i]))
			sa4.Family = unix.AF_INET
			sa4.Addr = ap.Addr().As4()
			s.dlen = unix.SizeofSockaddrInet4
		}
	}
	for i := range s.hdrs {
		s.iovs[i].Base = &s.bufs[i*size]
		s.iovs[i].SetLen(size)
		s.hdrs[i].hdr.Iov = &s.iovs[i]
		s.hdrs[i].hdr.SetIovlen(1)
		s.hdrs[i].hdr.Namelen = s.dlen
	}
	s.write = s.writeFunc
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("udp sender: %w", err)
	}
	if err := rc.Control(func(fd uintptr) { s.fd = int(fd) }); err != nil {
		return nil, fmt.Errorf("udp sender: %w", err)
	}
	return s, nil
}

// sendmmsg sends hdrs[done:todo] with raw sendmmsg(2) calls until all are
// sent or a call fails, and returns that call's errno (0: all sent). Raw
// (the socket is non-blocking: it never sleeps in the kernel), so the Go
// runtime's system-call exit never runs: a real-time sender cannot spin
// there behind a SCHED_OTHER runtime thread (see rt.SleepUntilRaw).
//
//go:nosplit
func (s *Sender) sendmmsg(fd int) unix.Errno {
	for s.done < s.todo {
		n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&s.hdrs[s.done])),
			uintptr(s.todo-s.done), 0, 0, 0)
		if e != 0 {
			return e
		}
		s.done += int(n)
	}
	return 0
}

// writeFunc is the WriteFunc body for the netpoller's wait (sendCold): it
// returns EAGAIN, so the netpoller waits, until all are sent.
func (s *Sender) writeFunc(fd int) error {
	if e := s.sendmmsg(fd); e != 0 {
		return e
	}
	return nil
}

// Send delivers one message to each socket index in dst (len(dst) ≤ batch
// per call is most efficient; longer lists are split). nowNs is stamped as
// the send time. It returns how many were sent; a failed batch stops the
// call. The common path (every batch sent at once) allocates nothing and
// has no preemption point, so a real-time sender calling it can never be
// parked by the Go runtime (see engine's sender); a full send queue or a
// failed call goes to sendCold.
//
//go:nosplit
func (s *Sender) Send(dst []int, nowNs int64) (int, error) {
	total := 0
	batch := len(s.hdrs)
	for len(dst) > 0 {
		n := min(len(dst), batch)
		for i, d := range dst[:n] {
			b := s.bufs[i*s.size : (i+1)*s.size]
			PutHeader(b, Header{Seq: s.seq[d], SentNs: nowNs})
			s.seq[d]++
			s.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&s.dst[d]))
			s.hdrs[i].hdr.Namelen = s.dlen
		}
		s.todo, s.done = n, 0
		if e := s.sendmmsg(s.fd); e != 0 {
			err := s.sendCold(dst[:n], e)
			total += s.done
			s.sent += uint64(s.done)
			if err != nil {
				return total, err
			}
		} else {
			total += s.done
			s.sent += uint64(s.done)
		}
		dst = dst[n:]
	}
	return total, nil
}

// sendCold finishes a batch whose sendmmsg failed with e: on EAGAIN (the
// send queue is full) it waits in the netpoller until the rest is sent
// (WriteFunc allocates); on an error, or one while waiting, the messages
// not sent give their sequence numbers back (dst[s.done:]) and the error
// is returned. Off Send's common path: it may be preempted.
//
//go:noinline
func (s *Sender) sendCold(dst []int, e unix.Errno) error {
	var err error = e
	if e == unix.EAGAIN {
		err = s.conn.WriteFunc(context.Background(), "sendmmsg", s.write)
	}
	if err == nil {
		return nil
	}
	for _, d := range dst[s.done:] {
		s.seq[d]--
	}
	return fmt.Errorf("sendmmsg: %w", err)
}

// Sent is the number of messages sent so far; SentTo(i) to socket i.
func (s *Sender) Sent() uint64 { return s.sent }

// SentTo returns the number of messages sent to socket i (its next sequence number).
func (s *Sender) SentTo(i int) uint64 { return s.seq[i] }

// LocalAddr returns the address the sending socket is bound to
// (getsockname(2)): the group's own address with an ephemeral port.
func (s *Sender) LocalAddr() (netip.AddrPort, error) {
	sa, err := s.conn.Getsockname()
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("udp sender: %w", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), nil
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)), nil
	}
	return netip.AddrPort{}, fmt.Errorf("udp sender: getsockname: address family %T", sa)
}

// Close closes the sending socket. Idempotent.
func (s *Sender) Close() error {
	if s == nil || s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}
