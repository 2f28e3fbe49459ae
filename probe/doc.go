// Package probe holds the measured workloads. A Probe's Step is one unit of
// measured work (Drain: every socket read until EAGAIN, each recv call timed
// with the rt.Clock into record.Linear histograms), and Loop runs Steps on
// absolute ticks of a real-time thread, logging each wakeup into a ring that
// a non-real-time goroutine writes out.
//
// Everything called from Loop.Run allocates nothing, takes no lock, uses no
// channel and has no preemption point; tests prove the first with
// testing.AllocsPerRun.
package probe
