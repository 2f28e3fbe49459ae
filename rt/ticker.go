package rt

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ticker wakes a thread on absolute CLOCK_MONOTONIC deadlines
// start + k*period, like cyclictest's absolute mode (-a -n). Not safe for
// concurrent use: one Ticker per real-time thread.
type Ticker struct {
	start, period int64 // ns
	k             uint64
	catchUp       bool
	ts            unix.Timespec
}

// NewTicker returns a ticker whose tick 0 is due at startNs (CLOCK_MONOTONIC
// ns). With catchUp, missed ticks run back to back; without it, when Wait
// is called a period or more after the next deadline it skips to the latest
// deadline already due (which then runs at once, less than a period late)
// and reports how many ticks it skipped.
func NewTicker(startNs, periodNs int64, catchUp bool) *Ticker {
	return &Ticker{start: startNs, period: periodNs, catchUp: catchUp}
}

// Deadline returns the absolute deadline of tick k in ns.
func (t *Ticker) Deadline(k uint64) int64 { return t.start + int64(k)*t.period }

// Wait blocks in clock_nanosleep(2) (TIMER_ABSTIME) until the next tick's
// deadline and returns its number k, the deadline, and the wakeup latency
// (time of wake − deadline, in ns, ≥ 0 in practice). missed counts ticks
// whose deadline had already passed by more than a period before Wait was
// called (an overrun), skipped unless catchUp. EINTR is retried: the
// deadline is absolute. No allocation and no preemption point. The sleep
// is a raw system call: the thread keeps its P, so waking up involves no
// Go scheduler at all. (Going through the runtime's syscall entry instead
// let the P be taken while asleep, and reacquiring it on wake added
// milliseconds to some wakeups on this project's test machine: measured
// A/B, 3 runs each, max wakeup latency 1.4–6.2 ms against 29–369 µs.)
//
//go:nosplit
func (t *Ticker) Wait() (k uint64, deadline, latency int64, missed uint64, errno unix.Errno) {
	now := nanotime()
	deadline = t.start + int64(t.k)*t.period
	if !t.catchUp && now-deadline >= t.period {
		skip := uint64((now - deadline) / t.period)
		t.k += skip
		missed = skip
		deadline = t.start + int64(t.k)*t.period
	}
	k = t.k
	t.k++
	t.ts.Sec = deadline / 1e9
	t.ts.Nsec = deadline % 1e9
	for {
		_, _, errno = unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
			unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&t.ts)), 0, 0, 0)
		if errno != unix.EINTR {
			break
		}
	}
	latency = nanotime() - deadline
	return
}
