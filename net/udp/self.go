package udp

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Self is one UDP socket bound to 127.0.0.1 on an ephemeral port that
// sends to itself: Send puts one datagram of its fixed payload on its own
// receive queue, which a Receiver then reads from FD. It is the recv drift
// control's socket (probe's xcontrols.go): a recv path whose queue its
// reader fills itself, on its own CPU, apart from any workload.
//
// Like a Group's sockets it is a raw, non-blocking fd (SOCK_NONBLOCK |
// SOCK_CLOEXEC, never registered with the netpoller) with nothing else
// set, and it is not connected: a datagram it sends goes through the same
// receive lookup as one a Sender sends to a Group's socket.
type Self struct {
	fd     int
	sa     unix.RawSockaddrInet4 // its own address
	buf    []byte
	closed bool
}

// OpenSelf opens the socket with a size-byte payload (1–65507; zeros).
// Call it on a thread inside the namespace whose loopback it should use.
func OpenSelf(size int) (s *Self, err error) {
	if size < 1 || size > 65507 {
		return nil, fmt.Errorf("udp self socket: size %d outside 1–65507 bytes", size)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	s = &Self{fd: fd, buf: make([]byte, size)}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return s, fmt.Errorf("udp self socket: bind 127.0.0.1:0: %w", os.NewSyscallError("bind", err))
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return s, os.NewSyscallError("getsockname", err)
	}
	in4, ok := got.(*unix.SockaddrInet4)
	if !ok {
		return s, fmt.Errorf("udp self socket: getsockname gave %T", got)
	}
	s.sa.Family = unix.AF_INET
	s.sa.Addr = in4.Addr
	p := (*[2]byte)(unsafe.Pointer(&s.sa.Port))
	p[0], p[1] = byte(in4.Port>>8), byte(in4.Port) // network byte order
	return s, nil
}

// FD is the socket to receive from. Callers must not close it.
//
//go:nosplit
func (s *Self) FD() int { return s.fd }

// Send wraps sendto(2): one datagram of the payload to the socket's own
// address, MSG_DONTWAIT. No allocation, no lock, no netpoller. On
// loopback the datagram is on the socket's queue when it returns (the
// receive softirq runs on this CPU as the send leaves its bottom-half
// section), unless the kernel deferred it to ksoftirqd.
//
//go:nosplit
func (s *Self) Send() unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&s.buf[0])), uintptr(len(s.buf)),
		unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&s.sa)), unix.SizeofSockaddrInet4)
	return e
}

// Close closes the socket. Idempotent; nil-safe.
func (s *Self) Close() error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	if err := unix.Close(s.fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}
