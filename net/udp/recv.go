package udp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Receiver makes one non-blocking recv call on fd into buffers preallocated
// at construction. msgs is the number of messages received (0 with errno
// set), bytes their total size; errno EAGAIN means the socket is empty and
// ends a drain. Msg(i) returns the payload of message i of the last call
// (valid until the next Recv). No allocation, no lock, no netpoller.
type Receiver interface {
	Recv(fd int) (msgs, bytes int, errno unix.Errno)
	Msg(i int) []byte
}

// Method is the recv call a Receiver makes. The zero value is no method.
type Method uint8

// The methods: recvfrom(2) with a source address (the seed's reader),
// recvmsg(2), recvmmsg(2) of a batch of messages.
const (
	MethodRecvFrom Method = iota + 1
	MethodRecvMsg
	MethodRecvMMsg
)

// Methods are every method, in order.
var Methods = []Method{MethodRecvFrom, MethodRecvMsg, MethodRecvMMsg}

// String is the call's name: "recvfrom", "recvmsg", "recvmmsg".
func (m Method) String() string {
	switch m {
	case MethodRecvFrom:
		return "recvfrom"
	case MethodRecvMsg:
		return "recvmsg"
	case MethodRecvMMsg:
		return "recvmmsg"
	}
	return fmt.Sprintf("method(%d)", uint8(m))
}

// NewReceiver returns the receiver of method m (MethodRecvMMsg: batch messages
// per call) with bufSize-byte buffers.
func NewReceiver(m Method, bufSize, batch int) (Receiver, error) {
	return NewReceiverAt(m, bufSize, batch, 0)
}

// MaxBufOffset bounds NewReceiverAt's offset.
const MaxBufOffset = 4096

// NewReceiverAt is NewReceiver with the receive buffers starting offset
// bytes (0 ≤ offset < MaxBufOffset) into their allocation: a run's
// processes each draw one (issue 24), so that the buffers' alignment to
// cache lines and pages is not the same in every sample.
func NewReceiverAt(m Method, bufSize, batch, offset int) (Receiver, error) {
	if bufSize < HeaderSize {
		bufSize = 2048
	}
	if offset < 0 || offset >= MaxBufOffset {
		return nil, fmt.Errorf("receive buffer offset %d outside 0–%d", offset, MaxBufOffset-1)
	}
	switch m {
	case MethodRecvFrom:
		return &RecvFrom{buf: offsetBuf(bufSize, offset)}, nil
	case MethodRecvMsg:
		return newRecvMsg(offsetBuf(bufSize, offset)), nil
	case MethodRecvMMsg:
		if batch < 1 || batch > 1024 {
			return nil, fmt.Errorf("recvmmsg batch %d outside 1–1024", batch)
		}
		return newRecvMMsg(offsetBuf(bufSize*batch, offset), bufSize, batch), nil
	}
	return nil, fmt.Errorf("%s unknown (allowed: recvfrom, recvmsg, recvmmsg)", m)
}

// RecvFrom calls recvfrom(2) with MSG_DONTWAIT and a source address buffer,
// as the seed's reader does.
type RecvFrom struct {
	buf   []byte
	sa    unix.RawSockaddrAny
	salen uint32
	n     int
}

var _ Receiver = (*RecvFrom)(nil)

// NewRecvFrom preallocates a bufSize-byte buffer.
func NewRecvFrom(bufSize int) *RecvFrom { return &RecvFrom{buf: make([]byte, bufSize)} }

// Recv wraps recvfrom(2).
//
//go:nosplit
func (r *RecvFrom) Recv(fd int) (int, int, unix.Errno) {
	r.salen = unix.SizeofSockaddrAny
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&r.buf[0])),
		uintptr(len(r.buf)), unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&r.sa)), uintptr(unsafe.Pointer(&r.salen)))
	if e != 0 {
		return 0, 0, e
	}
	r.n = int(n)
	return 1, int(n), 0
}

// Msg returns the last payload.
//
//go:nosplit
func (r *RecvFrom) Msg(int) []byte { return r.buf[:r.n] }

// RecvMsg calls recvmsg(2) with MSG_DONTWAIT, one iovec and a source address,
// no control buffer.
type RecvMsg struct {
	buf []byte
	sa  unix.RawSockaddrAny
	iov unix.Iovec
	hdr unix.Msghdr
	n   int
}

var _ Receiver = (*RecvMsg)(nil)

// NewRecvMsg preallocates the buffer, iovec and msghdr.
func NewRecvMsg(bufSize int) *RecvMsg { return newRecvMsg(make([]byte, bufSize)) }

// offsetBuf is n bytes starting offset bytes into a fresh allocation (its
// capacity capped at n, so nothing writes past it).
func offsetBuf(n, offset int) []byte {
	b := make([]byte, n+offset)
	return b[offset : offset+n : offset+n]
}

func newRecvMsg(buf []byte) *RecvMsg {
	r := &RecvMsg{buf: buf}
	r.iov.Base = &r.buf[0]
	r.iov.SetLen(len(buf))
	r.hdr.Name = (*byte)(unsafe.Pointer(&r.sa))
	r.hdr.Iov = &r.iov
	r.hdr.SetIovlen(1)
	return r
}

// Recv wraps recvmsg(2).
//
//go:nosplit
func (r *RecvMsg) Recv(fd int) (int, int, unix.Errno) {
	r.hdr.Namelen = unix.SizeofSockaddrAny
	r.hdr.Flags = 0
	n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.hdr)), unix.MSG_DONTWAIT)
	if e != 0 {
		return 0, 0, e
	}
	r.n = int(n)
	return 1, int(n), 0
}

// Msg returns the last payload.
//
//go:nosplit
func (r *RecvMsg) Msg(int) []byte { return r.buf[:r.n] }

// mmsghdr is struct mmsghdr of recvmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// RecvMMsg calls recvmmsg(2) with MSG_DONTWAIT for up to Batch messages.
type RecvMMsg struct {
	bufs []byte
	size int
	sas  []unix.RawSockaddrAny
	iovs []unix.Iovec
	hdrs []mmsghdr
}

var _ Receiver = (*RecvMMsg)(nil)

// NewRecvMMsg preallocates batch buffers, iovecs, sockaddrs and mmsghdrs.
func NewRecvMMsg(bufSize, batch int) *RecvMMsg {
	return newRecvMMsg(make([]byte, bufSize*batch), bufSize, batch)
}

func newRecvMMsg(bufs []byte, bufSize, batch int) *RecvMMsg {
	r := &RecvMMsg{bufs: bufs, size: bufSize,
		sas: make([]unix.RawSockaddrAny, batch), iovs: make([]unix.Iovec, batch), hdrs: make([]mmsghdr, batch)}
	for i := range r.hdrs {
		r.iovs[i].Base = &r.bufs[i*bufSize]
		r.iovs[i].SetLen(bufSize)
		r.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&r.sas[i]))
		r.hdrs[i].hdr.Iov = &r.iovs[i]
		r.hdrs[i].hdr.SetIovlen(1)
	}
	return r
}

// Recv wraps recvmmsg(2) (no timeout).
//
//go:nosplit
func (r *RecvMMsg) Recv(fd int) (int, int, unix.Errno) {
	for i := range r.hdrs {
		r.hdrs[i].hdr.Namelen = unix.SizeofSockaddrAny
		r.hdrs[i].hdr.Flags = 0
	}
	n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.hdrs[0])),
		uintptr(len(r.hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, 0, e
	}
	bytes := 0
	for i := 0; i < int(n); i++ {
		bytes += int(r.hdrs[i].len)
	}
	return int(n), bytes, 0
}

// Msg returns payload i of the last call.
//
//go:nosplit
func (r *RecvMMsg) Msg(i int) []byte {
	off := i * r.size
	return r.bufs[off : off+int(r.hdrs[i].len)]
}
