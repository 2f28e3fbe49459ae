package results

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file holds what the kernel reported about a run, as summary.json
// keeps it: one definition of each report, which its producers fill
// directly (rt: Applied, Thread, Housekeeping, ClockInfo; sysinfo:
// KernelWatch and its events), so that no copy of a struct sits between
// the kernel and the file.

// ClockInfo describes the per-call clock, as rt.NewClock found it.
type ClockInfo struct {
	// Kind is "cycles", "tsc" or "monotonic".
	Kind string `json:"kind"`
	// Unit is TickUnit when written, kept in the file for readers of the
	// JSON; read it through TickUnit, which also names the unit of files
	// that lack it.
	Unit string `json:"unit"`
	// Hz is ticks per second: the calibrated TSC frequency, 1e9, or for
	// cycles the core clock measured while calibrating (an estimate: the
	// core clock changes with frequency scaling and turbo).
	Hz float64 `json:"hz"`
	// Invariant is true when a tick is a constant time in all P- and
	// C-states: an invariant TSC (constant_tsc and nonstop_tsc),
	// CLOCK_MONOTONIC. Never for cycles.
	Invariant bool `json:"invariant"`
	// CoreTSCRatio is core cycles per TSC tick measured with the cycles
	// clock's calibration (0 when the clock is not cycles or there is no
	// usable TSC).
	CoreTSCRatio float64 `json:"core_tsc_ratio,omitempty"`
	// Note says how Hz was found; TSC ticks are not core cycles.
	Note string `json:"note"`
	// Fallbacks lists the clocks tried before this one and why each was
	// refused.
	Fallbacks []string `json:"fallbacks,omitempty"`
	// Read is the instruction a tsc clock reads: ReadRDTSCP, or
	// ReadRDTSCFenced where CPUID offers no RDTSCP; "" for other clocks
	// (and in files written before it, which read RDTSCP).
	Read string `json:"read,omitempty"`
}

// The instructions a tsc clock reads (ClockInfo.Read).
const (
	ReadRDTSCP      = "rdtscp;lfence"
	ReadRDTSCFenced = "lfence;rdtsc;lfence"
)

// ClockRateTolerance is how far a tsc clock's rate over a trial may stray
// from its calibration (ClockRate.Deviation, either way) before the trial
// is marked invalid: 0.1%, twice the most an NTP slew moves
// CLOCK_MONOTONIC (500 ppm), so that a slew never marks a trial while a
// TSC whose rate changed (a VM migrated to another host, a TSC that is
// not invariant after all) does.
const ClockRateTolerance = 0.001

// ClockRate is a tsc clock's rate over one trial against CLOCK_MONOTONIC:
// TSC ticks between two readings each paired with a CLOCK_MONOTONIC
// reading (at the window's start and after the readers ended), over the
// ns between them.
type ClockRate struct {
	// Hz is TSC ticks per second of CLOCK_MONOTONIC over the trial.
	Hz float64 `json:"hz"`
	// Seconds is the CLOCK_MONOTONIC time between the two readings.
	Seconds float64 `json:"seconds"`
	// Deviation is Hz / ClockInfo.Hz − 1 (the calibration's): 0.0002 is
	// +0.02%.
	Deviation float64 `json:"deviation"`
	// Uncertainty bounds the error of Deviation from the two readings
	// themselves: the widest TSC bracket around each CLOCK_MONOTONIC
	// read, over the interval (a fraction, like Deviation).
	Uncertainty float64 `json:"uncertainty"`
}

// Disagrees reports whether the rate strayed from the calibration by more
// than ClockRateTolerance beyond its own uncertainty.
func (r ClockRate) Disagrees() bool {
	d := r.Deviation
	if d < 0 {
		d = -d
	}
	return d-r.Uncertainty > ClockRateTolerance
}

// TickUnit names one tick of the clock, as every table and title prints
// it: "cycles", "TSC ticks" or "ns" by Kind; for a clock of another kind
// the Unit the file gives, else "ticks".
func (c ClockInfo) TickUnit() string {
	switch c.Kind {
	case "cycles":
		return "cycles"
	case "tsc":
		return "TSC ticks"
	case "monotonic":
		return "ns"
	}
	if c.Unit != "" {
		return c.Unit
	}
	return "ticks"
}

// CyclesDescription is what the cycles clock counts, as the report's clock
// line and the clock's Note say it.
const CyclesDescription = "core cycles (PERF_COUNT_HW_CPU_CYCLES via rdpmc, kernel+user)"

// Thread is one thread's scheduling state as the kernel held it
// (sched_getattr(2), sched_getaffinity(2), its comm).
type Thread struct {
	TID int `json:"tid"`
	// Name is its comm: "rtl-rd/<reader>", "rtl-tx/<endpoint>",
	// "rtl-nz/<kind>.<i>", "rtl-pr/<probe>", "rtl-writer", or the
	// executable's name for the Go runtime's threads and main.
	Name string `json:"name,omitempty"`
	// Policy is "SCHED_FIFO", "SCHED_RR", "SCHED_OTHER", "SCHED_BATCH",
	// "SCHED_IDLE" or "SCHED_DEADLINE".
	Policy string `json:"policy"`
	// Priority is the SCHED_FIFO/SCHED_RR priority (1–99), 0 otherwise.
	Priority int `json:"priority"`
	// Nice is the nice value (-20–19; SCHED_OTHER, SCHED_BATCH).
	Nice int `json:"nice"`
	// CPUs is its CPU affinity, ascending.
	CPUs []int `json:"cpus"`
}

// RealTime reports whether the thread runs at SCHED_FIFO or SCHED_RR.
func (t Thread) RealTime() bool { return t.Policy == "SCHED_FIFO" || t.Policy == "SCHED_RR" }

// Applied is the state rt.Start read back from the kernel for one of
// rtload's threads after applying its scheduling (read back, not
// intended).
type Applied struct {
	Thread
	// Mlocked is true when mlockall(2) succeeded.
	Mlocked bool `json:"mlocked"`
	// Degraded lists what was asked for but not applied, and why (degraded
	// mode: rt.Sched.AllowDegraded); "notes" in the file, as in version 2.
	Degraded []string `json:"notes,omitempty"`
}

// Housekeeping is how rtload's own threads (the Go runtime's, main, the
// writer, the exporter) were confined to the housekeeping CPUs for a
// trial (rt.ConfineHousekeeping): every thread but the scenario's
// (readers, senders, noise, probes), rescanned every 100 ms.
type Housekeeping struct {
	// CPUs the machinery was confined to.
	CPUs []int `json:"cpus"`
	// Threads is how many distinct threads were found outside the
	// housekeeping CPUs and confined (sched_setaffinity(2) per TID).
	Threads int `json:"threads_confined"`
	// Inherited is how many new threads already had the housekeeping mask
	// (inherited from the thread that created them) when first seen.
	Inherited int `json:"threads_inherited"`
	// Reconfined counts confined threads whose mask had widened again and
	// was confined once more.
	Reconfined int `json:"reconfined"`
	// Exempt is how many threads were exempt (readers, senders, noise).
	Exempt int `json:"threads_exempt"`
	// Passes is how many times /proc/self/task was scanned.
	Passes int `json:"passes"`
	// Restored is how many threads got their earlier mask back at the end.
	Restored int `json:"threads_restored"`
	// Errors are the first failures (each names its syscall and TID);
	// ErrorsDropped counts the rest.
	Errors        []string `json:"errors,omitempty"`
	ErrorsDropped int      `json:"errors_dropped,omitempty"`
}

// KernelWatch is what the kernel watch (sysinfo.WatchKernel) saw during
// one trial: the clocksource and RT throttling at its start and end, and
// the kernel log's events.
type KernelWatch struct {
	// ClocksourceStart and ClocksourceEnd are current_clocksource when the
	// trial started and ended; Available is available_clocksource.
	ClocksourceStart string   `json:"clocksource_start"`
	ClocksourceEnd   string   `json:"clocksource_end"`
	Available        []string `json:"available_clocksources,omitempty"`
	// RTThrottlingStart and RTThrottlingEnd are sched_rt_runtime_us and
	// sched_rt_period_us at start and end.
	RTThrottlingStart RTThrottling `json:"rt_throttling_start"`
	RTThrottlingEnd   RTThrottling `json:"rt_throttling_end"`
	// Events are the kernel's clocksource switches, unstable clocksource
	// or TSC, and RT throttling, in the order seen (at most 1000).
	Events []KernelEvent `json:"events,omitempty"`
	// KmsgWatched is false when /dev/kmsg could not be read (Notes say
	// why): then only clocksource changes lasting a poll interval are
	// seen. KmsgRecords is how many log records were read; KmsgLost how
	// many times records were overwritten before they could be read
	// (EPIPE).
	KmsgWatched bool     `json:"kmsg_watched"`
	KmsgRecords int      `json:"kmsg_records"`
	KmsgLost    int      `json:"kmsg_lost,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Invalid says how the kernel changed what the trial measured, "" when it
// did not: its events ("clocksource changed (tsc → hpet at 12.3 s)",
// "TSC marked unstable at 1.0 s", "RT throttling activated at 3.2 s") and
// a changed RT throttling setting, "; "-joined. A trial so changed is
// marked MarkInvalid with this text.
func (k KernelWatch) Invalid() string {
	var switches, rest []string
	for _, e := range k.Events {
		at := fmt.Sprintf("%.1f s", e.At.Seconds())
		switch e.Kind {
		case ClocksourceSwitch:
			from := e.From
			if from == "" {
				from = "?"
			}
			switches = append(switches, fmt.Sprintf("%s → %s at %s", from, e.To, at))
		case ClocksourceUnstable:
			rest = append(rest, fmt.Sprintf("clocksource %s marked unstable at %s", e.Clocksource, at))
		case TSCUnstable:
			rest = append(rest, "TSC marked unstable at "+at)
		case RTThrottled:
			rest = append(rest, "RT throttling activated at "+at)
		}
	}
	if len(switches) > 0 {
		rest = append([]string{"clocksource changed (" + strings.Join(switches, ", ") + ")"}, rest...)
	}
	if k.RTThrottlingEnd != k.RTThrottlingStart && k.RTThrottlingEnd != (RTThrottling{}) {
		rest = append(rest, fmt.Sprintf("RT throttling changed (%s → %s)", k.RTThrottlingStart, k.RTThrottlingEnd))
	}
	return strings.Join(rest, "; ")
}

// RTThrottling is the kernel's real-time bandwidth limit (sched(7)
// "Real-time throttling"): SCHED_FIFO/RR threads together get RuntimeUs
// of every PeriodUs on each CPU; RuntimeUs -1 turns throttling off. The
// zero value is "not read".
type RTThrottling struct {
	RuntimeUs int64 `json:"sched_rt_runtime_us"`
	PeriodUs  int64 `json:"sched_rt_period_us"`
}

// On reports whether RT throttling can stop real-time threads (runtime ≥ 0
// and below the period).
func (r RTThrottling) On() bool { return r.RuntimeUs >= 0 && r.RuntimeUs < r.PeriodUs }

// String is "off (sched_rt_runtime_us -1)" or "950000 µs of every 1000000 µs".
func (r RTThrottling) String() string {
	if r.RuntimeUs < 0 {
		return "off (sched_rt_runtime_us -1)"
	}
	return fmt.Sprintf("%d µs of every %d µs", r.RuntimeUs, r.PeriodUs)
}

// KernelEventKind says what a kernel event means for a run.
type KernelEventKind string

// Kernel events a kernel watch reports. Each one makes the measured run
// something other than the run asked for.
const (
	// ClocksourceSwitch: the kernel changed its clocksource ("clocksource:
	// Switched to clocksource X", kernel/time/clocksource.c), or
	// current_clocksource changed between two polls.
	ClocksourceSwitch KernelEventKind = "clocksource_switch"
	// ClocksourceUnstable: the clocksource watchdog marked a clocksource
	// unstable ("clocksource: timekeeping watchdog on CPU3: Marking
	// clocksource 'tsc' as unstable because the skew is too large:";
	// before 4.x "Clocksource tsc unstable (delta = … ns)").
	ClocksourceUnstable KernelEventKind = "clocksource_unstable"
	// TSCUnstable: x86 gave up on the TSC ("tsc: Marking TSC unstable due
	// to clocksource watchdog", "TSC found unstable after boot, …",
	// arch/x86/kernel/tsc.c).
	TSCUnstable KernelEventKind = "tsc_unstable"
	// RTThrottled: RT throttling stopped real-time threads ("sched: RT
	// throttling activated", kernel/sched/rt.c). The kernel prints it
	// once per boot (printk_deferred_once): a later throttling in the same
	// boot is not logged.
	RTThrottled KernelEventKind = "rt_throttling"
)

// KernelEvent is one kernel event seen during a trial.
type KernelEvent struct {
	Kind KernelEventKind `json:"kind"`
	// At is when it happened, from the trial's start (its first tick): the
	// kernel log record's timestamp (local_clock), kept within the window
	// in which the record must have been logged (after the previous poll
	// found the log empty, before this poll read it; never before 0), for
	// local_clock drifts from CLOCK_MONOTONIC over a long uptime. A switch
	// seen only in sysfs is timed by the poll that saw it.
	At time.Duration `json:"at_ns"`
	// From and To are the clocksources before and after a switch (From ""
	// when unknown); Clocksource names the one marked unstable.
	From        string `json:"from,omitempty"`
	To          string `json:"to,omitempty"`
	Clocksource string `json:"clocksource,omitempty"`
	// Source is "kmsg" (the kernel log) or "sysfs" (a change of
	// current_clocksource seen by polling it, with no log record); Msg the
	// kernel's message (or what the poll saw).
	Source string `json:"source"`
	Msg    string `json:"msg"`
}

// ForeignThread is a real-time thread of another process (rt.ForeignThreads):
// its process (PID, Comm) and its scheduling state (Thread: tid, comm,
// policy, priority, CPU mask). Rtload is true for a thread of another
// rtload run (a process with a reader thread, "rtl-rd/…").
type ForeignThread struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	Rtload bool   `json:"rtload,omitempty"`
	Thread
}

// String names the thread for a person, as marks and warnings do:
// "process 4321 (hog) thread 4322 (hog) SCHED_FIFO 90 on CPUs 1", with
// "another rtload, " before it for another rtload's.
func (f ForeignThread) String() string {
	s := fmt.Sprintf("process %d (%s) thread %d (%s) %s", f.PID, f.Comm, f.TID, f.Name, f.Policy)
	if f.RealTime() {
		s += " " + strconv.Itoa(f.Priority)
	}
	s += " on CPUs " + CPUList(f.CPUs)
	if f.Rtload {
		s = "another rtload, " + s
	}
	return s
}

// Culprit is a foreign thread that could take a reader's CPU during a
// trial (MarkShared): at or above the reader's priority, or another
// rtload's reader. FirstNs and LastNs are when it was first and last seen
// (ns from the measured window's start; negative: before it), Seen how
// many of the trial's Scans found it.
type Culprit struct {
	Reader string `json:"reader"`
	CPU    int    `json:"cpu"`
	ForeignThread
	FirstNs int64 `json:"first_ns"`
	LastNs  int64 `json:"last_ns"`
	Seen    int   `json:"seen"`
	Scans   int   `json:"scans"`
}

// CPUList prints CPU numbers as ranges, "0-3,6".
func CPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(cpus[i])+"-"+strconv.Itoa(cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
