package rt

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SleepUntil blocks in clock_nanosleep(2) (CLOCK_MONOTONIC, TIMER_ABSTIME)
// until deadlineNs, a CLOCK_MONOTONIC time in ns as Monotonic returns it.
// EINTR (a Go preemption signal, for one) is retried: the deadline is
// absolute, so a retry never sleeps longer. A deadline already past
// returns at once. It returns 0, or the errno of clock_nanosleep (EINVAL
// for a negative deadline). It does not allocate.
//
// It is the sleep of ordinary threads (engine's senders, noise's workers)
// and goes through the Go runtime's system-call entry: the thread's P is
// released while it sleeps, so a stop-the-world (a soak run's garbage
// collection) never waits for a sleeper, and a real-time reader parked at
// its SafePoint for that collection is not held up by one. The real-time
// loop itself sleeps in Ticker.Wait instead, a raw system call with no
// preemption point, which keeps its P.
func SleepUntil(deadlineNs int64) unix.Errno {
	ts := unix.Timespec{Sec: deadlineNs / 1e9, Nsec: deadlineNs % 1e9}
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err != unix.EINTR {
			errno, _ := err.(unix.Errno) // nil or an Errno: x/sys/unix returns nothing else here
			return errno
		}
	}
}

// SleepUntilRaw is SleepUntil as a raw system call: the Go runtime's
// system-call entry and exit never run, so the thread keeps its P while it
// sleeps (budget one P for it) and a stop-the-world waits for it until the
// sleep ends and it reaches a preemption point. A thread at SCHED_FIFO or
// SCHED_RR that sleeps (a real-time sender) needs it: since Go 1.26 the
// runtime's sysmon, on every pass, and runtime/metrics reads mark each
// goroutine in a system call so that it cannot leave the call while they
// look at its P (setBlockOnExitSyscall). When a real-time thread's sleep
// ends while a SCHED_OTHER runtime thread on its CPU holds that mark, the
// real-time thread spins in exitsyscall (casgstatus, procyield and
// sched_yield, which yields to no lower priority) and the holder never
// runs until RT throttling lets it: a SCHED_FIFO 70 sender sent nothing for
// 0.6–0.9 s at a time (perf: 17% of its samples in runtime.procyieldAsm
// under runtime.exitsyscall of this sleep; send lag p99 918–931 ms in 3
// runs of 2 s). Same errors as SleepUntil; it does not allocate.
//
//go:nosplit
func SleepUntilRaw(deadlineNs int64) unix.Errno {
	ts := unix.Timespec{Sec: deadlineNs / 1e9, Nsec: deadlineNs % 1e9}
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != unix.EINTR {
			return e
		}
	}
}
