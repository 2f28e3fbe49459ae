package probe

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadSwitches wraps getrusage(2) with RUSAGE_THREAD: the calling
// thread's voluntary and involuntary context switches so far, read into
// ru (caller-owned, so nothing escapes). A raw system call: no allocation,
// no preemption point. Loop.Run calls it once per tick, after the drain,
// never around a timed call.
//
//go:nosplit
func threadSwitches(ru *unix.Rusage) (vol, invol uint64, errno unix.Errno) {
	_, _, e := unix.RawSyscall(unix.SYS_GETRUSAGE, unix.RUSAGE_THREAD, uintptr(unsafe.Pointer(ru)), 0)
	return uint64(ru.Nvcsw), uint64(ru.Nivcsw), e
}
