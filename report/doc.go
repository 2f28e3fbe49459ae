// Package report writes and reads rtload results directories and renders
// them for a terminal.
//
// A results directory is the contract between a run and every report, as
// vegeta's results file is between attack and report:
//
//	summary.json            one Summary (WriteSummary, ReadSummary), written atomically
//	wakeups-<variant>.csv   one row per real-time wakeup (WakeupCSV, ReadWakeupCSV)
//
// Every terminal view is rebuilt from those files alone. Table prints
// per-call histograms in the shape of seed 000_b19799733a2511c2 (David
// Laight's recvfrom/recvmsg cycle table: 128-wide buckets, an overflow row
// "8256+", a Total row), one column per variant or per variant/reader.
// Report prints the whole end-of-run summary: clock, banners, the three
// per-call tables (all calls, data calls, EAGAIN calls), per-column stats,
// wakeup latency, message accounting, noise work and GC checks.
//
// Units: per-call histograms are in clock ticks (TSC ticks are not core
// cycles; ClockInfo says what one tick is), latencies in nanoseconds,
// printed in microseconds.
//
// The package imports only the standard library, record and
// hdrhistogram-go: it never touches the kernel, so reports can be rebuilt
// anywhere.
package report
