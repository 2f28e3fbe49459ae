package rt

import (
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultMaxBacklog is a catch-up Ticker's backlog limit unless
// SetMaxBacklog says otherwise: with more than 100 further ticks already
// due, it stops catching up and skips them.
const DefaultMaxBacklog = 100

// Ticker wakes a thread on absolute CLOCK_MONOTONIC deadlines
// start + k*period, like cyclictest's absolute mode (-a -n). Not safe for
// concurrent use: one Ticker per real-time thread; read Stats from that
// thread or after it ended.
//
// An overrun is a Wait entered a period or more after its tick's
// deadline: the tick after it was already due too (the previous tick's
// work, or the sleep's wakeup, ran into the next period). In skip mode an
// overrun jumps to the latest deadline already due, and the ticks jumped
// over are missed: never run. In catch-up mode the overdue ticks run back
// to back, each still an overrun, until more than MaxBacklog further ticks
// are due at once; then it skips like skip mode (a backlog skip) and those
// ticks are missed.
type Ticker struct {
	start, period int64 // ns
	k             uint64
	catchUp       bool
	overran       bool
	maxBacklog    uint64
	stats         TickerStats
	ts            unix.Timespec
	// nsPerTick converts a TSC interval to ns for the wake stamp (see
	// Wait); 0 when the TSC is not usable for it.
	nsPerTick float64
	// maxPairTicks is maxPairNs in TSC ticks: the widest TSC read around
	// Wait's clock read that is taken as one instant.
	maxPairTicks uint64
	// fenced: the TSC is read LFENCE;RDTSC;LFENCE (CPUID offers no
	// RDTSCP), in the sleep's stamp (sleepWakeFenced) and the pair.
	fenced bool
}

// TickerStats counts what Wait did since NewTicker.
type TickerStats struct {
	// Ticks is how many ticks Wait returned (ran).
	Ticks uint64
	// Overruns is how many Waits were entered a period or more after
	// their tick's deadline (see Ticker), in either mode.
	Overruns uint64
	// MissedTicks is how many ticks were skipped and never run: the sum of
	// every missed Wait returned. Ticks + MissedTicks is the number of
	// deadlines passed.
	MissedTicks uint64
	// BacklogSkips is how many catch-up overruns had more than MaxBacklog
	// further ticks due and skipped them (0 in skip mode).
	BacklogSkips uint64
	// PeakBacklog is the largest number of further ticks found due at once
	// when an overrun began its tick (both modes).
	PeakBacklog uint64
}

// NewTicker returns a ticker whose tick 0 is due at startNs (CLOCK_MONOTONIC
// ns) and whose ticks are periodNs apart (> 0). With catchUp, missed ticks
// run back to back up to DefaultMaxBacklog (see SetMaxBacklog); without
// it, when Wait is called a period or more after the next deadline it
// skips to the latest deadline already due (which then runs at once, less
// than a period late) and reports how many ticks it skipped.
//
// On amd64 with an invariant TSC, Wait stamps the wake time with RDTSCP
// (LFENCE;RDTSC;LFENCE where CPUID offers no RDTSCP) right after the
// system call returns (see Wait); the TSC's rate comes from the process's
// one TSC calibration (the first NewTicker or NewClock(ClockTSC) runs it:
// 100 ms).
func NewTicker(startNs, periodNs int64, catchUp bool) *Ticker {
	w := wakeTSC()
	t := &Ticker{start: startNs, period: periodNs, catchUp: catchUp, maxBacklog: DefaultMaxBacklog, nsPerTick: w.nsPerTick, fenced: w.fenced}
	if t.nsPerTick > 0 {
		t.maxPairTicks = uint64(maxPairNs / t.nsPerTick)
	}
	return t
}

// wakeStamp is how Wait stamps the wake time: ns per TSC tick, 0 where
// there is no invariant TSC (or not on amd64), and the read (fenced:
// LFENCE;RDTSC;LFENCE).
type wakeStamp struct {
	nsPerTick float64
	fenced    bool
}

// wakeTSC is the process's wakeStamp, decided once.
var wakeTSC = sync.OnceValue(func() wakeStamp {
	if !haveWakeTSC {
		return wakeStamp{}
	}
	fenced, err := readTSCFacts().support()
	if err != nil {
		return wakeStamp{}
	}
	hz, _ := tscRate()
	return wakeStamp{nsPerTick: 1e9 / hz, fenced: fenced}
})

// StampsWake reports whether Wait takes the wake time in the sleep's own
// assembly (RDTSCP, or LFENCE;RDTSC;LFENCE, right after SYSCALL) rather than with the vDSO clock
// after the Go system call path returns.
func (t *Ticker) StampsWake() bool { return t.nsPerTick > 0 }

// SetMaxBacklog sets how many further overdue ticks a catch-up ticker
// runs back to back before it skips them instead (0: skip at once, as in
// skip mode). Call before the first Wait; no effect in skip mode.
func (t *Ticker) SetMaxBacklog(n uint64) { t.maxBacklog = n }

// CatchUp reports whether the ticker runs overdue ticks back to back
// (NewTicker's catchUp): a Wait returning missed > 0 is then a backlog
// skip.
//
//go:nosplit
func (t *Ticker) CatchUp() bool { return t.catchUp }

// Deadline returns the absolute deadline of tick k in ns.
func (t *Ticker) Deadline(k uint64) int64 { return t.start + int64(k)*t.period }

// Period returns the ticks' period in ns.
//
//go:nosplit
func (t *Ticker) Period() int64 { return t.period }

// NextDeadline returns the deadline (CLOCK_MONOTONIC ns) of the tick the
// next Wait would wait for, unless that Wait skips: the first deadline no
// Wait has returned or skipped yet.
//
//go:nosplit
func (t *Ticker) NextDeadline() int64 { return t.start + int64(t.k)*t.period }

// Stats returns the counts so far (see TickerStats).
func (t *Ticker) Stats() TickerStats { return t.stats }

// Overran reports whether the tick the last Wait returned was an overrun
// (entered a period or more after its deadline; see Ticker). In skip mode
// it is true exactly when that Wait's missed > 0; in catch-up mode it is
// also true for every late tick run back to back.
//
//go:nosplit
func (t *Ticker) Overran() bool { return t.overran }

// Wait blocks in clock_nanosleep(2) (TIMER_ABSTIME) until the next tick's
// deadline and returns its number k, the deadline, and the wakeup latency
// (time of wake − deadline, in ns, ≥ 0 in practice). missed counts ticks
// skipped before this one (see Ticker: an overrun in skip mode, a backlog
// skip in catch-up mode); Overran says whether this tick was an overrun.
// EINTR is retried: the deadline is absolute. No allocation and no
// preemption point. The sleep is a raw system call: the thread keeps its
// P, so waking up involves no Go scheduler at all. (Going through the
// runtime's syscall entry instead let the P be taken while asleep, and
// reacquiring it on wake added milliseconds to some wakeups on this
// project's test machine: measured A/B, 3 runs each, max wakeup latency
// 1.4–6.2 ms against 29–369 µs.)
//
// The time of wake is taken as early as user space can: where StampsWake,
// the sleep is one assembly routine that reads the TSC with RDTSCP as the
// instruction after SYSCALL, and latency = nanotime() − (TSC now − TSC at
// wake) × ns per tick − deadline (see wakeLatency), with TSC now read just
// before nanotime() and checked by a read just after it (at most 1 µs
// apart); elsewhere it is
// nanotime() after the call returns. (The Go system call return path, cold
// after the sleep, put 4–6 µs at p50 between the kernel's return and that
// nanotime; bench/GAPS.md.)
//
//go:nosplit
func (t *Ticker) Wait() (k uint64, deadline, latency int64, missed uint64, errno unix.Errno) {
	k, deadline, missed = t.advance(nanotime())
	t.ts.Sec = deadline / 1e9
	t.ts.Nsec = deadline % 1e9
	var e uintptr
	var wake uint64
	for {
		if t.fenced {
			e, wake = sleepWakeFenced(&t.ts)
		} else {
			e, wake = sleepWake(&t.ts)
		}
		if unix.Errno(e) != unix.EINTR {
			break
		}
	}
	errno = unix.Errno(e)
	if t.nsPerTick == 0 {
		latency = nanotime() - deadline
		return
	}
	// The TSC is read before the clock, so a stall between the two reads
	// (an interrupt, steal, a preemption) can only make the wake later,
	// never earlier than it was; a second TSC read after the clock bounds
	// that stall, and a pair wider than maxPairNs is read again, up to
	// three times. (Read the other way round, a 97 µs stall after the clock
	// read under load gave a wake 97 µs before its deadline: TSC now was
	// late, so the interval taken off was too long.)
	var now int64
	var tscNow uint64
	for i := 0; i < 3; i++ {
		tscNow = readTSC(t.fenced)
		now = nanotime()
		if readTSC(t.fenced)-tscNow <= t.maxPairTicks {
			break
		}
	}
	latency = wakeLatency(now, deadline, tscNow, wake, t.nsPerTick)
	return
}

// maxPairNs bounds the interval between the TSC read and the clock read
// that Wait pairs (see Wait): a vDSO clock read takes tens of ns, so a
// pair wider than 1 µs had a stall in it.
const maxPairNs = 1000

// maxWakeGap bounds the TSC interval wakeLatency converts (1 ms of ticks
// at 10 GHz): a larger one (or a negative one) is not a wake stamp of this
// Wait, and the latency falls back to now − deadline.
const maxWakeGap = 10_000_000

// wakeLatency is the wakeup latency in ns from a CLOCK_MONOTONIC reading
// now taken together with TSC reading tscNow, the TSC at wake, and the
// TSC's ns per tick: now − (tscNow − tscWake) × nsPerTick − deadline. The
// interval converted is microseconds long, so an error of the calibrated
// rate weighs nothing (1e-4 of 5 µs is 0.5 ns). Pure arithmetic.
//
//go:nosplit
func wakeLatency(now, deadline int64, tscNow, tscWake uint64, nsPerTick float64) int64 {
	gap := tscNow - tscWake
	if tscWake == 0 || tscNow < tscWake || gap > maxWakeGap {
		return now - deadline
	}
	return now - int64(float64(gap)*nsPerTick) - deadline
}

// advance picks the tick to wait for when Wait is entered at now
// (CLOCK_MONOTONIC ns) and counts it: pure arithmetic, no clock read.
//
//go:nosplit
func (t *Ticker) advance(now int64) (k uint64, deadline int64, missed uint64) {
	deadline = t.start + int64(t.k)*t.period
	t.overran = now-deadline >= t.period
	if t.overran {
		t.stats.Overruns++
		due := uint64((now - deadline) / t.period) // further ticks already due
		if due > t.stats.PeakBacklog {
			t.stats.PeakBacklog = due
		}
		if !t.catchUp || due > t.maxBacklog {
			if t.catchUp {
				t.stats.BacklogSkips++
			}
			t.k += due
			missed = due
			t.stats.MissedTicks += due
			deadline = t.start + int64(t.k)*t.period
		}
	}
	k = t.k
	t.k++
	t.stats.Ticks++
	return
}
