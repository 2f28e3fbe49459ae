package tap

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WriteFrame is the measured call of the tap_send probe: one raw write(2)
// of frame to fd (a tap queue fd from Device.FDs). It returns the bytes
// written and the errno (0 = ok). No allocation, no netpoller.
func WriteFrame(fd int, frame []byte) (n int, errno unix.Errno) {
	if len(frame) == 0 {
		return 0, unix.EINVAL
	}
	r, _, e := unix.Syscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&frame[0])), uintptr(len(frame)))
	return int(r), e
}

// Injector delivers paced traffic into sockets behind a tap: socket i is
// reached by flow i, written on queue fd i % len(fds). It mirrors
// udp.Sender. Not safe for concurrent use.
type Injector struct {
	fds   []int
	b     *Builder
	seq   []uint64
	sent  uint64
	errs  uint64
	short uint64
}

// NewInjector builds the frames of flows (see NewBuilder) for writing to
// fds (Device.FDs; the Injector does not own them).
func NewInjector(fds []int, flows []Flow, payloadLen int, vnetHdr bool) (*Injector, error) {
	if len(fds) == 0 {
		return nil, fmt.Errorf("tap injector: no fds")
	}
	b, err := NewBuilder(flows, payloadLen, vnetHdr)
	if err != nil {
		return nil, err
	}
	return &Injector{fds: append([]int(nil), fds...), b: b, seq: make([]uint64, len(flows))}, nil
}

// Send writes one frame to each socket index in dst, with that socket's
// next sequence number and nowNs (CLOCK_MONOTONIC ns) as send time, one
// write(2) per frame. It returns how many were written; a failed or short
// write is counted (Errors, ShortWrites), keeps its sequence number unused
// and stops the call. No allocation unless a write fails.
func (j *Injector) Send(dst []int, nowNs int64) (int, error) {
	for k, d := range dst {
		frame := j.b.Frame(d, j.seq[d], nowNs)
		fd := j.fds[d%len(j.fds)]
		n, errno := WriteFrame(fd, frame)
		if errno != 0 {
			j.errs++
			return k, fmt.Errorf("tap injector: socket %d: %w", d, os.NewSyscallError("write", errno))
		}
		if n != len(frame) {
			j.short++
			return k, fmt.Errorf("tap injector: socket %d: short write %d of %d bytes", d, n, len(frame))
		}
		j.seq[d]++
		j.sent++
	}
	return len(dst), nil
}

// Sent is the number of frames written so far.
func (j *Injector) Sent() uint64 { return j.sent }

// SentTo returns the number of frames written to socket i (its next
// sequence number).
func (j *Injector) SentTo(i int) uint64 { return j.seq[i] }

// Errors is the number of failed writes.
func (j *Injector) Errors() uint64 { return j.errs }

// ShortWrites is the number of writes that wrote less than a frame (tap
// writes are all or nothing, so it stays 0 unless the kernel changes).
func (j *Injector) ShortWrites() uint64 { return j.short }
