package probe

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Ticked is a Probe that also reports what its last Step did (for the
// per-wakeup log).
type Ticked interface {
	Probe
	LastTick() Tick
}

// Loop runs a Ticked probe on every tick of a real-time thread. Phases, by
// deadline (CLOCK_MONOTONIC ns): before MeasureFrom (warm-up) Steps run
// unrecorded; in [MeasureFrom, MeasureUntil) they are recorded and each
// wakeup is logged; from MeasureUntil on (tail) they run unrecorded again
// until Stop is set, then one last Step drains what is left.
type Loop struct {
	Ticker                    *rt.Ticker
	Probe                     Ticked
	Drain                     *Drain // optional: its Measure flag follows the phase
	MeasureFrom, MeasureUntil int64
	// Stop ends the loop at the next tick (set by the engine once senders stopped).
	Stop atomic.Bool
	// HardStop is the deadline (CLOCK_MONOTONIC ns) after which the loop
	// ends even without Stop; it must be set (0 stops after the first tick).
	HardStop int64
	// Wakeups is the per-wakeup log ring (measured ticks only).
	Wakeups *record.Ring[record.Wakeup]
	// Interval (ns) > 0 hands the current Recorders to Handoff every
	// Interval of measured ticks (soak runs). Rec is the Recorders in use
	// and must be set: Run installs its Set into the Loop and its Drain, and
	// measured ticks record record.WakeupLatency and record.DrainTime (ns)
	// into it. With Interval 0 Rec is recorded into for the whole run.
	Interval int64
	Handoff  *Handoff
	Rec      *Recorders
	// Interleave, when set, alternates variants in blocks (see
	// Interleave; not with Interval): the loop starts in the block of the
	// first deadline, whatever Rec says.
	Interleave *Interleave
	set        *record.Set // Rec.Set, the one pointer the hot loop follows
	// Threshold (ns) > 0 marks wakeups later than it as spikes (counted in
	// Spikes; the writer logs them from the wakeup records). With
	// BreakTrace, the first spike writes Marker to the ftrace trace_marker
	// fd and "0" to the tracing_on fd, as cyclictest's breaktrace does, so
	// the kernel trace ends at the spike.
	Threshold             int64
	BreakTrace            bool
	MarkerFD, TracingOnFD int
	Marker                []byte
	Spikes                uint64
	// BrokeAt is the deadline of the spike that stopped tracing, 0 = none;
	// atomic because the writer reads it while the loop runs.
	BrokeAt atomic.Int64
	// Yield, when set, makes the loop pass SafePoint once per tick so that
	// a garbage collection can stop the world (see SafePoint); Yields
	// counts the passes.
	Yield  *atomic.Bool
	Yields uint64
	// StartCounts is the Drain's accounting when the measured window began.
	StartCounts Counts
	started     bool
	// Stats counted by Run. Ticks counts every tick run; the others count
	// measured ticks only: Overruns the ticks that were overruns (the
	// Ticker's Overran: entered a period or more late, in either mode),
	// MissedTicks the ticks skipped before them (the sum of Wait's missed,
	// as the wakeup log's missed column), BacklogSkips the catch-up
	// overruns that skipped because the backlog was past its limit.
	Ticks, MeasuredTicks, Overruns, MissedTicks, BacklogSkips uint64
	TailMessages                                              uint64
	Errno                                                     uintptr

	lastDeadline int64 // of the last tick run, for Final

	// ru and the counts at the last read: the thread's context switches
	// (getrusage(RUSAGE_THREAD)), read once per tick after the drain; each
	// wakeup record carries the switches since the previous read, so those
	// of the sleep, the wakeup and the drain.
	ru                 unix.Rusage
	lastVol, lastInvol uint64
}

// install makes r's Set the one recorded into by the loop and its drain.
//
//go:nosplit
func (l *Loop) install(r *Recorders) {
	l.Rec, l.set = r, r.Set
	if l.Drain != nil {
		l.Drain.set = r.Set
	}
}

// handover fills r with the loop's cumulative counters now, for a set
// that ends at deadline toNs.
//
//go:nosplit
func (l *Loop) handover(r *Recorders, toNs int64) {
	r.ToNs = toNs
	if l.Drain != nil {
		r.Counts = l.Drain.c
	}
	r.Ticks, r.Overruns, r.MissedTicks, r.BacklogSkips, r.Spikes = l.MeasuredTicks, l.Overruns, l.MissedTicks, l.BacklogSkips, l.Spikes
}

// Final returns the Recorders the loop was recording into when it ended
// (with intervals, the last, partial one) filled like a handed-over set:
// the loop's final counters, and ToNs the deadline of the last tick it ran
// (skipped ticks included). Call it only after Run returned.
func (l *Loop) Final() *Recorders {
	l.handover(l.Rec, l.lastDeadline)
	return l.Rec
}

// Run loops until Stop or HardStop. Call it on the real-time thread, with
// Rec set.
//
//go:nosplit
func (l *Loop) Run() {
	l.install(l.Rec)
	nextHandoff := l.MeasureFrom + l.Interval
	il := l.Interleave
	period := l.Ticker.Deadline(1) - l.Ticker.Deadline(0)
	if il != nil {
		l.openBlock(l.Ticker.Deadline(0))
	}
	l.lastVol, l.lastInvol, _ = threadSwitches(&l.ru)
	for {
		k, deadline, lat, missed, errno := l.Ticker.Wait()
		if errno != 0 {
			l.Errno = uintptr(errno)
			return
		}
		if il != nil && deadline >= il.end {
			l.nextBlock(deadline) // ticks skipped past the block's end
		}
		l.Ticks++
		l.lastDeadline = deadline
		stop := l.Stop.Load() || deadline >= l.HardStop
		measured := deadline >= l.MeasureFrom && deadline < l.MeasureUntil
		if l.Drain != nil {
			l.Drain.Measure = measured
			if measured && !l.started {
				// Counts at the start of the measured window: the first
				// interval's message counts begin here, not in warm-up.
				l.started = true
				l.StartCounts = l.Drain.c
			}
		}
		t0 := rt.Monotonic()
		l.Probe.Step()
		t1 := rt.Monotonic()
		vol, invol, _ := threadSwitches(&l.ru)
		dVol, dInvol := vol-l.lastVol, invol-l.lastInvol
		l.lastVol, l.lastInvol = vol, invol
		if measured {
			l.MeasuredTicks++
			// An overrun is a late tick (see rt.Ticker): skipped ticks in
			// skip mode, back-to-back lateness in catch-up mode.
			if l.Ticker.Overran() {
				l.Overruns++
			}
			l.MissedTicks += missed
			if missed > 0 && l.Ticker.CatchUp() {
				l.BacklogSkips++
			}
			l.set.RecordSigned(record.WakeupLatency, lat)
			l.set.RecordSigned(record.DrainTime, t1-t0)
			if il != nil && lat > il.wakeMax {
				il.wakeMax = lat
			}
			tk := l.Probe.LastTick()
			l.Wakeups.Put(record.Wakeup{Tick: k, DeadlineNs: deadline, LatencyNs: lat, DrainNs: t1 - t0,
				Messages: tk.Messages, Calls: tk.Calls, EAGAIN: tk.EAGAIN, Missed: uint32(missed),
				VolCS: uint32(dVol), InvolCS: uint32(dInvol)})
			if l.Threshold > 0 && lat > l.Threshold {
				l.Spikes++
				if l.BreakTrace && l.BrokeAt.Load() == 0 {
					l.BrokeAt.Store(deadline)
					l.breakTrace()
				}
			}
			if l.Interval > 0 && deadline >= nextHandoff && l.Handoff != nil {
				l.handover(l.Rec, deadline)
				if next := l.Handoff.swap(l.Rec); next != nil {
					next.FromNs = deadline
					l.install(next)
					nextHandoff += l.Interval
					for nextHandoff <= deadline {
						nextHandoff += l.Interval
					}
				}
			}
		} else if deadline >= l.MeasureUntil {
			l.TailMessages += uint64(l.Probe.LastTick().Messages)
		}
		if stop {
			return
		}
		// The tick's work is done and counted: when the next deadline is
		// in the next block, switch to its variant now, before the sleep.
		if il != nil && deadline+period >= il.end {
			l.nextBlock(deadline + period)
		}
		// The tick's work is done and recorded: only here, and only when the
		// engine asks (before it collects garbage), may the Go runtime stop
		// this thread (see SafePoint).
		if l.Yield != nil && l.Yield.Load() {
			SafePoint()
			l.Yields++
		}
	}
}

// SafePoint is the real-time loop's only preemption point. Everything else
// the loop runs is //go:nosplit and the thread sleeps in a raw system call,
// so the Go runtime can never stop or deschedule it — which also means a
// stop-the-world (a garbage collection) could not complete while the loop
// runs. GC is therefore off during trials, and a soak run's writer collects
// only after setting Loop.Yield: the loop then passes here once per tick,
// after the tick's work, never inside a timed call, until the collection
// is done. (Passing here on every tick instead let the runtime's sysmon
// preempt the thread every ~10 ms and hand it back through a futex and an
// ordinary-priority thread: 645 futex calls for 502 sleeps and wakeups up
// to 28 ms late under noise, measured for BENCHMARKS.md.) It is an ordinary
// (non-inlined, non-leaf) Go function with a stack check in its prologue,
// which is all a preemption point is.
//
//go:noinline
func SafePoint() { safePointLeaf() }

//go:noinline
func safePointLeaf() {}

// breakTrace writes the marker to trace_marker and stops ftrace (raw
// write(2) calls on fds opened before the run; no allocation).
//
//go:nosplit
func (l *Loop) breakTrace() {
	if l.MarkerFD > 0 && len(l.Marker) > 0 {
		unix.RawSyscall(unix.SYS_WRITE, uintptr(l.MarkerFD), uintptr(unsafe.Pointer(&l.Marker[0])), uintptr(len(l.Marker)))
	}
	if l.TracingOnFD > 0 {
		zero := [1]byte{'0'}
		unix.RawSyscall(unix.SYS_WRITE, uintptr(l.TracingOnFD), uintptr(unsafe.Pointer(&zero[0])), 1)
	}
}
