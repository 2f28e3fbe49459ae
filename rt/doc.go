// Package rt owns the real-time thread and its clocks: Start locks a
// goroutine to an OS thread, pins it (sched_setaffinity), sets its policy and
// priority (sched_setattr), locks memory (mlockall) and reads every setting
// back from the kernel; Ticker waits on absolute CLOCK_MONOTONIC deadlines
// with clock_nanosleep(TIMER_ABSTIME); Clock reads the per-call counter:
// the thread's core cycles (PERF_COUNT_HW_CPU_CYCLES, kernel+user, read with
// rdpmc from the perf event's user page), the TSC through rdtscp on amd64
// (calibrated against CLOCK_MONOTONIC; TSC ticks are not core cycles), or
// CLOCK_MONOTONIC itself. Counters reads further hardware events
// (instructions, cache-misses, branch-misses, …) per call the same way.
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
// A perf counter counts one thread and only that thread can read it with
// rdpmc, so the cycles Clock and Counters are opened on the timing thread
// itself, after it is pinned and before its measured window:
//
//	clk := runClock.ForThread()   // before the thread starts
//	ctr, err := rt.NewCounters(rt.CountersConfig{Events: names})
//	// on the locked, pinned thread:
//	err = clk.Bind()              // refusal says what to change
//	err = ctr.Open()
//	ctr.ReadInto(before); t0 := clk.Now(); call(); t1 := clk.Now(); ctr.ReadInto(after)
//	// after the window: clk.Status(), ctr.Status() (mark the trial when a Reason is set); Close both
//
// A timing loop that must not pay Now's switch on the clock kind reads the
// clock its Source names directly: TSC, (*Clock).Cycles or Monotonic
// (probe.Drain has one loop per Source). Ticker.Wait stamps each wake with
// RDTSCP in the sleep's own assembly where the TSC is invariant.
// FakeCounters and FakeCyclesClock are test hooks for machines without a
// PMU.
//
// The measured path (Ticker.Wait, Clock.Now, Counters.ReadInto) makes raw
// system calls only, allocates nothing and has no preemption points
// (//go:nosplit): the Go runtime cannot deschedule the thread inside a tick.
package rt
