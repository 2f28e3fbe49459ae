// Package probe is the measured real-time loop and nothing else. A Probe's
// Step is one unit of measured work: Drain reads every socket until EAGAIN,
// timing each recv call with the rt.Clock into a record.Set (one pointer,
// recorders indexed by record.Class). Its measured path is one loop per
// clock source, with the clock read at the call site, and stores one raw
// sample per call; the histograms, the class and position splits and the
// per-call hardware counters (rt.Counters read around each call, recorded
// per call class) are derived from the samples after the tick's calls.
// After each drain a Drain with controls times the drift controls
// (ControlTick, controls.go): K null system calls (getppid) and K runs of
// a fixed user-space loop, each timed like a recv call, so that a verdict
// can see the machine's own drift in the same ticks; K = 64 of each costs
// about 31 µs a tick here (0.3% of a 10 ms period; BenchmarkControls).
// Loop runs Steps on absolute ticks of
// a real-time thread, records each tick's wakeup latency and drain time
// into the same Set, logs each wakeup into a record.Ring that a
// non-real-time goroutine writes out, and with intervals swaps Sets with
// that goroutine through a Handoff (two atomic pointers). Counters reads the
// reader thread's perf_event counters for the writer, off the loop.
//
// Everything called from Loop.Run is //go:nosplit, allocates nothing, takes
// no lock, uses no channel and has no preemption point except SafePoint:
// tests prove the allocations with testing.AllocsPerRun, and
// internal/archtest disassembles the binary to prove the rest.
//
// Ordinary measured or background work that is not this loop (hackbench
// messaging, fstime file writes) lives in package workload.
//
// Imports rt, record, net/udp, x/sys/unix and the standard library only
// (net/tap is allowed too, for a tap-send step; internal/archtest checks).
package probe
