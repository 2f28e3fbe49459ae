//go:build !amd64

package rt

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveWakeTSC is false off amd64: there is no RDTSCP, so Wait takes the
// wake time with the vDSO clock after the system call returns.
const haveWakeTSC = false

// sleepWake calls clock_nanosleep(2) (CLOCK_MONOTONIC, TIMER_ABSTIME) until
// ts; tsc is always 0 (no wake stamp off amd64).
//
//go:nosplit
func sleepWake(ts *unix.Timespec) (errno uintptr, tsc uint64) {
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC,
		unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	return uintptr(e), 0
}

// sleepWakeFenced is sleepWake off amd64 (never a wake stamp).
//
//go:nosplit
func sleepWakeFenced(ts *unix.Timespec) (errno uintptr, tsc uint64) { return sleepWake(ts) }
