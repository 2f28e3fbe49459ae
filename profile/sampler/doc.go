// Package sampler samples one thread's call chains with perf_event_open(2):
// PERF_COUNT_SW_CPU_CLOCK by default (PERF_COUNT_HW_CPU_CYCLES where a PMU
// exists and it is asked for, or with EventAuto), each sample carrying IP,
// TID, TIME (CLOCK_MONOTONIC), CPU, PERIOD and the kernel and user call
// chain, written by the kernel into an mmap ring buffer.
//
// The sampled thread (rtload's real-time reader) runs no sampler code: the
// kernel takes each sample in its timer interrupt, and the caller's own
// goroutine empties the ring with Drain, decoding records with
// profile.Decode and aggregating them by call chain with profile.Builder.
// Lost-sample and throttle records are counted, never hidden.
//
// The package is the kernel-facing half of profiling; the pure half
// (decoding, symbolisation, phases, pprof and folded writers, attribution)
// is package profile, which readers of results import without touching
// the kernel. It imports golang.org/x/sys/unix, rt (perf errors) and
// profile.
package sampler
