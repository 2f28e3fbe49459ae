package noise

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// syscallWorker is the syscall kind: a tight loop of one cheap raw
// syscall (RawSyscall: no entersyscall, so only the kernel entry and exit
// cost), counted in syscalls.
type syscallWorker struct {
	nr uintptr
	ts unix.Timespec // clock_gettime's result
}

// syscallsPerStep bounds one step (≈ 0.1–1 µs a call).
const syscallsPerStep = 256

func newSyscallWorker(c Syscall) *syscallWorker {
	w := &syscallWorker{}
	switch c {
	case SyscallClockGettime:
		// The syscall itself, not the vDSO: the kernel entry is the noise.
		w.nr = unix.SYS_CLOCK_GETTIME
	case SyscallSchedYield:
		w.nr = unix.SYS_SCHED_YIELD
	default: // SyscallGetppid (Validate refuses any other)
		w.nr = unix.SYS_GETPPID
	}
	return w
}

func (*syscallWorker) phase(int64)        {}
func (*syscallWorker) finish(*slot) error { return nil }

func (w *syscallWorker) step(s *slot, _ int64) unix.Errno {
	if w.nr == unix.SYS_CLOCK_GETTIME {
		for range syscallsPerStep {
			if _, _, e := unix.RawSyscall(w.nr, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&w.ts)), 0); e != 0 {
				return e
			}
		}
	} else {
		for range syscallsPerStep {
			if _, _, e := unix.RawSyscall(w.nr, 0, 0, 0); e != 0 {
				return e
			}
		}
	}
	s.units.Add(syscallsPerStep)
	return 0
}
