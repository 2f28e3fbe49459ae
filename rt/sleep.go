package rt

import "golang.org/x/sys/unix"

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
