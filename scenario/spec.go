package scenario

import "time"

// Spec is one scenario as decoded from YAML, with defaults filled in by Load.
// It is pure data: nothing here touches the kernel. Field paths used in
// errors and in --set follow the yaml tags, e.g. "readers[0].method".
type Spec struct {
	// Name identifies the scenario in results directory names and reports.
	Name string `yaml:"name" json:"name"`
	// Description is a one-line summary shown by `rtload list` and before a run.
	Description string `yaml:"description" json:"description"`
	// Duration is the measured time of one trial (one variant in one round).
	// Default 10s. 0 runs until stopped (a soak run: SIGINT/SIGTERM end it
	// and the results are still complete).
	Duration Duration `yaml:"duration" json:"duration"`
	// Interval > 0 emits one interval record per Interval (intervals.jsonl,
	// a live terminal line, the metrics endpoint) and checkpoints
	// summary.json, for soak runs. Default 0 (none; 10s when Duration is 0).
	Interval Duration `yaml:"interval" json:"interval"`
	// LogChunk rotates each per-wakeup log at this size (closed chunks are
	// gzipped); 0 = one plain file. Default 0 (16MiB when Duration is 0).
	LogChunk Size `yaml:"log_chunk" json:"log_chunk"`
	// LogLimit caps the disk used by each per-wakeup log (oldest chunks are
	// deleted, and the summary says how many rows); 0 = no cap.
	LogLimit Size `yaml:"log_limit" json:"log_limit"`
	// Warmup runs the trial unmeasured before Duration starts. Default 0.
	Warmup Duration `yaml:"warmup" json:"warmup"`
	// Clock chooses the per-call timer: auto (cycles where the PMU gives
	// them, else TSC if invariant, else monotonic), cycles (the reader
	// thread's core cycles, PERF_COUNT_HW_CPU_CYCLES kernel+user, read with
	// rdpmc; refused with its reason where the machine cannot give them),
	// tsc, monotonic. Default auto.
	Clock Clock `yaml:"clock" json:"clock"`
	// Rounds is how many times the variant list runs, in alternating order
	// (ABBA: A B, B A, A B, …), or RoundsAuto (`rounds: auto`). Default 1.
	Rounds Rounds `yaml:"rounds" json:"rounds"`
	// Repeat is another name for Rounds (the whole scenario N times,
	// variants alternating inside each repeat); give one or the other.
	Repeat int `yaml:"repeat" json:"repeat,omitempty"`
	// Processes is how many fresh processes run the whole plan (rounds ×
	// variants), one after the other: each re-executes rtload with fresh
	// sockets, a fresh Go runtime and its setup randomised (socket
	// creation order, receive buffer offsets, environment size), so that
	// the process is an independent sample of a verdict (issue 24).
	// 1–MaxProcesses; not with duration 0 (soak), rounds: auto or profile.
	// Default 1: one process, no re-exec.
	Processes int `yaml:"processes" json:"processes,omitempty"`
	// CPUDMALatency is held in /dev/cpu_dma_latency (µs) during every
	// trial, as cyclictest does: 0 keeps CPUs out of deep idle states.
	// -1 leaves the machine's setting alone. Default 0.
	CPUDMALatency int `yaml:"cpu_dma_latency" json:"cpu_dma_latency"`
	// AllowRTNoise permits noise at SCHED_FIFO/RR, which can starve every
	// CPU it runs on. Default false: such noise is refused.
	AllowRTNoise bool `yaml:"allow_rt_noise" json:"allow_rt_noise"`

	// HousekeepingCPUs confine rtload's own machinery (the Go runtime's
	// threads, main, the results writer, the exporter) to these CPUs, so
	// that nothing but the scenario's own threads runs on a reader's CPU.
	// Default (empty): the CPUs this process may use that no reader uses,
	// where any exist (rt.HousekeepingCPUs; with none, the machinery stays
	// unconfined and the run says so). Senders, noise and probes keep their
	// own cpus fields: noise on a reader's CPU can be the workload.
	//
	// Engine: after ResolveCPUs, take these CPUs (or
	// rt.HousekeepingCPUs(allowed, reader CPUs) when empty), call
	// rt.ConfineHousekeeping with every reader, sender, noise and probe
	// thread exempt (rt.Sched.Exempt) before the trial's threads start, and
	// Stop it after they end; record its HousekeepingReport in the trial.
	HousekeepingCPUs []int `yaml:"housekeeping_cpus" json:"housekeeping_cpus,omitempty"`
	// Slice is the length of one variant's turn in a soak (duration 0)
	// with several variants: the variants alternate in slices, A B A B …,
	// until the run is stopped. Default 60s there; only valid there.
	//
	// Engine: with Duration 0, len(Variants) > 1 and Slice > 0, run
	// trials[i % len(variants)] (one round's worth of Expand, rounds
	// ignored) for Slice each, again and again until ctx ends; on Ctrl-C
	// end the current slice as a complete trial and write results for
	// every variant that ran (each slice is one trial, labelled with its
	// variant and slice number). The banner says "variants alternate in
	// 60s slices until stopped".
	Slice Duration `yaml:"slice" json:"slice,omitempty"`
	// Interleave runs each round's variants inside one trial, alternating
	// them in ABBA blocks of this length on the same reader threads and
	// sockets (see Interleave): a block length ("100ms"), off (or 0: one
	// trial per variant per round) or auto (DefaultInterleaveBlock
	// where the variants can interleave, else off with a note). Only
	// variants that set nothing but readers[i].method and readers[i].batch
	// can. Duration stays each variant's measured time per round: an
	// interleaved trial of n variants measures n × duration. Default off.
	//
	// Engine: for each group of trials (Trial.Group), one trial whose
	// readers hold one receiver and one record set per variant
	// (probe.Interleave); one results.Trial per variant, with
	// results.Trial.Interleave and its blocks.
	Interleave Interleave `yaml:"interleave" json:"interleave"`
	// Requires names what the machine must have for the results to mean
	// what the scenario says (kernel config, command line, kernel
	// version, features). `rtload validate` and `run` refuse a machine that
	// lacks any of it, listing each (exit 3), unless --allow-degraded,
	// which runs and marks the results with every unmet requirement.
	Requires Requires `yaml:"requires" json:"requires"`

	// Network says where endpoints live: the host's loopback, or a private
	// network namespace rtload creates for the run (required by tap).
	Network Network `yaml:"network" json:"network"`

	Endpoints []Endpoint `yaml:"endpoints" json:"endpoints"`
	Traffic   []Traffic  `yaml:"traffic" json:"traffic"`
	Readers   []Reader   `yaml:"readers" json:"readers"`
	Noise     []Noise    `yaml:"noise" json:"noise"`
	// Probes are measured workloads other than readers (tap_send).
	Probes   []Probe   `yaml:"probes" json:"probes"`
	Variants []Variant `yaml:"variants" json:"variants"`
	Report   Report    `yaml:"report" json:"report"`
	// Profile adds profiled trials: each variant's trial is followed by
	// the same trial again with its readers' call chains sampled, so no
	// timed histogram is measured under the sampler. Default off.
	Profile Profile `yaml:"profile" json:"profile"`

	// File is the source name used in error messages (not decoded).
	File string `yaml:"-" json:"-"`
	// pos maps field paths ("readers[0].priority") to their source position.
	pos map[string]Pos
	// cmdline holds the paths set by Apply (--set) or ApplyFlag (a flag
	// such as --duration), each with what the user typed to set it ("--set
	// duration", "--duration"), so that Validate blames the command line,
	// not the file, for their values, in the user's own words.
	cmdline map[string]string
	// sets are Apply's entries that took, "path=value" with path
	// normalised, in the order given (Sets).
	sets []string
	// defaulted holds the paths whose value came from defaults.go, so that
	// Apply and variants can re-derive them (rederive).
	defaulted map[string]bool
	// invalid holds the enum values the source spelled wrong, by path;
	// Validate lists them with every other problem.
	invalid map[string]*Error
	// held are the decode problems of a spec from LoadLenient: Validate
	// lists them with its own, and leaves out its own about the fields
	// they name (a field that did not decode holds its zero or default
	// value, which says nothing about the file).
	held ErrorList
}

// Pos is a line and column in the scenario source, 1-based.
type Pos struct {
	Line, Col int
}

// Network places the run's endpoints.
type Network struct {
	// Namespace is host (sockets on the host's loopback) or private: rtload
	// creates a network namespace named rtl<pid>-<run id>, builds every
	// endpoint inside it and deletes it at the end. Default host, or private
	// when any endpoint is a tap.
	Namespace Namespace `yaml:"namespace" json:"namespace"`
}

// Endpoint is a group of receive sockets.
type Endpoint struct {
	// Name is how traffic and readers refer to the group. Default "ep<i>".
	Name string `yaml:"name" json:"name"`
	// Kind is the endpoint type: udp (sockets on loopback, fed by sendto)
	// or tap (sockets bound to tap devices' addresses in rtload's private
	// namespace, fed by frames written into the devices). Default udp.
	Kind EndpointKind `yaml:"kind" json:"kind"`
	// Count is the number of sockets (the fanout). Must be ≥ 1.
	Count int `yaml:"count" json:"count"`
	// Address is the bind address of a udp group: loopback only
	// (127.0.0.0/8 or ::1). Default 127.0.0.1. A tap group's addresses are
	// assigned by rtload from 198.18.0.0/15 (device k gets 198.18.k.1/24)
	// and this field must be left out.
	Address string `yaml:"address" json:"address"`
	// Devices is the number of tap devices of a tap group; socket i is
	// behind device i % devices. Default 1.
	Devices int `yaml:"devices" json:"devices,omitempty"`
	// MTU of each tap device, 68–65521. Default 1500.
	MTU int `yaml:"mtu" json:"mtu,omitempty"`
	// Queues per tap device (IFF_MULTI_QUEUE when > 1), 1–16. Default 1.
	Queues int `yaml:"queues" json:"queues,omitempty"`
	// VnetHdr opens tap devices with IFF_VNET_HDR (each frame is prefixed
	// with a zeroed virtio_net_hdr). Default false.
	VnetHdr bool `yaml:"vnet_hdr" json:"vnet_hdr,omitempty"`
	// Port is the first port; sockets take consecutive ports. 0 = ephemeral. Default 0.
	Port int `yaml:"port" json:"port"`
	// RcvBuf is SO_RCVBUF in bytes; 0 keeps the kernel default.
	RcvBuf Size `yaml:"rcvbuf" json:"rcvbuf"`
}

// Traffic is a paced sender feeding one endpoint group.
type Traffic struct {
	// Endpoint names the target group.
	Endpoint string `yaml:"endpoint" json:"endpoint"`
	// Interval between two messages to the same socket (20ms in the seed).
	// Exactly one of Interval and Rate is set.
	Interval Duration `yaml:"interval" json:"interval"`
	// Rate is messages per second per socket; alternative to Interval.
	Rate float64 `yaml:"rate" json:"rate"`
	// Size is the UDP payload size in bytes. Default 64. Minimum 16 (sequence + timestamp).
	Size Size `yaml:"size" json:"size"`
	// Spread places sockets' sends within an interval: even, burst, poisson. Default even.
	Spread Spread `yaml:"spread" json:"spread"`
	// CPU is the older spelling of CPUs with one CPU: `cpu: 1` is
	// `cpus: [1]` (give one or the other). nil = not given.
	CPU *int `yaml:"cpu" json:"cpu,omitempty"`
	// CPUs is the sender thread's CPU affinity; empty = every CPU this
	// process may use. Default [cpu] when cpu is given.
	//
	// Engine: rt.Sched.CPUs of the sender thread (never CPU).
	CPUs []int `yaml:"cpus" json:"cpus,omitempty"`
	// Policy and Priority of the sender thread: fifo, rr or other, and
	// 1–99 for fifo/rr (0 for other). Default: fifo at the lowest
	// real-time reader priority − 10 (at least 1; 1 without real-time
	// readers) when CPU-bound noise (every noise kind but udp) may run on
	// a CPU the sender may use; otherwise other. A SCHED_OTHER sender
	// competing with 5 spin threads on 2 CPUs fell 3.7–7.2 ms behind (send
	// lag p90–p99, issue 14): noise of the scenario's own then changed the
	// traffic it measures. Below the readers, it never delays them. RT
	// throttling (sched_rt_runtime_us) is left as it is: the sender's
	// runtime counts in the same budget as the readers'.
	//
	// Engine: rt.Sched{Policy, Priority, Nice, CPUs, Exempt} for the sender
	// thread; without CAP_SYS_NICE and with --allow-degraded it runs at
	// SCHED_OTHER and the trial is marked degraded (Preflight lists it).
	Policy   Policy `yaml:"policy" json:"policy"`
	Priority int    `yaml:"priority" json:"priority"`
	// Nice of a policy-other sender, -20–19. Default 0.
	Nice int `yaml:"nice" json:"nice,omitempty"`
	// RateTolerance is how far the achieved message rate may be from the
	// target before the trial is marked "traffic not as specified", in
	// percent of the target (0.5 or "0.5%"). Default 0.5%.
	//
	// Engine: per traffic group, achieved = messages sent / measured
	// time, target = sockets / interval; |achieved − target| / target ×
	// 100 > RateTolerance marks the trial (text, summary.json, compare).
	RateTolerance Percent `yaml:"rate_tolerance" json:"rate_tolerance"`
	// MaxSendLag is the largest send-lag p99 (how late each send was
	// against its pacer deadline) before the trial is marked "traffic not
	// as specified". Default: the traffic interval (1/rate).
	//
	// Engine: record every send's lag (now − pacer deadline) per group;
	// p99 > MaxSendLag marks the trial; print p50/p99/max next to the
	// achieved rate.
	MaxSendLag Duration `yaml:"max_send_lag" json:"max_send_lag"`
}

// Reader is a real-time thread draining endpoint groups on every tick.
type Reader struct {
	// Name labels the reader in reports. Default "reader<i>".
	Name string `yaml:"name" json:"name"`
	// Endpoints lists the groups drained each tick, in order. May be empty
	// (a pure timer-latency probe, like cyclictest).
	Endpoints []string `yaml:"endpoints" json:"endpoints"`
	// CPU is the CPU the thread is pinned to, or auto: rtload chooses one
	// of the CPUs it may use (ChooseCPUs; ResolveCPUs records the choice
	// here before the run). Default 0.
	CPU CPU `yaml:"cpu" json:"cpu"`
	// AutoCPU is set by ResolveCPUs when CPU was auto and is now its
	// choice; summary.json shows it as cpu_auto. Not decoded.
	AutoCPU bool `yaml:"-" json:"cpu_auto,omitempty"`
	// Policy is fifo, rr or other. Default fifo.
	Policy Policy `yaml:"policy" json:"policy"`
	// Priority is the SCHED_FIFO/RR priority, 1–99 (0 for other). Default 80 for fifo/rr.
	Priority int `yaml:"priority" json:"priority"`
	// Period between ticks (absolute deadlines start + k*period). Default 10ms.
	Period Duration `yaml:"period" json:"period"`
	// Method is the recv call: recvfrom, recvmsg, recvmmsg. Default recvfrom.
	Method Method `yaml:"method" json:"method"`
	// Batch is the vlen for recvmmsg (1–1024). Default 8; ignored otherwise.
	Batch int `yaml:"batch" json:"batch"`
	// Overrun says what to do after missed ticks: skip (next future deadline)
	// or catchup (run every missed tick back to back). Default skip.
	Overrun Overrun `yaml:"overrun" json:"overrun"`
	// MaxBacklog bounds overrun: catchup: when more than this many
	// further ticks are already due, the reader stops catching up and skips
	// them (a backlog skip, counted as missed ticks). 0 skips at once.
	// Default 100 with catchup; only valid with catchup.
	//
	// Engine: (*rt.Ticker).SetMaxBacklog(uint64(MaxBacklog)) before the
	// first Wait; report TickerStats.BacklogSkips and the missed ticks.
	MaxBacklog int `yaml:"max_backlog" json:"max_backlog,omitempty"`
	// Threshold > 0 logs every wakeup later than it to spikes.jsonl, with
	// its context (e.g. 200µs). Default 0 (none).
	Threshold Duration `yaml:"threshold" json:"threshold"`
	// BreakTrace, with Threshold, writes a marker to the ftrace
	// trace_marker and stops tracing (tracing_on = 0) at the first spike,
	// as cyclictest -b does, so the kernel trace ends at the spike.
	BreakTrace bool `yaml:"breaktrace" json:"breaktrace"`
	// Counters are hardware events counted around every recv call with
	// rdpmc, like the cycles clock, by perf(1)'s names: instructions,
	// cache-references, cache-misses, branches, branch-misses; each at
	// most once. Refused where the PMU cannot give them, or left out and
	// marked with --allow-degraded. Default none.
	Counters []string `yaml:"counters" json:"counters,omitempty"`
	// Controls is how many of each drift control the reader times after
	// every tick's drain: null system calls (getppid) and runs of a fixed
	// user-space loop, recorded like its recv calls so that compare and
	// check can see, and adjust for, the machine's own drift. 0 turns them
	// off. Default 64 for a reader with endpoints (about 0.3% of a 10 ms
	// tick); a timer-only reader has none.
	Controls int `yaml:"controls" json:"controls"`
	// Seccomp runs the reader's thread under a seccomp(2) filter,
	// installed on that thread only after it is pinned and before its
	// loop starts, so that "does the container's seccomp profile slow
	// recvmsg?" is a variant. `seccomp: runtime-default` is short for
	// `seccomp: {profile: runtime-default}`. Default none.
	//
	// Engine: rt/seccomp.Program(Config{Profile, Instructions}) built
	// with the reader, Install in the thread's setup (rt.Start), the
	// thread's Seccomp and Seccomp_filters read back into
	// results.Reader.Seccomp, and the trial marked invalid when they are
	// not what was asked.
	Seccomp Seccomp `yaml:"seccomp" json:"seccomp,omitzero"`
}

// Seccomp is a reader's seccomp filter (readers[i].seccomp).
type Seccomp struct {
	// Profile is none (no filter), runtime-default (the allowlist of the
	// default seccomp profile of Docker and Podman, compiled for x86_64
	// as libseccomp compiles it: system calls outside it get EPERM) or
	// allow-all (a filter that allows everything after running
	// Instructions instructions, for the cost of a filter's length).
	// Default none.
	Profile SeccompProfile `yaml:"profile" json:"profile"`
	// Instructions is the length of an allow-all filter, 4–4096 (the
	// kernel's BPF_MAXINSNS): the architecture check, instructions − 4
	// no-ops the kernel runs on every system call, and ALLOW. Default 64
	// with allow-all; only valid with allow-all.
	Instructions int `yaml:"instructions" json:"instructions,omitempty"`
}

// shorthandKey makes a scalar stand for the section: `seccomp: allow-all`.
func (Seccomp) shorthandKey() string { return "profile" }

// IsZero reports whether the reader runs without a filter, so that
// summary.json leaves the section out, as it did before it existed.
func (s Seccomp) IsZero() bool {
	return (s.Profile == 0 || s.Profile == SeccompNone) && s.Instructions == 0
}

// Noise is background load.
type Noise struct {
	// Kind of load: spin (busy loop), memory (streaming copies over a
	// buffer), syscall (a tight loop of a cheap syscall), messaging (the
	// hackbench model), file_write (the fstime loop), udp (a loopback flood
	// at a rate). Default spin.
	Kind NoiseKind `yaml:"kind" json:"kind"`
	// Threads is the number of OS threads. Must be ≥ 1. (messaging: its
	// groups × fds × 2 workers instead.)
	Threads int `yaml:"threads" json:"threads"`
	// CPUs pins thread i to CPUs[i % len(CPUs)]; empty = unpinned.
	CPUs []int `yaml:"cpus" json:"cpus"`
	// Policy is other (default), fifo or rr; fifo/rr need allow_rt_noise.
	Policy Policy `yaml:"policy" json:"policy"`
	// Priority for fifo/rr, 1–99.
	Priority int `yaml:"priority" json:"priority"`
	// Nice is the nice value, -20–19. Default 0.
	Nice int `yaml:"nice" json:"nice"`
	// Duty makes the noise bursty: work for On, idle for Off, repeat.
	// Off 0 (default) = always on.
	Duty Duty `yaml:"duty" json:"duty"`
	// Size: memory buffer (default 64MiB), message size for messaging
	// (100), block for file_write (256), payload for udp (64).
	Size Size `yaml:"size" json:"size"`
	// Rate of a udp flood, messages per second per thread. Default 10000.
	Rate float64 `yaml:"rate" json:"rate"`
	// Syscall for kind syscall: getppid (default), clock_gettime, sched_yield.
	Syscall Syscall `yaml:"syscall" json:"syscall,omitempty"`
	// Dir for file_write ("" = a temporary directory, removed after).
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// Blocks per pass for file_write (default 2000).
	Blocks int `yaml:"blocks" json:"blocks,omitempty"`
	// Groups, FDs, Loops of each messaging round (defaults 1, 4, 100).
	Groups int `yaml:"groups" json:"groups,omitempty"`
	FDs    int `yaml:"fds" json:"fds,omitempty"`
	Loops  int `yaml:"loops" json:"loops,omitempty"`
}

// Duty is an on/off cycle.
type Duty struct {
	On  Duration `yaml:"on" json:"on"`
	Off Duration `yaml:"off" json:"off"`
}

// Probe is a measured workload that is not a socket reader.
type Probe struct {
	// Name labels the probe in reports. Default "probe<i>".
	Name string `yaml:"name" json:"name"`
	// Kind is tap_send (write Packets frames of each Size into the first
	// device of a tap endpoint group, timing every write(2); seed 004),
	// file_write (Block-byte write(2) calls, Blocks per pass then lseek to
	// 0, for Duration; seed 002's fstime) or messaging (hackbench: Groups of
	// FDs senders and FDs receivers, Loops messages of Size bytes; seed 001).
	Kind ProbeKind `yaml:"kind" json:"kind"`
	// Endpoint names the tap group whose device the frames are written into.
	Endpoint string `yaml:"endpoint" json:"endpoint"`
	// Packets written per size, 1–10,000,000. Default 10000 (the seed's).
	Packets int `yaml:"packets" json:"packets"`
	// Size lists the frame sizes swept, in bytes from the Ethernet header on
	// (a vnet header comes on top): 60–65535 and ≤ mtu + 14. A single value
	// may be written without brackets. Default [64].
	Size []Size `yaml:"size" json:"size"`
	// CPU pins the probe thread; nil = unpinned.
	CPU *int `yaml:"cpu" json:"cpu,omitempty"`
	// Policy and Priority of the probe thread, as for readers. Default other.
	Policy   Policy `yaml:"policy" json:"policy"`
	Priority int    `yaml:"priority" json:"priority"`
	// Block is bytes per write(2) for file_write (default 256).
	Block Size `yaml:"block" json:"block,omitempty"`
	// Blocks is writes per pass before lseek to 0, file_write (default 2000).
	Blocks int `yaml:"blocks" json:"blocks,omitempty"`
	// Duration of the file_write loop (default 10s, the seed's alarm(10)).
	Duration Duration `yaml:"duration" json:"duration,omitempty"`
	// Dir holds the file_write file ("" = a temporary directory, removed after).
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// Groups, FDs, Loops of messaging (hackbench defaults 10, 20, 100); its
	// message size is Size[0] (default 100).
	Groups int `yaml:"groups" json:"groups,omitempty"`
	FDs    int `yaml:"fds" json:"fds,omitempty"`
	Loops  int `yaml:"loops" json:"loops,omitempty"`
	// Transport of messaging: socket (AF_UNIX socketpair, default) or pipe.
	Transport Transport `yaml:"transport" json:"transport,omitempty"`
}

// Variant is a named set of overrides applied on top of the base spec, with
// the same path syntax as --set ("readers[0].method": "recvmsg").
type Variant struct {
	Name string            `yaml:"name" json:"name"`
	Set  map[string]string `yaml:"set" json:"set"`
}

// Report shapes the terminal histogram table (the seed's layout).
type Report struct {
	// BucketWidth in clock ticks. Default 128 (the seed's).
	BucketWidth uint64 `yaml:"bucket_width" json:"bucket_width"`
	// BucketOrigin is the lower edge of the first bucket; values below it go
	// to a bucket labelled 0. Default 64, which gives the seed's labels
	// (1472, 1600, …).
	BucketOrigin uint64 `yaml:"bucket_origin" json:"bucket_origin"`
	// Overflow is the lower edge of the overflow row. Default 8256 ("8256+").
	Overflow uint64 `yaml:"overflow" json:"overflow"`
}

// Profile asks for profiled trials (issue 16): in every round each
// variant's timed trial is followed by a profiled one (A, A profiled, B,
// B profiled, …), whose reader threads are sampled with perf_event_open(2)
// (kernel and user call chains) and whose profiles are written per
// variant (profile-<variant>.pb.gz, .folded) for `rtload explain`.
// `profile: true` is short for `profile: {enabled: true}`; a profile
// section that leaves enabled out is on.
type Profile struct {
	// Enabled runs the profiled trials. Default false, true when the
	// section is given.
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Event is what is sampled: auto (cycles where a PMU counts them,
	// else cpu-clock, the fallback recorded), cpu-clock (the thread's CPU
	// time; no PMU needed) or cycles. Default auto.
	Event ProfileEvent `yaml:"event" json:"event"`
	// Frequency is samples per second of the reader thread's time on the
	// CPU (cpu-clock: one sample every 1e9/frequency ns of it; cycles: the
	// kernel adapts the period to it), 10–100000. Default 10000.
	Frequency int `yaml:"frequency" json:"frequency"`
}

// shorthandKey makes a scalar stand for the section: `profile: true`.
func (Profile) shorthandKey() string { return "enabled" }

// Trial is one run of the scenario: one variant in one round, fully resolved.
type Trial struct {
	// Index is the position in run order, 0-based.
	Index int
	// Round is the 0-based round number.
	Round int
	// Variant is the variant name, or "base" when the scenario has none.
	Variant string
	// Profiled marks the extra trial of a variant whose readers are
	// sampled (Spec.Profile): its histograms are measured under the
	// sampler and never mixed with the timed trials'.
	Profiled bool
	// Spec is a deep copy with the variant's overrides applied.
	Spec Spec
	// Interleave > 0 runs this trial inside one trial with the other
	// trials of its Group (the Index of the group's first trial;
	// consecutive trials of one round), their variants alternating in
	// blocks of Interleave (Spec.Interleave, InterleaveBlock). 0: alone.
	Interleave Duration
	Group      int
}

// Host describes the machine for Validate.
type Host struct {
	// NumCPU is the number of CPUs of the machine (CPU ids 0..NumCPU-1);
	// ≤ 0 = unknown.
	NumCPU int
	// Allowed are the CPUs this process may use, ascending
	// (sched_getaffinity(2): taskset, or a container's cpuset); nil =
	// unknown. When known, every fixed CPU must be one of them, and every
	// `cpu: auto` must find one (ChooseCPUs).
	Allowed []int
}

// Duration is a time.Duration that decodes from Go duration strings ("10ms").
type Duration time.Duration

// Size is a byte count that decodes from "64", "256KiB", "1MiB", "4KB".
type Size uint64
