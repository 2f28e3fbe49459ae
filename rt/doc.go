// Package rt owns the real-time thread and its clocks: Start locks a
// goroutine to an OS thread, pins it (sched_setaffinity), sets its policy and
// priority (sched_setattr), locks memory (mlockall) and reads every setting
// back from the kernel; Ticker waits on absolute CLOCK_MONOTONIC deadlines
// with clock_nanosleep(TIMER_ABSTIME); Clock reads the per-call counter (TSC
// through rdtscp on amd64, calibrated against CLOCK_MONOTONIC, or
// CLOCK_MONOTONIC itself).
//
// Around the real-time threads: Sched.Name names each thread (prctl
// PR_SET_NAME: "rtl-rd/<reader>", "rtl-tx/<endpoint>", "rtl-nz/<kind>.<i>",
// "rtl-writer"), ConfineHousekeeping keeps every other thread of the
// process (the Go runtime's, main, the writer, the exporter) on the
// housekeeping CPUs and re-applies it as threads appear, and Threads lists
// every thread's name, policy, priority, nice and CPU mask as the kernel
// holds them, with ReaderCPUWarnings for those that may run on a reader's
// CPU.
//
// The measured path (Ticker.Wait, Clock.Now) makes raw system calls only,
// allocates nothing and has no preemption points (//go:nosplit): the Go
// runtime cannot deschedule the thread inside a tick.
package rt
