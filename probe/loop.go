package probe

import (
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
	Stop Flag
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
	BrokeAt Int64
	// Yield, when set, makes the loop pass SafePoint once per tick so that
	// a garbage collection can stop the world (see SafePoint); Yields
	// counts the passes.
	Yield  *Flag
	Yields uint64
	// StartCounts is the Drain's accounting when the measured window began.
	StartCounts Counts
	started     bool
	// Stats counted by Run. Ticks counts every tick run; the others count
	// measured ticks only: Overruns the ticks that were overruns (the
	// Ticker's Overran: entered a period or more late, in either mode),
	// BacklogSkips the catch-up overruns that skipped because the backlog
	// was past its limit. MissedTicks counts the window's deadlines
	// [MeasureFrom, MeasureUntil) that no tick ran, wherever they were
	// found: skipped by a measured tick (the wakeup record's Missed, which
	// counts only the skipped deadlines inside the window, so a skip
	// across MeasureFrom leaves out the warm-up's), and MissedAtEnd of
	// them (see below). So at the end of Run
	//
	//	MeasuredTicks + MissedTicks = the window's deadlines up to the loop's end
	//
	// exactly, in every mode and however late the thread ran.
	//
	// MissedAtEnd counts the window's deadlines no measured tick could
	// account for, because the window ended first: skipped by the first
	// tick after MeasureUntil (the thread was off its CPU across the
	// window's end), or still due when the loop stopped (a catch-up reader
	// behind for good, or a thread that never got its CPU). They are in
	// MissedTicks but in no wakeup record: the wakeup log's missed column
	// sums to MissedTicks − MissedAtEnd.
	Ticks, MeasuredTicks, Overruns, MissedTicks, BacklogSkips uint64
	MissedAtEnd                                               uint64
	// WarmupTicks and TailTicks count the ticks run before and after the
	// window; FirstTickNs is the CLOCK_MONOTONIC time the first tick
	// woke (0: none ran), EndNs the time Run ended. They say, for a trial
	// that measured nothing, whether the thread ran at all and when.
	WarmupTicks, TailTicks uint64
	FirstTickNs, EndNs     int64
	TailMessages           uint64
	Errno                  uintptr

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
	period := l.Ticker.Period()
	if il != nil {
		l.openBlock(l.Ticker.Deadline(0))
	}
	l.lastVol, l.lastInvol, _ = threadSwitches(&l.ru)
	for {
		k, deadline, lat, missed, errno := l.Ticker.Wait()
		if errno != 0 {
			l.Errno = uintptr(errno)
			l.end()
			return
		}
		if l.Ticks == 0 {
			l.FirstTickNs = deadline + lat
		}
		if il != nil && deadline >= il.end {
			l.nextBlock(deadline) // ticks skipped past the block's end
		}
		l.Ticks++
		l.lastDeadline = deadline
		stop := l.Stop.Load() || deadline >= l.HardStop
		measured := deadline >= l.MeasureFrom && deadline < l.MeasureUntil
		// The deadlines this Wait skipped, deadline − missed×period up to
		// deadline − period, counted only where they fall in the window.
		winMissed := DeadlinesIn(deadline-int64(missed)*period, missed, period, l.MeasureFrom, l.MeasureUntil)
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
		// The drift controls, after the drain (never inside its timing)
		// and before anything of the tick is handed over, so they go to
		// the tick's interval and interleaved block.
		if l.Drain != nil {
			l.Drain.ControlTick(t1, deadline+period)
		}
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
			l.MissedTicks += winMissed
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
				Messages: tk.Messages, Calls: tk.Calls, EAGAIN: tk.EAGAIN, Missed: uint32(winMissed),
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
			l.TailTicks++
			l.TailMessages += uint64(l.Probe.LastTick().Messages)
			// The first tick after the window may have skipped across its
			// end: those deadlines were the window's (and, interleaved, its
			// last block's; the tail's block, of that block's variant,
			// carries them into the variant's Tally when it closes).
			l.MissedTicks += winMissed
			l.MissedAtEnd += winMissed
			if il != nil && winMissed > 0 && il.Closed > 0 {
				il.Blocks[il.Closed-1].MissedTicks += winMissed
			}
		} else {
			l.WarmupTicks++
		}
		if stop {
			l.end()
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

// end closes the loop's accounting when Run returns: the window's
// deadlines that had passed by now but that no Wait returned or skipped
// (a catch-up reader behind, a loop stopped before it got to them) are
// missed at the end (MissedAtEnd, in MissedTicks too). Deadlines after
// now never came: a trial stopped early has a shorter window.
//
//go:nosplit
func (l *Loop) end() {
	now := rt.Monotonic()
	l.EndNs = now
	period := l.Ticker.Period()
	next := l.Ticker.NextDeadline()
	if next > now {
		return
	}
	n := uint64((now-next)/period) + 1 // deadlines next, next+period, … ≤ now
	left := DeadlinesIn(next, n, period, l.MeasureFrom, l.MeasureUntil)
	l.MissedTicks += left
	l.MissedAtEnd += left
}

// DeadlinesIn counts the n deadlines first, first+period, …,
// first+(n−1)·period (ns, period > 0) that lie in [from, until). Pure
// arithmetic, O(1).
//
//go:nosplit
func DeadlinesIn(first int64, n uint64, period, from, until int64) uint64 {
	if n == 0 || period <= 0 || from >= until {
		return 0
	}
	last := first + int64(n-1)*period
	if last < from || first >= until {
		return 0
	}
	var lo, hi int64 // indexes of the first and last deadline inside
	if first < from {
		lo = (from - first + period - 1) / period
	}
	hi = int64(n - 1)
	if last >= until {
		hi = (until - 1 - first) / period
	}
	if hi < lo {
		return 0
	}
	return uint64(hi - lo + 1)
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
