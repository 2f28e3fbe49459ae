package seccomp

import "runtime"

// init keeps the test binary's main goroutine on the process's main
// thread, as cmd/rtload does: a filtered goroutine that ran on the main
// thread and exited would leave it parked with the filter on (Go never
// ends the main thread), and TestInstall reads the main thread as one
// the filter must not reach.
func init() { runtime.LockOSThread() }
