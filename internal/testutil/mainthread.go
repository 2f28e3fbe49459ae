package testutil

import "runtime"

// init keeps every test binary's main goroutine on the process's main
// thread, as cmd/rtload does (its main.go). Go never ends the main
// thread: a goroutine locked to its thread (rt.Start's readers, workload's
// messaging workers) that ran on it and exited would leave it parked,
// still named for that goroutine and with its policy and affinity, for
// the rest of the package's tests. It was seen twice: engine's
// TestThreadsNamedAndConfined found a reader thread with tid = pid, and
// workload's TestMessagingCloseNoLeak found 1 of its 12 workers' threads
// alive after Close (make test's real-time stage under load). Every
// package whose tests import testutil gets it here.
func init() { runtime.LockOSThread() }
