package probe

import (
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/rt"
)

// Drift controls (issue 31). After each tick's drain a Drain with
// DrainConfig.Controls = K > 0 times K null system calls (getppid(2),
// through unix.RawSyscall as the receivers make their recv calls, each
// bracketed by the same clock reads at the call site as a recv call) and
// then K runs of a fixed user-space loop (UserLoopIters dependent
// multiply-adds), each call timed on its own. What moves the machine's
// speed (another job's cache and memory traffic, the host's frequency, a
// neighbour on the hypervisor) moves them with the recv calls; a change of
// the code or kernel under test moves the recv calls alone, or (a change
// of the system-call entry) the null syscall and not the user loop.
//
// They run after the drain so they never delay a recv call's timing, and
// outside DrainTime. Measured ticks record each call into record.NullSyscall
// and record.UserLoop and their sums into Counts (so into every interval's
// and interleaved block's tally); warm-up and tail ticks run them
// unrecorded, so every tick has the same shape.
//
// A tick runs no controls when the next deadline has passed, or is nearer
// than twice what the last tick's controls took: they would make the next
// tick late, and a late tick is the workload's measurement (its wakeup
// latency, the calls' cache state), which the controls must never
// disturb. Such a measured tick counts in Counts.ControlSkips; its
// controls are lost, not postponed. A skip forgets the last duration, so
// one control run stretched by a preemption skips at most the next tick's.
//
// Cost, measured on the 2-vCPU EPYC VM of bench/DRIFT.md (BenchmarkControls,
// medians over 3 × 3000 ticks on CPU 1 under a load average of 19): a
// null syscall 202 ns and a user loop 218 ns with their clock reads, so
// K = 64 (the scenario default) takes 30.9 µs a tick with the recording:
// 0.31% of a 10 ms tick. (The estimate, ~1 µs a null syscall and
// ~130 µs for 64 of each, was 5× this machine's measured cost.)

// UserLoopIters is the user-space control's fixed work per call: this many
// dependent 64-bit multiply-adds (an LCG step, userLoop), sized to cost
// about what the null syscall costs here (218 ns against 202 ns on the
// VM of bench/DRIFT.md, ~1.2 ns a step). It is part of the control's
// identity: results record it (results.Controls.UserLoopIters), and two
// runs compare their user loops only when they ran the same count.
const UserLoopIters = 180

// MaxControls bounds the controls per tick (scenario readers[].controls):
// the sample buffers are preallocated.
const MaxControls = 4096

// The LCG of the user loop (Knuth's MMIX constants): each step depends on
// the last, so the chain can be neither removed nor hoisted, and its
// latency (a multiply and an add) is the loop's cost.
const (
	lcgMul = 6364136223846793005
	lcgAdd = 1442695040888963407
)

// userLoop runs the user-space control's fixed chain from x and returns
// its end (the caller keeps it, so the chain's result is used). No memory
// access, no call, no system call.
//
//go:noinline
//go:nosplit
func userLoop(x uint64) uint64 {
	for i := 0; i < UserLoopIters; i++ {
		x = x*lcgMul + lcgAdd
	}
	return x
}

// nullSyscall makes the null system call: getppid(2), which takes no lock
// and touches nothing but the task's parent pointer, through the raw
// system-call path of the recv calls (no runtime entersyscall).
//
//go:nosplit
func nullSyscall() { unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0) }

// ControlTick runs the tick's drift controls (see above) when the drain
// has them: now is CLOCK_MONOTONIC after the drain, next the next
// deadline (ns). Loop.Run calls it after each Step.
//
//go:nosplit
func (d *Drain) ControlTick(now, next int64) {
	if len(d.ctlNull) == 0 {
		return
	}
	if now+2*d.ctlNs >= next {
		d.ctlNs = 0
		if d.Measure {
			d.c.ControlSkips++
		}
		return
	}
	switch d.src {
	case rt.SourceTSC:
		d.controlsTSC()
	case rt.SourceTSCFenced:
		d.controlsTSCFenced()
	case rt.SourceCycles:
		d.controlsCycles()
	default:
		d.controlsMonotonic()
	}
	d.extraControls()
	d.ctlNs = rt.Monotonic() - now
	if d.Measure {
		d.flushControls()
		d.flushExtra()
	}
}

// controlsTSC, controlsTSCFenced, controlsCycles and controlsMonotonic
// are the controls' measured path, one per clock source as the drain's
// (the same read as the recv calls', so both are in the same unit): per call the clock,
// the call, the clock, one stored sample. Each control first runs once
// untimed: the first system call after the drain pays for what the
// kernel left pending at its return and whatever state the drain left
// (timed, it cost 1.7× the median at p50 and 14× at p90 of 2000 ticks,
// the rest within 1.1× and 1.3×; it was the null syscall's whole p99 in a
// run), which is not the system-call path's speed the control measures.

//go:nosplit
func (d *Drain) controlsTSC() {
	nullSyscall() // the warm-up: untimed
	for k := range d.ctlNull {
		t0 := rt.TSC()
		nullSyscall()
		t1 := rt.TSC()
		d.ctlNull[k] = uint64(t1 - t0)
	}
	x := userLoop(d.loopX) // the warm-up: untimed
	for k := range d.ctlLoop {
		t0 := rt.TSC()
		x = userLoop(x)
		t1 := rt.TSC()
		d.ctlLoop[k] = uint64(t1 - t0)
	}
	d.loopX = x
}

//go:nosplit
func (d *Drain) controlsTSCFenced() {
	nullSyscall() // the warm-up: untimed
	for k := range d.ctlNull {
		t0 := rt.TSCFenced()
		nullSyscall()
		t1 := rt.TSCFenced()
		d.ctlNull[k] = uint64(t1 - t0)
	}
	x := userLoop(d.loopX) // the warm-up: untimed
	for k := range d.ctlLoop {
		t0 := rt.TSCFenced()
		x = userLoop(x)
		t1 := rt.TSCFenced()
		d.ctlLoop[k] = uint64(t1 - t0)
	}
	d.loopX = x
}

//go:nosplit
func (d *Drain) controlsCycles() {
	nullSyscall() // the warm-up: untimed
	for k := range d.ctlNull {
		t0 := d.clock.Cycles()
		nullSyscall()
		t1 := d.clock.Cycles()
		d.ctlNull[k] = uint64(t1 - t0)
	}
	x := userLoop(d.loopX) // the warm-up: untimed
	for k := range d.ctlLoop {
		t0 := d.clock.Cycles()
		x = userLoop(x)
		t1 := d.clock.Cycles()
		d.ctlLoop[k] = uint64(t1 - t0)
	}
	d.loopX = x
}

//go:nosplit
func (d *Drain) controlsMonotonic() {
	nullSyscall() // the warm-up: untimed
	for k := range d.ctlNull {
		t0 := rt.Monotonic()
		nullSyscall()
		t1 := rt.Monotonic()
		d.ctlNull[k] = uint64(t1 - t0)
	}
	x := userLoop(d.loopX) // the warm-up: untimed
	for k := range d.ctlLoop {
		t0 := rt.Monotonic()
		x = userLoop(x)
		t1 := rt.Monotonic()
		d.ctlLoop[k] = uint64(t1 - t0)
	}
	d.loopX = x
}

// flushControls records the tick's control samples into the Set and the
// counts. After every timed call; no allocation, no system call.
//
//go:nosplit
func (d *Drain) flushControls() {
	for _, v := range d.ctlNull {
		d.set.Record(record.NullSyscall, v)
		d.c.NullSumTicks += v
	}
	d.c.NullCalls += uint64(len(d.ctlNull))
	for _, v := range d.ctlLoop {
		d.set.Record(record.UserLoop, v)
		d.c.LoopSumTicks += v
	}
	d.c.LoopCalls += uint64(len(d.ctlLoop))
}

// Controls is the drift controls per tick the drain times (0: none).
func (d *Drain) Controls() int { return len(d.ctlNull) }
