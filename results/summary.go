package results

import (
	"time"

	"github.com/rtload/rtload/record"
)

// Summary is the contract of a results directory: summary.json holds one.
// Every report (terminal table, compare) is rebuilt from it.
type Summary struct {
	// Version of this format: SummaryVersion when written; store.DecodeSummary
	// also reads versions 1 and 2 into today's fields (see store.DecodeSummary),
	// and leaves the version they had here.
	Version int `json:"version"`
	// Scenario is the name of the scenario; File the source it came from.
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	// Spec is the scenario as run (defaults filled, before variants): the
	// JSON of scenario.Spec, kept whole, so that `rtload check` runs it
	// again (scenario.LoadAsRun) and compare can diff it leaf by leaf
	// (Spec.Leaves). results reads no scenario type: what readers ask of
	// the scenario is Plan.
	Spec Spec `json:"spec"`
	// Plan is what the readers of results ask of the scenario as run,
	// typed: read from Spec (Summary.SetSpec, store.DecodeSummary), never
	// written apart from it.
	Plan Plan `json:"-"`
	// Env is the machine and this process as the run saw them: the
	// `rtload env` facts (sysinfo.Gather); the zero Env when a summary
	// records none (another tool's file).
	Env Env `json:"env"`
	// Start and End of the whole run, wall clock.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Stopped is true when the run was interrupted (SIGINT/SIGTERM); StoppedAt says when.
	Stopped   bool       `json:"stopped"`
	StoppedAt *time.Time `json:"stopped_at,omitempty"`
	// InProgress marks a checkpoint written during a run (soak): the run
	// had not ended when it was written; a later write replaces it.
	InProgress bool `json:"in_progress,omitempty"`
	// Degraded is true when any privilege or requirement was missing and
	// --allow-degraded ran anyway; DegradedReasons lists what was given up
	// (Marks: one MarkDegraded each).
	Degraded        bool     `json:"degraded"`
	DegradedReasons []string `json:"degraded_reasons,omitempty"`
	// Clock says what one tick of every per-call histogram is.
	Clock ClockInfo `json:"clock"`
	// Auto is how a rounds: auto run decided when to stop; nil for a run
	// of a fixed number of rounds.
	Auto *AutoRounds `json:"auto,omitempty"`
	// Trials in run order (variant × round): the timed trials, never
	// measured under a profiler.
	Trials []Trial `json:"trials"`
	// ProfiledTrials are the trials run with their readers sampled
	// (Trial.Profiled; the scenario's profile section), in run order:
	// kept apart so that no reader of Trials mixes their histograms,
	// measured under the sampler, with the timed ones. Profiles are
	// their samples per variant; ProfilerCosts compares their per-call
	// cost with the timed trials'.
	ProfiledTrials []Trial          `json:"profiled_trials,omitempty"`
	Profiles       []VariantProfile `json:"profiles,omitempty"`
	// Processes describes each process of a multi-process run (rtload run
	// --processes), in run order; empty for a single-process run. Their
	// trials are in Trials with Trial.Process set.
	Processes []ProcessInfo `json:"processes,omitempty"`
}

// ProcessInfo is one process of a multi-process run: a fresh child
// running the whole plan with its setup randomised (issue 24).
type ProcessInfo struct {
	Process int `json:"process"`
	PID     int `json:"pid"`
	// SetupSeed drew its socket creation order and receive buffer offsets
	// (engine.Setup); EnvPadBytes is the size of the padding variable
	// added to its environment.
	SetupSeed   uint64 `json:"setup_seed"`
	EnvPadBytes int    `json:"env_pad_bytes"`
	// Clock is the process's own per-call clock (each calibrates its TSC).
	Clock  ClockInfo `json:"clock"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Trials int       `json:"trials"`
	// Error is how the process failed, if it did.
	Error string `json:"error,omitempty"`
}

// Trial is the result of one variant in one round.
type Trial struct {
	Index int `json:"index"`
	// Process is the process the trial ran in (rtload run --processes:
	// fresh child processes, 0-based; 0 in a single-process run and in
	// summaries of version 2).
	Process int    `json:"process"`
	Round   int    `json:"round"`
	Variant string `json:"variant"`
	// Profiled marks a trial whose readers were sampled (it is in
	// Summary.ProfiledTrials, and each reader has its Profile).
	Profiled bool `json:"profiled,omitempty"`
	// Overrides is the variant's path=value set.
	Overrides map[string]string `json:"overrides,omitempty"`
	// DurationNs is the measured time.
	DurationNs int64 `json:"duration_ns"`
	// GCBefore/GCAfter are the Go runtime's completed GC cycles
	// (runtime/metrics /gc/cycles/total:gc-cycles) around the measured
	// window; GCDuring = GCAfter-GCBefore must be 0 for a clean run.
	GCBefore uint32    `json:"gc_before"`
	GCAfter  uint32    `json:"gc_after"`
	GCDuring uint32    `json:"gc_during"`
	Readers  []Reader  `json:"readers"`
	Traffic  []Traffic `json:"traffic"`
	Noise    []Noise   `json:"noise"`
	// Probes holds tap_send (and later) probe results.
	Probes []Probe `json:"probes,omitempty"`
	// CPUDMALatencyUs is the PM QoS request held during the trial (µs), or
	// -1 when none was (scenario -1, or not permitted in degraded mode).
	CPUDMALatencyUs int `json:"cpu_dma_latency_us"`
	// Namespace is the private network namespace the trial ran in, if any.
	Namespace string `json:"namespace,omitempty"`
	// Marks say how the trial was not the trial asked for, each with its
	// kind (MarkInvalid, MarkEmpty, MarkStarved, MarkTraffic, MarkRtload)
	// and text, in the order found; empty for a trial as asked. compare's
	// verdicts touching an invalid trial (Valid) are undecided. `rtload
	// check` leaves out a process whose invalid, empty, starved or traffic
	// mark is the machine's (verdict's markCause) and runs a fresh one in its
	// place, and cannot judge a run with one of the workload's own (exit
	// 125). Summary.Marks gathers them with the run's.
	// Version 2 kept them in the fields invalid, process_marks,
	// traffic_not_as_specified, readers[].starved and
	// traffic[].not_as_specified: store.DecodeSummary reads those into Marks.
	Marks []Mark `json:"marks,omitempty"`
	// Kernel is what the kernel watch saw during the trial: the
	// clocksource and RT throttling at its start and end, and the kernel
	// log's events; nil in results written before it existed.
	Kernel *KernelWatch `json:"kernel,omitempty"`
	// Housekeeping is how rtload's own threads were confined for the
	// trial (nil: not confined; HousekeepingNote then says why).
	Housekeeping     *Housekeeping `json:"housekeeping,omitempty"`
	HousekeepingNote string        `json:"housekeeping_note,omitempty"`
	// ThreadsStart and ThreadsEnd list every thread of the process when
	// the trial's threads had all started and when its measured window
	// ended, by TID. ThreadWarnings names each thread other than a reader
	// that could run on a reader's CPU then (noise placed there on purpose
	// included: its name says so).
	ThreadsStart   []Thread `json:"threads_start,omitempty"`
	ThreadsEnd     []Thread `json:"threads_end,omitempty"`
	ThreadWarnings []string `json:"thread_warnings,omitempty"`
	// Culprits are the threads of other processes that could take a
	// reader's CPU during the trial: at or above its priority, or another
	// rtload's reader (each reader's list makes its MarkShared).
	Culprits []Culprit `json:"culprits,omitempty"`
	// StealNs is each CPU's steal time over the trial (from its start to
	// its readers' end), in ns, indexed by CPU number (/proc/stat; nil
	// when there was none or it could not be read): time a hypervisor ran
	// something else on the vCPU, when no thread on it ran nor waited in
	// its run queue as the guest counts them. A trial mark caused by it
	// says so.
	StealNs []int64 `json:"steal_ns,omitempty"`
	// ClockRate is a tsc clock's rate over the trial against
	// CLOCK_MONOTONIC; a trial whose rate Disagrees with the calibration
	// is marked invalid. nil for other clocks (and in older files).
	ClockRate *ClockRate `json:"clock_rate,omitempty"`
	// Interleave, when set, says that this variant ran interleaved with
	// the other variants of its group in one window (scenario
	// interleave:), and holds its blocks; nil for a trial of its own.
	Interleave *Interleave `json:"interleave,omitempty"`
}

// Reader is one real-time reader's results in one trial.
type Reader struct {
	Name    string `json:"name"`
	Method  string `json:"method"`
	Sockets int    `json:"sockets"`
	// Endpoint names the Traffic entry (Traffic.Endpoint) feeding this
	// reader's sockets; empty means every Traffic entry of the trial.
	// Reports use it to put "sent" and "in flight" in the right column.
	Endpoint string `json:"endpoint,omitempty"`
	// Applied is what the kernel reports for the thread (read back, not intended).
	Applied Applied `json:"applied"`
	// Calls is recv calls made; Data those that returned data; EAGAIN those that found nothing.
	Calls  uint64 `json:"calls"`
	Data   uint64 `json:"data_calls"`
	EAGAIN uint64 `json:"eagain_calls"`
	// Errors counts calls failing with anything else.
	Errors uint64 `json:"errors"`
	// Messages received, bytes received.
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	// Lost, Reordered, Duplicates from per-socket sequence numbers.
	Lost       uint64 `json:"lost"`
	Reordered  uint64 `json:"reordered"`
	Duplicates uint64 `json:"duplicates"`
	// Drops is the kernel's SO_RXQ_OVFL count (or /proc drop counter) over the trial.
	Drops uint64 `json:"drops"`
	// SocketsRead is how many distinct sockets returned at least one message.
	SocketsRead int `json:"sockets_read"`
	// RcvBuf is the SO_RCVBUF value the kernel reports, in bytes.
	RcvBuf int `json:"rcvbuf_bytes"`
	// Wakeups is measured ticks run. Overruns counts overrun events: ticks
	// whose wait began a period or more after their deadline (the tick
	// before ran into this one's period), in either overrun mode; a
	// catch-up tick run late, back to back, is one too. MissedTicks counts
	// the window's deadlines no tick ran: skipped (in skip mode at every
	// overrun, in catch-up mode at a backlog skip) or, MissedAtEnd of
	// them, left when the window ended (skipped by the first tick after
	// it, or still due when the reader stopped: a catch-up reader behind,
	// a thread kept off its CPU). Wakeups + MissedTicks is exactly the
	// window's deadlines (those before the stop, for a trial stopped
	// early); the wakeup log's missed column sums to MissedTicks −
	// MissedAtEnd.
	Wakeups     uint64 `json:"wakeups"`
	Overruns    uint64 `json:"overruns"`
	MissedTicks uint64 `json:"missed_ticks"`
	MissedAtEnd uint64 `json:"missed_at_end,omitempty"`
	// OverrunMode is the reader's overrun setting ("skip" or "catchup");
	// with catchup, MaxBacklog is its backlog limit (readers[].max_backlog)
	// and BacklogSkips counts the overruns that found more ticks due than
	// that and skipped them instead of catching up.
	OverrunMode  string `json:"overrun_mode,omitempty"`
	MaxBacklog   int    `json:"max_backlog,omitempty"`
	BacklogSkips uint64 `json:"backlog_skips,omitempty"`
	// Spikes counts wakeups above the reader's threshold (spikes.jsonl);
	// BrokeTraceAtNs is the deadline of the spike that stopped ftrace.
	Spikes uint64 `json:"spikes,omitempty"`
	// ThresholdNs is the reader's spike threshold (readers[].threshold),
	// 0 for none: compare's spike rate per hour counts Spikes over the
	// measured time against it.
	ThresholdNs    int64 `json:"threshold_ns,omitempty"`
	BrokeTraceAtNs int64 `json:"broke_trace_at_ns,omitempty"`
	// TracingStopped, set when breaktrace stopped ftrace, says so: that
	// tracing_on was left at 0 so that the trace ends at the spike, where
	// to read it and how to turn tracing back on.
	TracingStopped string `json:"tracing_stopped,omitempty"`
	// SpikesDropped counts spikes counted in Spikes but not written to
	// spikes.jsonl because the file reached its cap (SpikesLimit).
	SpikesDropped uint64 `json:"spikes_dropped,omitempty"`
	// Intervals is how many interval records the reader wrote.
	Intervals int `json:"intervals,omitempty"`
	// WakeupLog names this reader's per-wakeup log files in this trial,
	// relative to the results directory, oldest first (chunks in order;
	// the open chunk of a checkpoint last, plain). wakelog.ReaderWakeups reads
	// them. Empty when the run wrote no per-wakeup log.
	WakeupLog []string `json:"wakeup_log,omitempty"`
	// WakeupLogRows and WakeupLogDropped: rows written to the per-wakeup
	// log, and rows deleted with old chunks by log_limit; WakeupLogLimit
	// the cap in force (bytes on disk, 0 = none).
	WakeupLogRows    uint64 `json:"wakeup_log_rows,omitempty"`
	WakeupLogDropped uint64 `json:"wakeup_log_dropped,omitempty"`
	WakeupLogLimit   int64  `json:"wakeup_log_limit_bytes,omitempty"`
	// SafePointPasses counts ticks on which the reader let the Go runtime
	// stop it, for a garbage collection its soak run's writer asked for.
	SafePointPasses uint64 `json:"safepoint_passes,omitempty"`
	// RingDropped counts per-wakeup records dropped because the ring was full.
	RingDropped uint64 `json:"ring_dropped"`
	// PerCall histograms in clock ticks: All (data+EAGAIN, the seed's table), Data, EAGAIN.
	PerCall PerCall `json:"per_call"`
	// PerCallClass splits the same calls by context (what `rtload explain`
	// attributes modes to); absent in results written before it existed.
	PerCallClass *PerCallClass `json:"per_call_class,omitempty"`
	// Counters are perf_event_open counters of the reader thread over its
	// life in the trial (warm-up and tail included): software events
	// (context-switches, cpu-migrations, page-faults, task-clock in ns)
	// always, hardware ones where the CPU/VM and kernel settings allow.
	// CountersSkipped names each event not counted and why.
	Counters        []Counter `json:"counters,omitempty"`
	CountersSkipped []string  `json:"counters_skipped,omitempty"`
	// CPUInterrupts is what the reader's CPU served over the measured
	// window (to within 50 ms: sampled by the non-real-time writer).
	CPUInterrupts *CPUInterrupts `json:"cpu_interrupts,omitempty"`
	// Machine is what the kernel counted on the reader's CPU poll by poll
	// during the measured window (steal time, interrupts), with the polls
	// of the latest wakeups; nil when not sampled (older results).
	Machine *MachineWatch `json:"machine,omitempty"`
	// Profile is what the sampler took of this reader in a profiled
	// trial; nil in a timed one.
	Profile *ReaderProfile `json:"profile,omitempty"`
	// PerCallTicks summarises every call's cost from an HdrHistogram, in
	// clock ticks: finer than a bucket of PerCall, and the source of every
	// per-call percentile rtload prints.
	PerCallTicks TickStats `json:"per_call_ticks"`
	// WakeupLatency in ns (HDR-based stats + linear histogram).
	WakeupLatency Latency `json:"wakeup_latency"`
	// Drain time per tick in ns.
	Drain Latency `json:"drain"`
	// OneWayDelay send→receive in ns (CLOCK_MONOTONIC).
	OneWayDelay Latency `json:"one_way_delay"`

	// CountersSource says where Counters come from: "procfs" (the default:
	// the non-real-time writer reads /proc/self/task/TID/{status,stat,
	// schedstat,sched}; nothing is attached to the reader thread) or
	// "perf_event (task-bound, opt-in: …)" (--task-perf-counters: perf
	// events on the reader, which run inside every wakeup latency).
	CountersSource string `json:"counters_source,omitempty"`
	// PerCallCounters are the per-call hardware counters of
	// readers[].counters, next to the per-call cost histograms: each
	// event's count per call by call class. An event the PMU could not
	// give is absent, and the trial is marked degraded with the reason
	// (--allow-degraded; without it the run is refused).
	PerCallCounters []PerCallCounter `json:"per_call_counters,omitempty"`
	// Controls are the drift controls timed in every tick after the
	// drain; nil for a reader that timed none (results written before
	// they existed, a timer-only reader).
	Controls *Controls `json:"controls,omitempty"`
	// Seccomp is the seccomp filter the reader's thread ran under
	// (readers[i].seccomp), read back from the kernel; nil for a thread
	// with none (and results written before it existed).
	Seccomp *Seccomp `json:"seccomp,omitempty"`
}

// PerCall holds the three per-call histograms.
type PerCall struct {
	Unit   string          `json:"unit"`
	All    record.Snapshot `json:"all"`
	Data   record.Snapshot `json:"data"`
	EAGAIN record.Snapshot `json:"eagain"`
}

// CPUInterrupts counts the interrupts (/proc/interrupts) and softirqs
// (/proc/softirqs) one CPU served over a span; Sources are the nonzero
// ones by name ("irq:LOC", "irq:26 ttyS0", "softirq:TIMER"), largest first.
type CPUInterrupts struct {
	CPU      int       `json:"cpu"`
	IRQs     uint64    `json:"irqs"`
	SoftIRQs uint64    `json:"softirqs"`
	Sources  []Counter `json:"sources,omitempty"`
}

// MaxMachineWindows is the most MachineWatch.Windows a reader keeps.
const MaxMachineWindows = 64

// MachineWatch is what the kernel counted on one CPU (a reader's) while
// the trial's writer polled it, every 50 ms of the measured window: its
// steal time (/proc/stat) and interrupts and softirqs (/proc/interrupts,
// /proc/softirqs), in all and in the windows around the latest wakeups,
// so that a latency spike can be set against what the machine did then,
// and against what a window of that length usually holds.
type MachineWatch struct {
	CPU int `json:"cpu"`
	// FromNs and ToNs bound the polls, CLOCK_MONOTONIC ns as wakeup
	// deadlines are; Polls is how many there were.
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
	Polls  int   `json:"polls"`
	// StealNs is the CPU's steal time from FromNs to ToNs, from
	// /proc/stat's steal column (USER_HZ ticks: a 10 ms resolution);
	// Steal says where it came from, or why there is none ("" with
	// StealNs 0: none reported).
	StealNs uint64 `json:"steal_ns"`
	Steal   string `json:"steal"`
	// IRQs and SoftIRQs count the CPU's interrupts and softirqs from
	// FromNs to ToNs.
	IRQs     uint64 `json:"irqs"`
	SoftIRQs uint64 `json:"softirqs"`
	// Windows are the writer's polls whose wakeups were the latest, at
	// most MaxMachineWindows, latest first. Each window spans the poll
	// that drained its wakeups and the one before, so that a wakeup's
	// whole lateness (deadline to wake) falls inside it.
	Windows []MachineWindow `json:"windows,omitempty"`
	// Error says why sampling stopped, when it did.
	Error string `json:"error,omitempty"`
}

// MachineWindow is one window of a MachineWatch: [FromNs, ToNs)
// CLOCK_MONOTONIC ns, the latest wakeup drained at its end (MaxLatencyNs),
// the steal time and interrupts the CPU counted in it, and the source
// that counted most ("irq:LOC", "softirq:NET_RX") with its count.
type MachineWindow struct {
	FromNs       int64  `json:"from_ns"`
	ToNs         int64  `json:"to_ns"`
	MaxLatencyNs int64  `json:"max_latency_ns"`
	StealNs      uint64 `json:"steal_ns"`
	IRQs         uint64 `json:"irqs"`
	SoftIRQs     uint64 `json:"softirqs"`
	Top          string `json:"top,omitempty"`
	TopCount     uint64 `json:"top_count,omitempty"`
}

// Counter is one perf_event_open counter's value.
type Counter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// Counter is the value of r's counter name (Counters), ok when counted.
func (r *Reader) Counter(name string) (uint64, bool) {
	for _, c := range r.Counters {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// PerCallClass holds the per-call histograms (clock ticks, same layout as
// PerCall) split by each call's context. By class, Data (PerCall.Data),
// Warm and Cold partition All: Warm is an EAGAIN on a socket that returned
// data earlier in the same drain, Cold an EAGAIN on a socket that had
// nothing that tick. By position, First (the first FirstCalls calls after
// each wakeup) and Rest partition All.
type PerCallClass struct {
	Unit       string          `json:"unit"`
	FirstCalls int             `json:"first_calls"`
	Warm       record.Snapshot `json:"warm_eagain"`
	Cold       record.Snapshot `json:"cold_eagain"`
	First      record.Snapshot `json:"first"`
	Rest       record.Snapshot `json:"rest"`
}

// Traffic is one sender's accounting: one traffic group (a traffic entry
// and the endpoint group it feeds) in one trial.
type Traffic struct {
	Endpoint string `json:"endpoint"`
	Sockets  int    `json:"sockets"`
	// Applied is the sender thread's scheduling read back from the kernel
	// (traffic[].policy, priority, nice, cpus); nil in results written
	// before senders had their own.
	Applied *Applied `json:"applied,omitempty"`
	// Sent messages, SendErrors calls that failed (EAGAIN/ENOBUFS etc.).
	Sent       uint64 `json:"sent"`
	SendErrors uint64 `json:"send_errors"`
	// Due is how many messages the schedule (the pacer) had due while the
	// sender ran, from its first tick (warm-up included) to its end: what
	// an on-time sender sends.
	Due uint64 `json:"due"`
	// TargetRate and AchievedRate in messages per second (all sockets):
	// sockets / interval, and Sent over the time the sender ran.
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	// RateErrorPct is how far Sent is from Due, in % of Due (negative:
	// behind): the achieved rate's error against the target over the same
	// time. RateTolerancePct is traffic[].rate_tolerance, the bound on
	// its magnitude.
	RateErrorPct     float64 `json:"rate_error_pct"`
	RateTolerancePct float64 `json:"rate_tolerance_pct"`
	// InFlight is sent minus received when the trial ended (read after a final drain).
	InFlight int64 `json:"in_flight"`
	// SendLag is how late sends went out against the schedule, in ns (each
	// message: time sent − time due). MaxSendLagNs is
	// traffic[].max_send_lag, the bound on its p99. A group that missed
	// either bound marks its trial (MarkTraffic, Mark.Endpoint).
	SendLag      Latency `json:"send_lag"`
	MaxSendLagNs int64   `json:"max_send_lag_ns"`
	// Counters are the sender thread's procfs counters over its run
	// (context switches, page faults, task-clock and runqueue-wait in ns,
	// as Reader.Counters), read by the thread itself before and after its
	// send loop; nil in results written before they existed, or when
	// procfs could not be read.
	Counters []Counter `json:"counters,omitempty"`
	// Starved, when set, says that the sender was runnable but kept off
	// its CPU for more than 1% of its run (at least 10 ms) by schedstat's
	// run-queue wait: real-time threads of its priority or above on its
	// CPUs (another run's, a test's), or RT throttling. It is a datum,
	// not a mark: a MarkTraffic of the group ends with it, the machine's
	// share of the miss.
	Starved string `json:"starved,omitempty"`
}

// Noise is one background source's achieved work.
type Noise struct {
	// Duty is the observed fraction of time the noise was on (1 = always).
	Duty float64 `json:"duty_observed,omitempty"`
	// CPUShare is the share of a CPU each noise thread really got, on
	// average (its user + system time over the time it ran,
	// getrusage(RUSAGE_THREAD)): what the machine gave it, below the duty
	// cycle's on phases when the CPU was busy.
	CPUShare float64 `json:"cpu_share,omitempty"`
	Kind     string  `json:"kind"`
	Threads  int     `json:"threads"`
	Unit     string  `json:"unit"`
	Count    uint64  `json:"count"`
	Seconds  float64 `json:"seconds"`
	PerSec   float64 `json:"per_sec"`
}

// Probe is one measured probe's result in one trial.
type Probe struct {
	Name string `json:"name"`
	// Kind is "tap_send".
	Kind string `json:"kind"`
	// Device is the tap device written into; VnetHdr and Queues its setup.
	Device  string `json:"device,omitempty"`
	VnetHdr bool   `json:"vnet_hdr"`
	Queues  int    `json:"queues,omitempty"`
	MTU     int    `json:"mtu,omitempty"`
	// Applied is the probe thread's scheduling state read back from the kernel.
	Applied Applied `json:"applied"`
	// Sizes holds one result per frame size swept, in order (tap_send).
	Sizes []ProbeSize `json:"sizes,omitempty"`
	// FileWrite is the file_write (fstime) result.
	FileWrite *FileWriteResult `json:"file_write,omitempty"`
	// Messaging is the messaging (hackbench) result.
	Messaging *MessagingResult `json:"messaging,omitempty"`
}

// FileWriteResult is one run of the fstime write loop (seed 002).
type FileWriteResult struct {
	BlockBytes int   `json:"block_bytes"`
	Blocks     int   `json:"blocks_per_pass"`
	DurationNs int64 `json:"duration_ns"`
	// Passes completed, Writes made, Bytes written (all writes).
	Passes, Writes, Bytes, ShortWrites, Errors uint64
	// KBps is Bytes/1024 per second, unixbench's "KB/sec"; WritesPerSec likewise.
	KBps         float64 `json:"kb_per_sec"`
	WritesPerSec float64 `json:"writes_per_sec"`
	// FileSize is the file's size at the end (Blocks × BlockBytes).
	FileSize int64 `json:"file_size"`
	// PerWrite is the per-write(2) latency in ns; Hist in clock ticks.
	PerWrite Latency         `json:"per_write"`
	Hist     record.Snapshot `json:"per_write_ticks"`
}

// MessagingResult is one hackbench-model run (seed 001).
type MessagingResult struct {
	Groups    int    `json:"groups"`
	FDs       int    `json:"fds"`
	Loops     int    `json:"loops"`
	Size      int    `json:"size_bytes"`
	Transport string `json:"transport"`
	Workers   int    `json:"workers"`
	// ElapsedNs is wall time from release to the last worker's exit;
	// UserNs and SysNs the workers' CPU time (sum of RUSAGE_THREAD).
	ElapsedNs int64 `json:"elapsed_ns"`
	UserNs    int64 `json:"user_ns"`
	SysNs     int64 `json:"sys_ns"`
	// Sent and Received messages, counted at each end.
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	Bytes    uint64 `json:"bytes"`
	Stopped  bool   `json:"stopped"`
}

// ProbeSize is the result of writing Packets frames of one size.
type ProbeSize struct {
	// Size of each frame in bytes from the Ethernet header on (a vnet header
	// comes on top when VnetHdr).
	Size int `json:"size_bytes"`
	// Packets is write(2) calls made; Written those that took the whole
	// frame; Errors those that failed (LastError names the last errno).
	Packets   uint64 `json:"packets"`
	Written   uint64 `json:"written"`
	Errors    uint64 `json:"errors"`
	LastError string `json:"last_error,omitempty"`
	// MeanNs is the mean time per write(2) in ns: the seed's "time per packet".
	MeanNs float64 `json:"mean_ns_per_packet"`
	// PerWrite is the per-write latency distribution in ns.
	PerWrite Latency `json:"per_write"`
	// Hist is the per-write histogram in clock ticks (Summary.Clock).
	Hist record.Snapshot `json:"per_write_ticks"`
	// RxPackets and RxDropped are the device's rx counter deltas over the
	// writes (frames written into a tap are the device's rx): what the
	// kernel accepted and dropped.
	RxPackets uint64 `json:"rx_packets"`
	RxDropped uint64 `json:"rx_dropped"`
	// SinkReceived and SinkDrops count the frames that reached the UDP sink
	// socket behind the device, and those it dropped (sk_drops).
	SinkReceived uint64 `json:"sink_received"`
	SinkDrops    uint64 `json:"sink_drops"`
}

// AutoRounds records a rounds: auto run: the rule it stopped on and its
// last decision (package compare/auto's Stop).
type AutoRounds struct {
	// Metric and Unit name the headline metric the rule watched
	// ("mean per-call cost", "TSC ticks"); Columns the columns compared,
	// the baseline first.
	Metric  string   `json:"metric"`
	Unit    string   `json:"unit"`
	Columns []string `json:"columns,omitempty"`
	// PrecisionPct is the half-width asked for, in % of the baseline;
	// MaxRounds and MaxTimeNs the limits (0: no time limit).
	PrecisionPct float64 `json:"precision_pct"`
	MaxRounds    int     `json:"max_rounds"`
	MaxTimeNs    int64   `json:"max_time_ns,omitempty"`
	// Rounds is the rounds every variant completed; Reason why the run
	// stopped: "precision reached", "max rounds reached", "max time
	// reached", "interrupted", "" while it runs.
	Rounds int    `json:"rounds"`
	Reason string `json:"reason"`
	// HalfWidthPct is the widest half-width of the 95% CI of the headline
	// difference (of the mean, with one variant) in % of the baseline, at
	// the last decision; nil while undefined (one round, a zero baseline).
	// Within says whether it is within PrecisionPct.
	HalfWidthPct *float64 `json:"ci_half_width_pct,omitempty"`
	Within       bool     `json:"within_precision"`
}

// ProcessCount is how many processes s's trials came from: at least 1 (a
// single-process run's, and a summary without trials). Readers ask it
// rather than count the trials' processes themselves.
func (s *Summary) ProcessCount() int {
	seen := map[int]bool{}
	for _, t := range s.Trials {
		seen[t.Process] = true
	}
	return max(len(seen), 1)
}
