package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the tables the validator and the scenario reference
// (docs/scenario.md, written by `make docs`) share, so that the two cannot
// drift: the integer bounds Validate checks (bounds), and Reference, one
// row per field whose default comes from the constants fillDefaults uses
// (defaults.go) and whose allowed values come from bounds, the enum tables
// (enums.go) and the limits Validate checks. A test in the module root's
// docs check (internal/docgen) fails when docs/scenario.md was not
// regenerated; TestReferenceCoversSpec fails when a field of Spec has no
// row or a row names no field.

// bound is an inclusive integer range.
type bound struct{ lo, hi int }

func (b bound) String() string { return fmt.Sprintf("%d–%d", b.lo, b.hi) }

// bounds are the integer ranges Validate checks, by field pattern (list
// indices written []): c.bounded looks a field up here, and Reference
// prints the same range.
var bounds = map[string]bound{
	"repeat":                {1, MaxRounds},
	"processes":             {1, MaxProcesses},
	"cpu_dma_latency":       {-1, 1_000_000},
	"requires.cpus":         {0, 1 << 16},
	"profile.frequency":     {10, 100_000},
	"endpoints[].count":     {1, maxCount},
	"endpoints[].devices":   {1, 256},
	"endpoints[].mtu":       {68, 65521},
	"endpoints[].queues":    {1, 16},
	"endpoints[].port":      {0, 65535},
	"traffic[].priority":    {1, maxPriority},
	"traffic[].nice":        {-20, 19},
	"readers[].priority":    {1, maxPriority},
	"readers[].batch":       {1, maxBatch},
	"readers[].max_backlog": {0, 1_000_000},
	"readers[].controls":    {0, maxControls},
	// The kernel's BPF_MAXINSNS; 4 is the fixed part (rt/seccomp's
	// MinAllowAll and MaxInstructions; a test in engine holds them equal).
	"readers[].seccomp.instructions": {4, 4096},
	"noise[].threads":                {1, maxThreads}, // messaging: 0 allowed (its groups × fds decide)
	"noise[].priority":               {1, maxPriority},
	"noise[].nice":                   {-20, 19},
	"noise[].groups":                 {0, 64},
	"noise[].fds":                    {0, 64},
	"noise[].loops":                  {0, 1_000_000},
	"noise[].blocks":                 {0, 1_000_000},
	"probes[].priority":              {1, maxPriority},
	"probes[].packets":               {1, 10_000_000},
	"probes[].file_blocks":           {1, 1_000_000}, // probes[].blocks (file_write)
	"probes[].groups":                {1, 64},
	"probes[].fds":                   {1, 64},
	"probes[].loops":                 {1, 10_000_000},
	"probes[].messages_size":         {1, 1 << 20}, // probes[].size (messaging), bytes
}

var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

// pattern is path with its list indices taken out: "readers[2].batch" →
// "readers[].batch".
func pattern(path string) string { return indexRE.ReplaceAllString(path, "[]") }

// boundOf returns the bound of the field at path (bounds' key when it is
// spelled otherwise), and panics on a field without one: a programming
// error that every validate test meets.
func boundOf(key string) bound {
	b, ok := bounds[pattern(key)]
	if !ok {
		panic("scenario: no bound for " + key)
	}
	return b
}

// bounded checks v against the bound of the field at path.
func (c *checker) bounded(path string, v int) {
	b := boundOf(path)
	c.intRange(path, v, b.lo, b.hi)
}

// Non-integer limits Validate checks, named so that Reference prints them.
const (
	minInterval  = Duration(100 * time.Millisecond)
	minLogChunk  = Size(4 << 10)
	minNoiseMem  = Size(2 << 10)
	maxNoiseMem  = Size(16 << 30)
	maxBlock     = Size(1 << 20) // file_write and messaging blocks
	minFrame     = 60            // tap_send frame size, bytes
	minSlice     = Duration(time.Second)
	maxNoiseRate = 10_000_000 // udp noise, msg/s per thread
)

// A Field is one row of the scenario reference: a field's path as --set
// and errors spell it, with [] for every list item ("readers[].period");
// its unit or type; its default ("" when it has none: a required field,
// or one whose absence means "none"); and the values Validate allows,
// with what they mean.
type Field struct {
	Path, Unit, Default, Allowed string
}

// enumValues lists t's values as `a`, `b`, each followed by what it
// means when notes has it: `a` (meaning). A note for a value t does not
// have panics (TestReferenceEnumNotes reaches every one).
func enumValues(t *enumTable, notes map[string]string) string {
	for k := range notes {
		if !strings.Contains(strings.Join(t.names, "\x00")+"\x00", k+"\x00") {
			panic("scenario: note for unknown " + t.noun + " " + k)
		}
	}
	var b strings.Builder
	for i, n := range t.names[1:] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + n + "`")
		if w := notes[n]; w != "" {
			b.WriteString(" (" + w + ")")
		}
	}
	return b.String()
}

func code(s string) string { return "`" + s + "`" }

// Reference returns the scenario reference's rows, in the order of
// docs/scenario.md.
func Reference() []Field {
	return slices.Concat(runFields(), requiresFields(), endpointFields(), trafficFields(),
		readerFields(), noiseFields(), probeFields(), variantFields(), reportFields(), profileFields())
}

// boundText is the range of the field at path, as Validate checks it.
func boundText(path string) string { return boundOf(path).String() }

// runFields are the top-level fields: the run's name, length and clock, its
// rounds and processes, soak logging, cpu_dma_latency, RT noise, the CPUs
// rtload keeps to itself, soak slices and interleaving.
func runFields() []Field {
	return []Field{
		{"name", "string", "file name", "≤ " + strconv.Itoa(maxNameLen) + " bytes; no `/`, `\\`, control characters; not `.`, `..` (`rtload-results/<name>-<time>/`)"},
		{"description", "string", "", "one line, shown by `list` and before a run"},
		{"duration", "duration", code(defaultDuration.String()), "0–" + MaxDuration.String() + "; measured time of each trial; 0 = until stopped (soak: for longer runs, with rotated logs and checkpoints)"},
		{"warmup", "duration", code("0"), "≥ 0; runs unmeasured before each trial"},
		{"clock", "", code(ClockAuto.String()), enumValues(&clockTable, map[string]string{
			"auto":      "cycles where the PMU gives them, else the TSC if invariant (by CPUID or constant_tsc and nonstop_tsc), else monotonic; each refusal listed",
			"cycles":    "the reader thread's core cycles, kernel+user, via `rdpmc`; needs a PMU, `kernel.perf_event_paranoid ≤ 1` or `CAP_PERFMON`, user `rdpmc` enabled",
			"tsc":       "the TSC, `rdtscp; lfence` (`lfence; rdtsc; lfence` where CPUID hides RDTSCP), its rate against `CLOCK_MONOTONIC` checked in every trial (a trial off by more than 0.1% is marked invalid)",
			"monotonic": "`CLOCK_MONOTONIC`",
		})},
		{"rounds", "count, or `auto`", code("1"), roundsAllowed + "; the whole scenario this many times, variants alternating inside each (A B A B …); each round is one sample; `--rounds N`. `auto`: rounds until the 95% CI of the headline difference is within `--precision` (see [variants.md](variants.md#repeat-until-certain-rounds-auto))"},
		{"repeat", "count", "", boundText("repeat") + "; the older spelling of `rounds` (give one, or both the same); `--repeat N`"},
		{"processes", "count", code("1"), boundText("processes") + "; the whole plan in N fresh processes one after the other, setup randomised (`--processes N`); 1 with a soak, `rounds: auto` or `profile`"},
		{"interval", "duration", "none (" + code(defaultSoakInterval.String()) + " when `duration` is 0, also via `--duration forever`)", "0 (none) or ≥ " + minInterval.String() + ": interval records, live line, checkpoints (soak)"},
		{"log_chunk", "size", "none (" + code(defaultSoakLogChunk.String()) + " when `duration` is 0)", "0 (no rotation: one plain file) or " + minLogChunk.String() + "–" + MaxLogChunk.String() + " (what a reader inflates one chunk to): rotate the per-wakeup log, gzip closed chunks"},
		{"log_limit", "size", "none (" + code(SoakLogLimit.String()) + " when `duration` is 0)", "0 (no cap) or ≥ 2 × `log_chunk`: the cap on the log's total, oldest chunks dropped first"},
		{"cpu_dma_latency", "µs", code("0"), boundText("cpu_dma_latency") + "; held in `/dev/cpu_dma_latency` during each trial, as cyclictest does; −1 leaves it alone"},
		{"allow_rt_noise", "bool", code("false"), "permit noise at `fifo`/`rr` (it can starve every CPU it runs on)"},
		{"housekeeping_cpus", "CPUs", "the CPUs this process may use that no reader uses (none left: unconfined, and said so)", "CPUs this process may use, each once, no reader's CPU: rtload's own threads (Go runtime, main, writer, exporter) are confined there for each trial (and kept there: new threads are confined within 100 ms); readers, senders, noise and probes keep their own `cpus` and names (`rtl-rd/<reader>`, `rtl-tx/<endpoint>`, `rtl-nz/<kind>.<i>`, `rtl-pr/<probe>`; the writer is `rtl-writer`)"},
		{"slice", "duration", code(defaultSlice.String()) + " in a soak (`duration: 0`) with several variants", "≥ " + minSlice.String() + ", ≥ `interval`, > `warmup`: the variants alternate in slices of this length until the run is stopped (rounds are not counted then)"},
		{"interleave", "block length, `auto` or `off`", "`off` (`auto` in `laight-450`)", interleaveAllowed + ": a block length (" + minInterleaveBlock.String() + "–" + maxInterleaveBlock.String() + ", ≥ the longest reader period, ≤ `duration`) runs each round's variants in one trial, alternating in ABBA blocks on the same reader threads and sockets; only variants that set nothing but `readers[i].method` and `readers[i].batch`, and not with a soak, `interval` or probes (the field that prevents it is named); `auto` = " + DefaultInterleaveBlock.String() + " where that works, else one trial per variant with a note saying why. See [variants.md](variants.md#interleaved-variants-interleave)"},
	}
}

// requiresFields are the requires section: what the machine must have.
func requiresFields() []Field {
	return []Field{
		{"requires.config", "`CONFIG_NAME=value` list", "none", "kernel config options the machine must have, e.g. `CONFIG_HARDENED_USERCOPY=y`, `CONFIG_INIT_ON_ALLOC_DEFAULT_ON=n`, `CONFIG_HZ=1000`; each once"},
		{"requires.cmdline", "`name=value` or `name` list", "none", "kernel command-line parameters, e.g. `init_on_alloc=1`, `hardened_usercopy=off`, `nosmt`; `-` and `_` alike; each once"},
		{"requires.kernel", "version range", "any", "`uname -r` comparisons joined by commas: `\">= 5.10\"`, `\">= 5.4, < 6.2\"` (`>= > <= < == !=`)"},
		{"requires.features", "list", "none", enumValues(&featureTable, map[string]string{
			"tun": "`/dev/net/tun`", "cycles": "the PMU's cycle counter", "counters": "hardware counters",
		}) + "; each once"},
		{"requires.cpus", "CPUs", code("0") + " (any)", boundText("requires.cpus") + ": the least number of CPUs this process may use (its affinity, a container's cpuset)"},
	}
}

// endpointFields are the network namespace and the endpoint groups.
func endpointFields() []Field {
	return []Field{
		{"network.namespace", "", "`host`, or `private` with tap endpoints", enumValues(&namespaceTable, map[string]string{
			"private": "rtload's own namespace, deleted at the end; tap endpoints need it",
		})},
		{"endpoints[].name", "string", code("ep<i>"), "unique"},
		{"endpoints[].kind", "", code(EndpointUDP.String()), enumValues(&endpointTable, map[string]string{
			"udp": "loopback sockets fed by `sendmmsg`", "tap": "sockets behind tap devices fed by frame writes",
		})},
		{"endpoints[].count", "sockets", "", boundText("endpoints[].count") + " (the fanout)"},
		{"endpoints[].address", "IP", code(defaultAddress), "udp: loopback only, 127.0.0.0/8, `::1`; tap: leave out (198.18.k.1 is assigned)"},
		{"endpoints[].port", "port", code("0"), boundText("endpoints[].port") + "; first port, consecutive (port + count − 1 ≤ 65535); 0 = ephemeral"},
		{"endpoints[].rcvbuf", "size", "kernel default", "`SO_RCVBUF`; the report gives what the kernel set"},
		{"endpoints[].devices", "tap devices", code("1"), boundText("endpoints[].devices") + " (tap only; ≤ 256 in all)"},
		{"endpoints[].mtu", "bytes", code(strconv.Itoa(defaultMTU)), boundText("endpoints[].mtu") + " (tap only)"},
		{"endpoints[].queues", "queues per device", code("1"), boundText("endpoints[].queues") + " (tap only; > 1 is IFF_MULTI_QUEUE)"},
		{"endpoints[].vnet_hdr", "bool", code("false"), "IFF_VNET_HDR: frames carry a zeroed virtio_net_hdr (tap only)"},
	}
}

// trafficFields are a traffic entry's: what it sends, how fast, and on
// which thread.
func trafficFields() []Field {
	return []Field{
		{"traffic[].endpoint", "name", "", "an endpoint group"},
		{"traffic[].interval", "duration", "", fmt.Sprintf("per socket, e.g. `20ms`; or `rate`. %s–%s, and at most %s msg/s over the endpoint's sockets (count / interval: one sender thread). A sender that falls more than 1 s (or one interval, if longer) behind skips to the messages due within it; the skipped ones count as due, not sent", minSendInterval, time.Duration(maxSendInterval), thousands(maxSenderRate))},
		{"traffic[].rate", "msg/s per socket", "", fmt.Sprintf("alternative to `interval`; one a day (%s) to %s, and count × rate ≤ %s", strconv.FormatFloat(minSendRate, 'g', 3, 64), thousands(int(maxSendRate)), thousands(maxSenderRate))},
		{"traffic[].size", "size", code(strconv.Itoa(int(defaultSize))), fmt.Sprintf("%d B–%d B payload (16-byte header: sequence, send time)", minSize, maxSize)},
		{"traffic[].spread", "", code(SpreadEven.String()), enumValues(&spreadTable, map[string]string{
			"even": "phases spread across the interval", "burst": "all sockets at once",
		})},
		{"traffic[].cpus", "CPUs", "every CPU (`[cpu]` when `cpu` is given)", "sender thread affinity"},
		{"traffic[].cpu", "CPU", "", "the older spelling of `cpus: [N]` (give one or the other)"},
		{"traffic[].policy", "", "`fifo` when CPU-bound noise (any kind but `udp`) may share the sender's CPUs, else `other`", enumValues(&policyTable, nil) + "; see [senders on time](#senders-on-time)"},
		{"traffic[].priority", "", fmt.Sprintf("with `fifo`: the lowest real-time reader priority − %d (≥ 1); else 0", senderBelowReaders), boundText("traffic[].priority") + " for `fifo`/`rr`, 0 for `other`"},
		{"traffic[].nice", "", code("0"), boundText("traffic[].nice") + ", policy `other` only"},
		{"traffic[].rate_tolerance", "percent", code(defaultRateTolerance.String()), "> 0 and ≤ 100: messages sent further than this from those due (the achieved rate against the target over the sender's time) marks the trial \"traffic not as specified\""},
		{"traffic[].max_send_lag", "duration", "the interval (1/rate)", "> 0: a send-lag p99 above it marks the trial \"traffic not as specified\""},
	}
}

// readerFields are a reader's: its thread, tick, receive method, spike
// logging, drift controls, counters and seccomp filter.
func readerFields() []Field {
	return []Field{
		{"readers[].name", "string", code("reader<i>"), "unique; the rules of `name` (it is part of the wakeup log's file name)"},
		{"readers[].endpoints", "names", "", "groups drained each tick; `[]` = pure timer-latency probe"},
		{"readers[].cpu", "CPU or `auto`", code("0"), "a CPU this process may use (its `sched_getaffinity` mask: taskset, a container's cpuset; the message names the set), or `auto`: see [cpu: auto](#cpu-auto)"},
		{"readers[].policy", "", code(PolicyFIFO.String()), enumValues(&policyTable, nil)},
		{"readers[].priority", "", code(strconv.Itoa(defaultPriority)) + " (fifo/rr)", boundText("readers[].priority") + " for fifo/rr, 0 for other"},
		{"readers[].period", "duration", code(defaultPeriod.String()), "≥ " + minPeriod.String() + "; ticks at start + k·period"},
		{"readers[].method", "", code(MethodRecvFrom.String()), enumValues(&methodTable, nil)},
		{"readers[].batch", "messages", code(strconv.Itoa(defaultBatch)), boundText("readers[].batch") + ", recvmmsg only"},
		{"readers[].overrun", "", code(OverrunSkip.String()), enumValues(&overrunTable, map[string]string{
			"skip": "jump to the latest due tick, count the missed ones", "catchup": "run every missed tick back to back",
		})},
		{"readers[].max_backlog", "ticks", code(strconv.Itoa(defaultMaxBacklog)) + " with `catchup`", boundText("readers[].max_backlog") + ", `catchup` only: with more ticks than this already due, stop catching up and skip them (counted as missed ticks)"},
		{"readers[].threshold", "duration", "none", "≥ 0: log wakeups later than this to spikes.jsonl"},
		{"readers[].breaktrace", "bool", code("false"), "at the first spike, write the ftrace marker and stop tracing; needs `threshold`"},
		{"readers[].controls", "calls per tick", code(strconv.Itoa(defaultControls)) + " with endpoints, else 0", boundText("readers[].controls") + "; 0 = off, and a reader without endpoints has none: after every tick's drain, this many null system calls (`getppid`) and this many runs of a fixed user-space loop, each timed like a recv call, then the recv control (16 rounds of a 64-byte datagram sent to a loopback socket of the reader's own and read with the reader's method: a timed data call and a timed EAGAIN call); see [drift controls](#drift-controls)"},
		{"readers[].counters", "event names", "none", "hardware events per recv call via `rdpmc`: " + codeList(counterNames) + ", each once; needs a PMU (refused without one; `--allow-degraded` leaves them out and marks the run)"},
		{"readers[].seccomp", "profile or section", "none", "`seccomp: runtime-default` = `{profile: runtime-default}`: a seccomp filter on the reader's thread only, installed before its loop; not with `interleave` (a filter cannot be removed from a thread: each variant runs its own trial). See [variants.md](variants.md#seccomp-filters)"},
		{"readers[].seccomp.profile", "", code(SeccompNone.String()), enumValues(&seccompTable, map[string]string{
			"none":            "no filter",
			"runtime-default": "the allowlist of Docker's and Podman's default profile, moby `default.json`, compiled for x86_64 as libseccomp does: 310 instructions, 298 system calls allowed, the rest EPERM; argument filters simplified",
			"allow-all":       "an architecture check, `instructions` − 4 no-ops, ALLOW: every system call runs the whole filter",
		}) + "; x86_64 only"},
		{"readers[].seccomp.instructions", "BPF instructions", code(strconv.Itoa(defaultSeccompInstructions)) + " with `allow-all`", boundText("readers[].seccomp.instructions") + " (the kernel's `BPF_MAXINSNS`), `allow-all` only"},
	}
}

// noiseFields are a noise entry's: its kind, threads, duty cycle and the
// settings of each kind.
func noiseFields() []Field {
	return []Field{
		{"noise[].kind", "", code(NoiseSpin.String()), enumValues(&noiseTable, map[string]string{
			"spin": "busy loop, loops/s", "memory": "streaming copies over a buffer, bytes/s", "syscall": "tight loop of a cheap syscall, syscalls/s",
			"messaging": "the hackbench model, messages/s", "file_write": "the fstime loop, bytes/s", "udp": "loopback flood at a rate, messages/s",
		})},
		{"noise[].threads", "threads", "", boundText("noise[].threads") + " (messaging: ignored, 0 allowed; it runs groups × fds × 2 worker threads, the count the report shows); a trial's threads, all entries together (readers, traffic senders, noise workers, probes and their hackbench workers), at most " + strconv.Itoa(MaxThreads) + ": the Go runtime stops at 10000 OS threads"},
		{"noise[].cpus", "CPUs", "unpinned", "thread i on cpus[i % len]"},
		{"noise[].policy", "", code(PolicyOther.String()), enumValues(&policyTable, nil) + "; `fifo`/`rr` only with `allow_rt_noise: true`"},
		{"noise[].priority", "", code("0"), boundText("noise[].priority") + " for `fifo`/`rr`, 0 for `other`"},
		{"noise[].nice", "", code("0"), boundText("noise[].nice")},
		{"noise[].duty.on", "duration", "always on", "> 0 when `off` is set: bursty noise works for `on`, then idles for `off`"},
		{"noise[].duty.off", "duration", code("0"), "≥ 0; 0 = always on"},
		{"noise[].size", "size", "kind's default", fmt.Sprintf("memory: the buffer per thread, %s–%s (default %s; `rtload run` refuses memory noise whose threads × size, over all entries, exceeds half the host's available memory: MemAvailable, or the room under the cgroup's memory limit); messaging: the message, ≤ %s (default %s); file_write: the block, ≤ %s (default %s); udp: the payload, %d B–%d B (default %s)",
			minNoiseMem, maxNoiseMem, defaultNoiseMemory, maxBlock, defaultNoiseMessage, maxBlock, defaultNoiseBlock, minSize, maxSize, defaultNoisePayload)},
		{"noise[].rate", "msg/s per thread", code(strconv.FormatFloat(defaultNoiseRate, 'f', -1, 64)), fmt.Sprintf("0–%s (0 = the default), udp only", thousands(maxNoiseRate))},
		{"noise[].syscall", "", code(SyscallGetppid.String()), enumValues(&syscallTable, nil) + "; syscall only"},
		{"noise[].dir", "directory", "the temporary directory", "file_write only; owned by you or root, and the file in it is created link-safe (`rtload-fstime-<pid>-<random>`, `O_EXCL|O_NOFOLLOW`, mode 0666 less the umask)"},
		{"noise[].blocks", "writes per pass", code(strconv.Itoa(defaultNoiseBlocks)), boundText("noise[].blocks") + " (0 = the default), file_write only"},
		{"noise[].groups", "groups", code(strconv.Itoa(defaultNoiseGroups)), boundText("noise[].groups") + " (0 = the default), messaging only"},
		{"noise[].fds", "fds per group", code(strconv.Itoa(defaultNoiseFDs)), boundText("noise[].fds") + " (0 = the default), messaging only"},
		{"noise[].loops", "messages per round", code(strconv.Itoa(defaultNoiseLoops)), boundText("noise[].loops") + " (0 = the default), messaging only"},
	}
}

// probeFields are a probe's: its kind, thread and the settings of each kind.
func probeFields() []Field {
	return []Field{
		{"probes[].name", "string", code("probe<i>"), "unique among readers and probes"},
		{"probes[].kind", "", code(ProbeTapSend.String()), enumValues(&probeTable, map[string]string{
			"tap_send": "seed 004", "file_write": "seed 002, fstime", "messaging": "seed 001, hackbench",
		})},
		{"probes[].endpoint", "name", "", "tap_send: a tap endpoint group (its first device is written into)"},
		{"probes[].packets", "frames per size", code(strconv.Itoa(defaultProbePackets)), boundText("probes[].packets") + ", tap_send"},
		{"probes[].size", "bytes, or a list", fmt.Sprintf("tap_send `[%d]`, messaging `[%d]`", uint64(defaultProbeFrame), uint64(defaultProbeMessage)), fmt.Sprintf("tap_send: %d B – (mtu + 14) B each, the frame from its Ethernet header on (a list sweeps sizes); messaging: one size, 1 B–%s per message", minFrame, maxBlock)},
		{"probes[].cpu", "CPU", "unpinned", "as for readers"},
		{"probes[].policy", "", code(PolicyOther.String()), enumValues(&policyTable, nil)},
		{"probes[].priority", "", code("0"), boundText("probes[].priority") + " for `fifo`/`rr`, 0 for `other`"},
		{"probes[].block", "size", code(defaultProbeBlock.String()), "1 B–" + maxBlock.String() + ": file_write, bytes per `write(2)`"},
		{"probes[].blocks", "writes per pass", code(strconv.Itoa(defaultProbeBlocks)), boundOf("probes[].file_blocks").String() + ": file_write, writes per pass before `lseek` to 0"},
		{"probes[].duration", "duration", code(defaultProbeDuration.String()), "> 0: file_write, run time"},
		{"probes[].dir", "directory", "the temporary directory", "file_write; as for noise"},
		{"probes[].groups", "groups", code(strconv.Itoa(defaultProbeGroups)), boundText("probes[].groups") + ": messaging, hackbench `-g`"},
		{"probes[].fds", "fds per group", code(strconv.Itoa(defaultProbeFDs)), boundText("probes[].fds") + ": messaging, hackbench `-f`"},
		{"probes[].loops", "messages", code(strconv.Itoa(defaultProbeLoops)), boundText("probes[].loops") + ": messaging, hackbench `-l`"},
		{"probes[].transport", "", code(TransportSocket.String()), enumValues(&transportTable, map[string]string{
			"socket": "AF_UNIX socketpair",
		}) + ": messaging"},
	}
}

// variantFields are a variant's: its name and its overrides.
func variantFields() []Field {
	return []Field{
		{"variants[].name", "string", "", "unique; a column in the report; the rules of `name` (part of file names)"},
		{"variants[].set", "path: value", "", "overrides, same paths as `--set`"},
	}
}

// reportFields are the report's bucket layout.
func reportFields() []Field {
	return []Field{
		{"report.bucket_width", "ticks", code(strconv.Itoa(defaultBucketWidth)), "> 0"},
		{"report.bucket_origin", "ticks", code(strconv.Itoa(defaultOrigin)), "lower edge of the first bucket (64 gives the seed's labels)"},
		{"report.overflow", "ticks", code(strconv.Itoa(defaultOverflow)), "> `bucket_origin`: lower edge of the overflow row"},
	}
}

// profileFields are the profile section: sampling the readers after each trial.
func profileFields() []Field {
	return []Field{
		{"profile", "bool or section", "off", "`true` = `{enabled: true}`: a profiled trial after each variant's trial ([profile-explain.md](profile-explain.md)); needs readers and a finite duration"},
		{"profile.enabled", "bool", "`true` when the section is given", "`--profile` sets it"},
		{"profile.event", "", code(ProfileEventAuto.String()), enumValues(&profileEventTable, map[string]string{
			"auto": "cycles where a PMU counts them, else cpu-clock, noted",
		})},
		{"profile.frequency", "samples/s", code(strconv.Itoa(DefaultProfileFrequency)), boundText("profile.frequency") + ", per second of the reader's time on the CPU"},
	}
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = code(n)
	}
	return strings.Join(out, ", ")
}
