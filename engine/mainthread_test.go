package engine

import "runtime"

// init keeps the test binary's main goroutine on the process's main thread,
// as cmd/rtload does. Go never ends the main thread: a reader goroutine
// (rt.Start) that ran on it and exited would leave it parked, still named
// rtl-rd/<name> and still SCHED_FIFO, for the rest of the package's tests
// (TestThreadsNamedAndConfined found such a thread, tid = pid, confined to
// the housekeeping CPU by a later trial).
func init() { runtime.LockOSThread() }
