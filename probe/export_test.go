package probe

import "golang.org/x/sys/unix"

// Classify exposes classify to the benchmarks.
func (d *Drain) Classify(pos uint32, dt uint64, errno unix.Errno, got bool) {
	d.classify(pos, dt, errno, got)
}

// ThreadSwitches exposes threadSwitches to tests and benchmarks.
func ThreadSwitches(ru *unix.Rusage) (vol, invol uint64, errno unix.Errno) { return threadSwitches(ru) }
