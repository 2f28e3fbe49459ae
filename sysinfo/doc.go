// Package sysinfo gathers the facts that `rtload env` prints and that every
// results summary embeds: kernel release and build, CPU model and flags,
// online and allowed CPUs, clocksource and TSC flags, which counters work
// (perf cycles, perf task-clock, TSC, CLOCK_MONOTONIC), the process's
// capabilities and RT-relevant rlimits, RT throttling, isolcpus/nohz_full,
// cmdline hardening switches and the matching kernel config options.
//
// Gather never fails: an item it cannot read keeps its zero value, and where
// the struct has a field for it (KernelConfigSource, Counter.Note,
// PerfEventParanoid = -99) it says why. Facts.Text renders the report with
// one-line hints ("RT throttling OFF: …", "TSC ticks are not core cycles").
//
// Sources are /proc, /sys and a few syscalls: uname(2),
// sched_getaffinity(2), getrlimit(2), clock_gettime(2), clock_getres(2) and
// perf_event_open(2). Each counter probe opens and closes its own fd; nothing
// is left behind. The parsers (/proc/cpuinfo, /proc/cmdline,
// /proc/self/status, kernel config plain or gzipped, CPU lists) are pure
// functions over strings and readers, tested against testdata files, and the
// file-backed part of Gather reads through an fs.FS so a fake /proc and /sys
// tree exercises it without the kernel.
//
// During a trial, WatchKernel watches for what would make it another run
// than the one asked for: clocksource switches (the kernel log's
// "clocksource: Switched to clocksource …" and current_clocksource polls),
// an unstable TSC or clocksource, and "sched: RT throttling activated";
// InvalidReason words them for the report ("invalid: clocksource changed
// (tsc → hpet at 12.3 s)"). ReadClocksource and ReadRTThrottling are the
// cheap reads for every interval.
//
// Beside Gather, small readers serve a running trial's non-real-time
// writer: ReadIRQCounts (one CPU's column of /proc/interrupts and
// /proc/softirqs, diffed with IRQCounts.Delta), RSS (/proc/self/statm),
// OpenFDs (/proc/self/fd) and ReadTaskStats (a reader thread's context
// switches, page faults, time on CPU and migrations from
// /proc/self/task/TID/{status,stat,schedstat,sched}, in place of task-bound
// perf events on it). A ProcReader reads the same every interval of a soak
// without allocating (buffers it keeps, openat(2) on paths prepared once,
// getdents64(2), parsers that do not allocate on success); the one-off
// readers are built on the same parsers, so each file has one.
//
// For a scenario's requirements, KernelParam works out the state the
// kernel runs with for the boolean hardening parameters (init_on_alloc
// absent from the command line is CONFIG_INIT_ON_ALLOC_DEFAULT_ON, and so
// on), ReadKernelConfig adds the config options a scenario names, and
// DetectContainer says whether this process runs in a container (Docker,
// Podman, Kubernetes, LXC, …) and what its cgroup's RT budget is, so a
// missing privilege can be named as the container setting to change.
//
// Linux only. Imports the standard library and golang.org/x/sys/unix.
package sysinfo
