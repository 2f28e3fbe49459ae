package probe

import (
	"fmt"
	"slices"

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
// histograms' totals), and SumTicks is the sum of those calls' clock
// ticks (so SumTicks / Calls is their mean cost); Errors and the message
// fields count every call.
type Counts struct {
	Calls, Data, EAGAIN, Errors uint64
	SumTicks                    uint64
	LastErrno                   unix.Errno
	Messages, Bytes             uint64
	// Lost counts sequence gaps (messages skipped, less those that arrived
	// late), Reordered messages that arrived with a sequence number below
	// the next expected one, Duplicates a sequence number seen twice (within
	// the last 64), Short messages too small to carry a header.
	Lost, Reordered, Duplicates, Short uint64
	// The drift controls of measured ticks (see ControlTick): NullCalls
	// null system calls that took NullSumTicks clock ticks in all, LoopCalls
	// user-loop runs that took LoopSumTicks; ControlSkips counts the
	// measured ticks that ran none because the next deadline was too near.
	NullCalls, NullSumTicks, LoopCalls, LoopSumTicks uint64
	ControlSkips                                     uint64
}

// Tick is what the last Step did.
type Tick struct {
	Messages, Calls, EAGAIN uint32
}

// Drain reads every socket of its list until EAGAIN on each Step, timing
// every recv call with the clock. With Measure set, each call's duration
// (clock ticks) goes into its Set: record.CallAll, then CallData or
// CallEAGAIN, then its context (see flush), each message's one-way delay
// into record.OneWayDelay, and with per-call counters each call's event
// counts (record.Set.RecordEvent) in the same classes; the message
// accounting runs always.
//
// The measured path is one loop per clock source (drainTSC,
// drainTSCFenced, drainCycles, drainMonotonic, chosen once per Step): the clock read sits at the call
// site, with no method dispatch and no switch on the clock kind, and each
// measured call stores one raw sample (its ticks, result class and
// position; its counter deltas). Everything derived from the samples (the
// linear and HDR histograms, the class and position histograms, the
// counts) is recorded by flush after the tick's last call, or between two
// calls when the sample buffer is full: never between the two reads of a
// call, and not between two calls otherwise.
type Drain struct {
	fds   []int
	rx    udp.Receiver
	clock *rt.Clock
	src   rt.Source
	set   *record.Set // Loop.install swaps it at interval ends

	// Measure turns recording on (the measured window).
	Measure bool

	expect  []uint64 // next expected sequence number per socket
	seen    []uint64 // bit i: sequence number expect-1-i arrived
	perSock []uint64 // messages received per socket
	c       Counts
	tick    Tick
	got     bool // the socket being drained returned data earlier in this drain

	// Raw samples of the measured calls since the last flush: samples[:n],
	// with nev counter deltas each in evBuf[j*nev:]; delays[:nd] are the
	// one-way delays (ns) of the messages received since.
	samples []callSample
	n       int
	evBuf   []uint64
	delays  []int64
	nd      int

	// Per-call counters (nil without, or when none opened): read into
	// before and after around each call; evIdx maps a counter's read index
	// to its event index in the Set. See OpenCounters.
	ctr           *rt.Counters
	cfgCtr        *rt.Counters
	nev           int
	before, after []uint64
	evIdx         []int

	// Drift controls (controls.go): the tick's raw samples of each (its
	// length is the controls per tick; empty: none), the user loop's
	// running value, and how long the last tick's controls took (ns).
	ctlNull, ctlLoop []uint64
	loopX            uint64
	ctlNs            int64

	// The cache-line ping and the memory chase (xcontrols.go): the shared
	// lines (nil: no ping), the sequence each line had at its last read,
	// the tick's samples (pingN of them valid); the chase's buffer (empty:
	// no chase), its samples and its position.
	ping     *PingLines
	pingSeen [PingLineCount]uint64
	ctlPing  []uint64
	pingN    int
	chase    []uint32
	ctlChase []uint64
	chaseX   uint32

	// The recv control (xcontrols.go): the reader's own socket (nil:
	// none), and the tick's 2·RecvRounds timed calls on it (a data call,
	// then an EAGAIN call, per round) with what each returned.
	self       *udp.Self
	ctlRecv    []uint64
	ctlRecvErr []unix.Errno
}

// callSample is one measured call as the measured path stores it.
type callSample struct {
	dt   uint64 // clock ticks between the two reads
	pos  uint32 // the call's number in its tick (0 = first after the wakeup)
	kind uint8  // sampleData, sampleWarm, sampleCold or sampleError
}

// Result classes of a sample.
const (
	sampleData  uint8 = iota // returned a message
	sampleWarm               // EAGAIN on a socket that returned data earlier in the same drain
	sampleCold               // EAGAIN on a socket that had nothing this tick
	sampleError              // another error
)

// SampleBuffer is how many measured calls (and how many messages' delays)
// the drain holds before it must flush them into its Set: a tick with more
// flushes once between two calls every SampleBuffer calls.
const SampleBuffer = 1024

var _ Probe = (*Drain)(nil)

// DrainConfig configures a Drain. The Set is supplied by the caller so
// that its layout comes from the scenario; it must not be nil (a class it
// leaves out is not recorded).
type DrainConfig struct {
	FDs      []int
	Receiver udp.Receiver
	Clock    *rt.Clock
	Set      *record.Set
	// Counters, when set, are per-call hardware counters read before and
	// after every call (see OpenCounters). The Set (and every Set the drain
	// is given later) must have their events (record.Set.AddEvents, the
	// configured names in order).
	Counters *rt.Counters
	// Controls is how many of each drift control (a null system call, a
	// run of the user loop) ControlTick times after each tick's drain:
	// 0 (none) to MaxControls (more are cut to it).
	Controls int
	// Ping, when set (with Controls > 0), is the shared lines the sender
	// of the reader's endpoint writes: the drain times the cache-line
	// ping after its other controls. Chase adds the memory chase (ChaseRuns
	// runs of ChaseSteps loads over a ChaseBytes buffer it allocates).
	Ping  *PingLines
	Chase bool
	// Recv, when set (with Controls > 0), is the reader's own socket for
	// the recv control: after its other controls the drain sends
	// RecvRounds datagrams to it, one a round, and times the Receiver's
	// call that reads each and the call that then finds it empty. The
	// drain does not close it.
	Recv *udp.Self
}

// FirstCalls is how many calls at the start of a tick (right after the
// wakeup) record.CallFirst holds; later calls go to record.CallRest.
const FirstCalls = 3

// NewDrain preallocates per-socket state for len(cfg.FDs) sockets and the
// sample buffers (every page written once: no page fault on the real-time
// thread). A nil Clock times with CLOCK_MONOTONIC.
func NewDrain(cfg DrainConfig) *Drain {
	d := &Drain{fds: cfg.FDs, rx: cfg.Receiver, clock: cfg.Clock, set: cfg.Set, cfgCtr: cfg.Counters,
		expect: make([]uint64, len(cfg.FDs)), seen: make([]uint64, len(cfg.FDs)), perSock: make([]uint64, len(cfg.FDs)),
		samples: make([]callSample, SampleBuffer), delays: make([]int64, SampleBuffer)}
	if cfg.Clock != nil {
		d.src = cfg.Clock.Source()
	}
	if k := min(max(cfg.Controls, 0), MaxControls); k > 0 {
		d.ctlNull, d.ctlLoop, d.loopX = make([]uint64, k), make([]uint64, k), 1
		if cfg.Ping != nil {
			d.ping, d.ctlPing = cfg.Ping, make([]uint64, PingLineCount)
		}
		if cfg.Chase {
			d.chase, d.ctlChase = newChase(), make([]uint64, ChaseRuns)
		}
		if cfg.Recv != nil {
			d.self, d.ctlRecv, d.ctlRecvErr = cfg.Recv, make([]uint64, 2*RecvRounds), make([]unix.Errno, 2*RecvRounds)
		}
	}
	prefault(d.samples)
	prefault(d.delays)
	prefault(d.ctlNull)
	prefault(d.ctlLoop)
	prefault(d.ctlPing)
	prefault(d.ctlChase)
	prefault(d.ctlRecv)
	prefault(d.ctlRecvErr)
	return d
}

// OpenCounters opens the drain's per-call counters (DrainConfig.Counters)
// on the calling thread, which must be the locked, pinned thread that will
// Step, before its measured window, and maps each counter that opened to
// its event in the Set (an event left out by rt.CountersConfig.AllowDegraded
// stays empty). It allocates the counter buffers. Without counters it does
// nothing; the error is Open's.
func (d *Drain) OpenCounters() error {
	if d.cfgCtr == nil {
		return nil
	}
	if err := d.cfgCtr.Open(); err != nil {
		return err
	}
	names := d.set.Events()
	d.evIdx = d.evIdx[:0]
	for _, n := range d.cfgCtr.Names() {
		e := slices.Index(names, n)
		if e < 0 {
			return fmt.Errorf("per-call counter %s: not an event of the drain's set (%v)", n, names)
		}
		d.evIdx = append(d.evIdx, e)
	}
	if d.nev = d.cfgCtr.Len(); d.nev == 0 {
		return nil
	}
	d.before, d.after = make([]uint64, d.nev), make([]uint64, d.nev)
	d.evBuf = make([]uint64, SampleBuffer*d.nev)
	prefault(d.evBuf)
	d.ctr = d.cfgCtr
	return nil
}

// CountedEvents names the per-call counters the drain reads (after
// OpenCounters), in read order.
func (d *Drain) CountedEvents() []string {
	if d.ctr == nil {
		return nil
	}
	return d.ctr.Names()
}

// Set returns the set the drain records into now. Read it from the reader
// thread or after it stopped (or, with intervals, only a set handed over).
func (d *Drain) Set() *record.Set { return d.set }

// Step drains each socket once, in order, until EAGAIN (or another
// error), then flushes the tick's samples into the Set.
//
//go:nosplit
func (d *Drain) Step() {
	d.tick = Tick{}
	switch d.src {
	case rt.SourceTSC:
		d.drainTSC()
	case rt.SourceTSCFenced:
		d.drainTSCFenced()
	case rt.SourceCycles:
		d.drainCycles()
	default:
		d.drainMonotonic()
	}
	d.flush()
}

// drainTSC, drainTSCFenced, drainCycles and drainMonotonic are the
// measured path, one per clock source and alike but for the two reads:
// for each socket in turn, per call the counters before (when set), the
// clock, the recv call, the clock, the counters after, then one sample
// (called), until the socket's drain ends.

//go:nosplit
func (d *Drain) drainTSC() {
	for i, fd := range d.fds {
		d.got = false
		for {
			if d.ctr != nil {
				d.ctr.ReadInto(d.before)
			}
			t0 := rt.TSC()
			n, bytes, errno := d.rx.Recv(fd)
			t1 := rt.TSC()
			if d.ctr != nil {
				d.ctr.ReadInto(d.after)
			}
			if d.called(i, uint64(t1-t0), n, bytes, errno) {
				break
			}
		}
	}
}

//go:nosplit
func (d *Drain) drainTSCFenced() {
	for i, fd := range d.fds {
		d.got = false
		for {
			if d.ctr != nil {
				d.ctr.ReadInto(d.before)
			}
			t0 := rt.TSCFenced()
			n, bytes, errno := d.rx.Recv(fd)
			t1 := rt.TSCFenced()
			if d.ctr != nil {
				d.ctr.ReadInto(d.after)
			}
			if d.called(i, uint64(t1-t0), n, bytes, errno) {
				break
			}
		}
	}
}

//go:nosplit
func (d *Drain) drainCycles() {
	for i, fd := range d.fds {
		d.got = false
		for {
			if d.ctr != nil {
				d.ctr.ReadInto(d.before)
			}
			t0 := d.clock.Cycles()
			n, bytes, errno := d.rx.Recv(fd)
			t1 := d.clock.Cycles()
			if d.ctr != nil {
				d.ctr.ReadInto(d.after)
			}
			if d.called(i, uint64(t1-t0), n, bytes, errno) {
				break
			}
		}
	}
}

//go:nosplit
func (d *Drain) drainMonotonic() {
	for i, fd := range d.fds {
		d.got = false
		for {
			if d.ctr != nil {
				d.ctr.ReadInto(d.before)
			}
			t0 := rt.Monotonic()
			n, bytes, errno := d.rx.Recv(fd)
			t1 := rt.Monotonic()
			if d.ctr != nil {
				d.ctr.ReadInto(d.after)
			}
			if d.called(i, uint64(t1-t0), n, bytes, errno) {
				break
			}
		}
	}
}

// called accounts for one recv call on socket i that took dt ticks and
// reports whether the socket's drain ends (EAGAIN or another error). A
// measured call stores its one sample: dt, its position in the tick, its
// result class (from errno and whether this socket returned data earlier
// in this drain) and the counters' deltas; a full buffer is flushed.
//
//go:nosplit
func (d *Drain) called(i int, dt uint64, n, bytes int, errno unix.Errno) bool {
	pos := d.tick.Calls
	d.tick.Calls++
	if d.Measure {
		k := sampleData
		switch {
		case errno == unix.EAGAIN && d.got:
			k = sampleWarm
		case errno == unix.EAGAIN:
			k = sampleCold
		case errno != 0:
			k = sampleError
		}
		j := d.n
		d.samples[j] = callSample{dt: dt, pos: pos, kind: k}
		if d.nev > 0 {
			d.events(j)
		}
		if d.n = j + 1; d.n == len(d.samples) {
			d.flush()
		}
	}
	if errno != 0 {
		if errno == unix.EAGAIN {
			d.tick.EAGAIN++
		} else {
			d.c.Errors++
			d.c.LastErrno = errno
		}
		return true
	}
	d.got = true
	d.account(i, n, bytes)
	return false
}

// events stores sample j's counter deltas.
//
//go:nosplit
func (d *Drain) events(j int) {
	ev := d.evBuf[j*d.nev : (j+1)*d.nev]
	for e := range ev {
		ev[e] = d.after[e] - d.before[e]
	}
}

// flush records the samples and delays stored since the last flush into
// the Set and the counts, and empties the buffers. Each call goes into
// record.CallAll, CallData or CallEAGAIN (an error call into neither),
// CallWarm or CallCold (EAGAIN only), and CallFirst (its position <
// FirstCalls) or CallRest; its counter deltas into the same classes of its
// events. Outside every timed call; no allocation, no system call.
//
//go:nosplit
func (d *Drain) flush() {
	for j := 0; j < d.n; j++ {
		s := d.samples[j]
		d.c.Calls++
		d.c.SumTicks += s.dt
		var res, ctx record.Class
		switch s.kind {
		case sampleData:
			d.c.Data++
			res, ctx = record.CallData, noClass
		case sampleWarm:
			d.c.EAGAIN++
			res, ctx = record.CallEAGAIN, record.CallWarm
		case sampleCold:
			d.c.EAGAIN++
			res, ctx = record.CallEAGAIN, record.CallCold
		default:
			res, ctx = noClass, noClass
		}
		pos := record.CallRest
		if s.pos < FirstCalls {
			pos = record.CallFirst
		}
		d.set.Record(record.CallAll, s.dt)
		if res != noClass {
			d.set.Record(res, s.dt)
		}
		if ctx != noClass {
			d.set.Record(ctx, s.dt)
		}
		d.set.Record(pos, s.dt)
		if d.nev > 0 {
			ev := d.evBuf[j*d.nev : (j+1)*d.nev]
			for r, v := range ev {
				e := d.evIdx[r]
				d.set.RecordEvent(e, record.CallAll, v)
				if res != noClass {
					d.set.RecordEvent(e, res, v)
				}
				if ctx != noClass {
					d.set.RecordEvent(e, ctx, v)
				}
				d.set.RecordEvent(e, pos, v)
			}
		}
	}
	d.n = 0
	for _, v := range d.delays[:d.nd] {
		d.set.RecordSigned(record.OneWayDelay, v)
	}
	d.nd = 0
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
			d.delays[d.nd] = now - h.SentNs
			if d.nd++; d.nd == len(d.delays) {
				d.flush()
			}
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

// noClass marks a sample without a result or context class.
const noClass = record.NumClasses

// prefault writes every page of s once (see record's constructors), so
// the real-time thread takes no first-touch page fault on it.
func prefault[T any](s []T) {
	var zero T
	for i := range s {
		s[i] = zero
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
