package engine

import "golang.org/x/sys/unix"

func unixTimespec(ns int64) unix.Timespec { return unix.NsecToTimespec(ns) }

// sleepUntil sleeps to an absolute CLOCK_MONOTONIC time (EINTR retried).
func sleepUntil(ts *unix.Timespec) {
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, ts, nil) == unix.EINTR {
	}
}
