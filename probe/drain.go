package probe

import (
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Probe is one unit of measured work. Step must not allocate, lock, block
// or use channels.
type Probe interface {
	Step()
}

// Counts is a Drain's accounting since construction. Calls, Data and
// EAGAIN count calls made while Measure was set (so they match the
// histograms' totals); Errors and the message fields count every call.
type Counts struct {
	Calls, Data, EAGAIN, Errors uint64
	LastErrno                   unix.Errno
	Messages, Bytes             uint64
	// Lost counts sequence gaps (messages skipped, less those that arrived
	// late), Reordered messages that arrived with a sequence number below
	// the next expected one, Duplicates a sequence number seen twice (within
	// the last 64), Short messages too small to carry a header.
	Lost, Reordered, Duplicates, Short uint64
}

// Tick is what the last Step did.
type Tick struct {
	Messages, Calls, EAGAIN uint32
}

// Drain reads every socket of its list until EAGAIN on each Step, timing
// every recv call with the clock. With Measure set, each call's duration
// (clock ticks) goes into its Set: record.CallAll, then CallData or
// CallEAGAIN, then its context (see classify), and each message's one-way
// delay into record.OneWayDelay; the message accounting runs always.
type Drain struct {
	fds   []int
	rx    udp.Receiver
	clock *rt.Clock
	set   *record.Set // Loop.install swaps it at interval ends

	// Measure turns recording on (the measured window).
	Measure bool

	expect  []uint64 // next expected sequence number per socket
	seen    []uint64 // bit i: sequence number expect-1-i arrived
	perSock []uint64 // messages received per socket
	c       Counts
	tick    Tick
}

var _ Probe = (*Drain)(nil)

// DrainConfig configures a Drain. The Set is supplied by the caller so
// that its layout comes from the scenario; it must not be nil (a class it
// leaves out is not recorded).
type DrainConfig struct {
	FDs      []int
	Receiver udp.Receiver
	Clock    *rt.Clock
	Set      *record.Set
}

// FirstCalls is how many calls at the start of a tick (right after the
// wakeup) record.CallFirst holds; later calls go to record.CallRest.
const FirstCalls = 3

// NewDrain preallocates per-socket state for len(cfg.FDs) sockets.
func NewDrain(cfg DrainConfig) *Drain {
	return &Drain{fds: cfg.FDs, rx: cfg.Receiver, clock: cfg.Clock, set: cfg.Set,
		expect: make([]uint64, len(cfg.FDs)), seen: make([]uint64, len(cfg.FDs)), perSock: make([]uint64, len(cfg.FDs))}
}

// Set returns the set the drain records into now. Read it from the reader
// thread or after it stopped (or, with intervals, only a set handed over).
func (d *Drain) Set() *record.Set { return d.set }

// Step drains each socket once, in order, until EAGAIN (or another error).
//
//go:nosplit
func (d *Drain) Step() {
	d.tick = Tick{}
	for i, fd := range d.fds {
		d.drainOne(i, fd)
	}
}

//go:nosplit
func (d *Drain) drainOne(i, fd int) {
	got := false // this socket returned data earlier in this drain
	for {
		t0 := d.clock.Now()
		n, bytes, errno := d.rx.Recv(fd)
		t1 := d.clock.Now()
		dt := uint64(t1 - t0)
		pos := d.tick.Calls
		d.tick.Calls++
		if d.Measure {
			d.c.Calls++
			d.set.Record(record.CallAll, dt)
			d.classify(pos, dt, errno, got)
		}
		if errno != 0 {
			if errno == unix.EAGAIN {
				d.tick.EAGAIN++
				if d.Measure {
					d.c.EAGAIN++
					d.set.Record(record.CallEAGAIN, dt)
				}
			} else {
				d.c.Errors++
				d.c.LastErrno = errno
			}
			return
		}
		if d.Measure {
			d.c.Data++
			d.set.Record(record.CallData, dt)
		}
		got = true
		d.account(i, n, bytes)
	}
}

// classify records one measured call's cost dt by its context: its
// position pos in the tick (0 = first call after the wakeup) into
// record.CallFirst or CallRest, and, for an EAGAIN, whether its socket had
// returned data earlier in this drain (got: CallWarm) or not (CallCold).
// Outside the timed call; no allocation, no system call.
//
//go:nosplit
func (d *Drain) classify(pos uint32, dt uint64, errno unix.Errno, got bool) {
	if pos < FirstCalls {
		d.set.Record(record.CallFirst, dt)
	} else {
		d.set.Record(record.CallRest, dt)
	}
	if errno != unix.EAGAIN {
		return
	}
	if got {
		d.set.Record(record.CallWarm, dt)
	} else {
		d.set.Record(record.CallCold, dt)
	}
}

//go:nosplit
func (d *Drain) account(i, n, bytes int) {
	d.c.Messages += uint64(n)
	d.c.Bytes += uint64(bytes)
	d.tick.Messages += uint32(n)
	d.perSock[i] += uint64(n)
	var now int64
	if d.Measure {
		now = rt.Monotonic()
	}
	for m := 0; m < n; m++ {
		h, ok := udp.ReadHeader(d.rx.Msg(m))
		if !ok {
			d.c.Short++
			continue
		}
		d.sequence(i, h.Seq)
		if d.Measure {
			d.set.RecordSigned(record.OneWayDelay, now-h.SentNs)
		}
	}
}

// sequence accounts for sequence number seq on socket i.
//
//go:nosplit
func (d *Drain) sequence(i int, seq uint64) {
	e := d.expect[i]
	switch {
	case seq == e:
		d.seen[i] = d.seen[i]<<1 | 1
		d.expect[i] = e + 1
	case seq > e:
		gap := seq - e
		d.c.Lost += gap
		if gap >= 63 {
			d.seen[i] = 1
		} else {
			d.seen[i] = d.seen[i]<<(gap+1) | 1
		}
		d.expect[i] = seq + 1
	default:
		back := e - 1 - seq
		if back < 64 {
			if d.seen[i]&(1<<back) != 0 {
				d.c.Duplicates++
				return
			}
			d.seen[i] |= 1 << back
		}
		d.c.Reordered++
		if d.c.Lost > 0 {
			d.c.Lost--
		}
	}
}

// Counts returns the accounting so far. Call from the reader thread or after it stopped.
func (d *Drain) Counts() Counts { return d.c }

// LastTick returns what the last Step did.
//
//go:nosplit
func (d *Drain) LastTick() Tick { return d.tick }

// SocketsRead is the number of sockets that returned at least one message.
func (d *Drain) SocketsRead() int {
	n := 0
	for _, c := range d.perSock {
		if c > 0 {
			n++
		}
	}
	return n
}

// Received returns the messages received on socket i.
func (d *Drain) Received(i int) uint64 { return d.perSock[i] }

// Expected returns the next expected sequence number on socket i (= the
// number of messages sent to it, once every in-flight message is read).
func (d *Drain) Expected(i int) uint64 { return d.expect[i] }

// FDs returns the sockets drained, in order.
func (d *Drain) FDs() []int { return d.fds }
