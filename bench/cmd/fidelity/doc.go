// Command fidelity measures rtload's per-call cost against the C loop of
// bench/drain450.c inside one process, so that the machine's state is
// shared by both sides of every comparison (issue 24, item 8). It is a
// bench-only cgo binary (`make bench-tools` builds bin/fidelity); nothing
// of it is part of bin/rtload.
//
// One SCHED_FIFO reader thread pinned to one CPU (mlockall,
// /dev/cpu_dma_latency held at 0 as rtload and drain450 -L 0 do) drains the
// same N loopback UDP sockets (net/udp, as rtload opens them), fed by
// drain450's paced sendmmsg sender thread (1 message per socket per
// interval, spread evenly), with optional SCHED_OTHER spin threads. The
// thread runs blocks of T ticks (default 10 × 10 ms = 100 ms) on one
// absolute tick grid, alternating:
//
//   - C: bench/drainloop.h, drain450.c's reader loop compiled in through
//     cgo. One cgo call per block: inside it, the loop sleeps to each
//     deadline with clock_nanosleep(TIMER_ABSTIME) and drains every socket
//     until EAGAIN, each recv call between two inline rdtscp;lfence reads,
//     storing each call's ticks in a preallocated buffer. The cgo
//     transition (and any Go scheduler work it triggers) happens once,
//     before the block's first sleep and after its last drain: never
//     inside a timed call, and never between a wakeup and its drain.
//   - rtload: rtload's own reader loop, probe.Loop running probe.Drain
//     (the real measured path: rt.Ticker's sleep, the drain's TSC loop
//     rt.TSC() around udp.Receiver.Recv, its samples flushed into a
//     record.Set after each tick), one Loop.Run per block (HardStop at the
//     block's last deadline).
//
// Both time with the TSC (RDTSCP;LFENCE). The first S ticks of each block
// (default 1) are run and not recorded, so the switch of side does not
// weigh on the block. Per block, the recorded calls' mean, p50 and p99
// come from record.HDR on both sides (rtload's own histogram; the C
// side's ticks are recorded into one after the block), so each percentile
// has one definition. The order is fidelity's schedule: cycles of
// C_f R_f C_m R_m | R_m C_m R_f C_f, mirrored, with the side and method
// that go first drawn per cycle (seeded).
//
// Output: JSON lines on stdout (bench/fidelity: a header, one line per
// block, an end line), and a summary on stderr: rtload/C per method (p50,
// p99, mean), recvmsg/recvfrom per side, and rtload's gap over the C
// loop's, each with the 95% CI of the paired half-cycle ratios
// (stats.Paired: t on the batch means of the per-pair log ratios, at most
// 30 batches, merged further while their lag-1 autocorrelation is high).
// benchrun (`make bench`) runs it and writes BENCHMARKS.md's section 1.
//
// Usage:
//
//	fidelity [-duration 120s] [-block 100ms] [-settle 1] [-period 10ms]
//	         [-sockets 450] [-interval 20ms] [-methods recvfrom,recvmsg]
//	         [-cpu 1] [-priority 80] [-spin 0] [-warmup 1] [-seed 1]
//	         [-rcvbuf 262144] [-dma-latency 0] [-summary=true]
//
// Needs root (SCHED_FIFO, mlockall, SO_RCVBUFFORCE, /dev/cpu_dma_latency),
// linux/amd64 with an invariant TSC, and cgo. It re-executes itself once
// with GODEBUG=asyncpreemptoff=1, as rtload does, so that the Go runtime
// sends no preemption signal into either side's calls; Ctrl-C ends the
// run after the current block and still writes every block so far.
package main
