package noise

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/rt"
)

// udpWorker is the udp kind: a loopback flood at a fixed rate. Each thread
// owns a sink (a udp.Group of one socket on 127.0.0.1, ephemeral port) and
// a udp.Sender to it; it sends every message due by the pacer in one
// sendmmsg batch, drains the sink with non-blocking recvmmsg so each
// message takes the full send and receive path, then sleeps
// (clock_nanosleep TIMER_ABSTIME) until the next message is due. Counted
// in messages sent; Received and Drops say where they went.
type udpWorker struct {
	sink  *udp.Group
	fd    int
	snd   *udp.Sender
	rx    *udp.RecvMMsg
	pacer pace.Even
	size  int
	dst   []int // all 0: the sink's one socket; len = send batch
	base  int64 // start of the current "on" phase, ns
	n     uint64
}

// udpBatch is the most messages one sendmmsg or recvmmsg call moves.
const udpBatch = 64

// maxSleep bounds a pacing sleep so stop is seen within 1 ms.
const maxSleep = int64(time.Millisecond)

// loopback is the only address the udp kind sends to.
var loopback = netip.MustParseAddr("127.0.0.1")

func newUDPWorker(size int, rate float64) (w *udpWorker, err error) {
	w = &udpWorker{size: size, dst: make([]int, udpBatch),
		pacer: pace.Even{Count: 1, Interval: time.Duration(float64(time.Second) / rate)}}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if w.sink, err = udp.Open(udp.Config{Count: 1, Addr: loopback}); err != nil {
		return nil, fmt.Errorf("udp sink: %w", err)
	}
	w.fd = w.sink.FDs()[0]
	if w.snd, err = udp.NewSender(w.sink, size, udpBatch); err != nil {
		return nil, err
	}
	w.rx = udp.NewRecvMMsg(size, udpBatch)
	return w, nil
}

// Addr is the sink's address (always 127.0.0.1, ephemeral port).
func (w *udpWorker) addr() netip.AddrPort { return w.sink.Addrs()[0] }

// phase restarts the pacer: messages due during "off" are not sent late.
func (w *udpWorker) phase(now int64) { w.base, w.n = now, 0 }

func (w *udpWorker) step(s *slot, end int64) unix.Errno {
	now := rt.Monotonic()
	k := 0
	for k < len(w.dst) && w.base+int64(w.pacer.Next(w.n)) <= now {
		k++
		w.n++
	}
	if k > 0 {
		sent, err := w.snd.Send(w.dst[:k], now)
		s.units.Add(uint64(sent))
		s.sent.Add(uint64(sent))
		s.bytes.Add(uint64(sent * w.size))
		if err != nil {
			return errnoOf(err)
		}
	}
	if errno := w.drain(s, udpBatch); errno != 0 {
		return errno
	}
	if k == 0 {
		rt.SleepUntil(min(w.base+int64(w.pacer.Next(w.n)), end, now+maxSleep))
	}
	return 0
}

// drain reads the sink until it is empty (EAGAIN) or calls recvmmsg
// calls were made.
func (w *udpWorker) drain(s *slot, calls int) unix.Errno {
	for range calls {
		msgs, _, errno := w.rx.Recv(w.fd)
		if errno == unix.EAGAIN {
			return 0
		}
		if errno != 0 {
			return errno
		}
		s.recv.Add(uint64(msgs))
	}
	return 0
}

// finish reads what is still queued, records the sink's drops and closes.
func (w *udpWorker) finish(s *slot) error {
	var errs []error
	if w.sink != nil {
		if errno := w.drain(s, 1<<16); errno != 0 {
			errs = append(errs, fmt.Errorf("final drain: %w", errno))
		}
		d, err := w.sink.Drops()
		if err != nil {
			errs = append(errs, err)
		}
		s.drops.Store(d)
	}
	errs = append(errs, w.close())
	return errors.Join(errs...)
}

func (w *udpWorker) close() error {
	err := errors.Join(w.snd.Close(), w.sink.Close())
	w.snd, w.rx = nil, nil
	return err
}

// errnoOf returns the unix.Errno inside err, or EIO.
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}
