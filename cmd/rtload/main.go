// Command rtload is a real-time, pinned-thread load generator for Linux.
// See `rtload --help`, docs/cli/ (generated from these commands) and the README.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/session"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// init keeps the main goroutine on the process's main thread. Go never
// ends the main thread: a goroutine that changed its thread's scheduling
// (rt.Start) and exits while on it would leave it parked with that policy
// and affinity. Locked here, no rt.Start goroutine ever runs on it.
func init() { runtime.LockOSThread() }

func main() {
	reexecQuiet()
	err := newRoot().Execute()
	code := exitCode(err)
	if s, ok := session.StoppedBy(err); ok && s.Sig == syscall.SIGQUIT {
		session.DumpGoroutines(os.Stderr)
	}
	os.Exit(code)
}

// reexecQuiet restarts the process once with GODEBUG=asyncpreemptoff=1.
// Without it the Go runtime's sysmon sends SIGURG to a goroutine that looks
// busy for 10 ms, and a real-time reader that sleeps in a raw
// clock_nanosleep looks busy: the signal would interrupt its sleep and its
// recv calls, and the runtime would show up in the histograms as if it were
// the kernel. The setting only disables signal-based preemption; set
// RTLOAD_NO_REEXEC=1 to skip the re-exec.
func reexecQuiet() {
	if err := rt.ReexecQuiet("RTLOAD_NO_REEXEC"); err != nil {
		fmt.Fprintf(os.Stderr, "rtload: warning: re-exec with GODEBUG=asyncpreemptoff=1 failed: %v (runtime preemption signals may show in latencies)\n", err)
	}
}
