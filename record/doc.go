// Package record holds what a real-time thread records into, and nothing
// that could stop it:
//
//   - Linear, the seed's fixed-width bucket histogram (per-call cost in
//     clock ticks, with an overflow bucket), and its Snapshot as stored in
//     results;
//   - HDR, a log-linear histogram with HdrHistogram's layout (3 significant
//     digits), convertible to github.com/HdrHistogram/hdrhistogram-go off
//     the real-time thread;
//   - Set, one reader's recorders indexed by Class (record.CallAll,
//     CallEAGAIN, WakeupLatency, …): one table lists every class and which
//     recorders it has, and Reset, Merge and Snapshot are written once; with
//     AddEvents it also holds per-call event counts (hardware counters) by
//     per-call class;
//   - Ring, a single-producer single-consumer ring (the per-wakeup log,
//     Wakeup records) and Work, a noise source's achieved work.
//
// Constructors write every page of their buffers once, so that recording
// never takes a first-touch page fault under mlockall(MCL_ONFAULT).
// Every Record and Put is //go:nosplit, allocates nothing and takes no lock
// (testing.AllocsPerRun tests, and internal/archtest's disassembly of the
// reader loop). Single writer: read a recorder only after its writer
// stopped or handed it over. The package knows nothing of the kernel: no
// os, no x/sys/unix; stdlib and hdrhistogram-go only.
package record
