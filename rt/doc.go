// Package rt owns the real-time thread and its clocks: Start locks a
// goroutine to an OS thread, pins it (sched_setaffinity), sets its policy and
// priority (sched_setattr), locks memory (mlockall) and reads every setting
// back from the kernel; Ticker waits on absolute CLOCK_MONOTONIC deadlines
// with clock_nanosleep(TIMER_ABSTIME); Clock reads the per-call counter (TSC
// through rdtscp on amd64, calibrated against CLOCK_MONOTONIC, or
// CLOCK_MONOTONIC itself).
//
// The measured path (Ticker.Wait, Clock.Now) makes raw system calls only,
// allocates nothing and has no preemption points (//go:nosplit): the Go
// runtime cannot deschedule the thread inside a tick.
package rt
