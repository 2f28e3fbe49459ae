package rt

import _ "unsafe" // for go:linkname

// nanotime is the runtime's CLOCK_MONOTONIC read through the vDSO, in ns.
// It allocates nothing and has no preemption point.
//
//go:linkname nanotime runtime.nanotime
//go:noescape
func nanotime() int64

// Monotonic returns CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall).
//
//go:nosplit
func Monotonic() int64 { return nanotime() }
