package scenario

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// This file is the one home of the scenario's defaults: the value each
// field takes when the scenario leaves it out. Load fills them; Apply
// (--set) and every variant re-derive the ones that depend on another
// field (a reader's priority follows its policy, interval and log_chunk
// follow duration, a noise's or probe's parameters follow its kind), so
// `--duration forever` after Load gets the soak defaults too. Validate only
// reads them.
const (
	defaultDuration    = Duration(10 * time.Second)
	defaultPeriod      = Duration(10 * time.Millisecond)
	defaultPriority    = 80 // readers at fifo/rr
	defaultBatch       = 8
	defaultSize        = Size(64) // traffic payload
	defaultAddress     = "127.0.0.1"
	defaultMTU         = 1500
	defaultBucketWidth = 128
	defaultOrigin      = 64
	defaultOverflow    = 8256

	// A soak run (duration 0): interval records and a rotating wakeup log;
	// with several variants, each runs in turns of this long.
	defaultSoakInterval = Duration(10 * time.Second)
	defaultSoakLogChunk = Size(16 << 20)
	// MaxLogChunk is the largest log_chunk: what a reader of results lets
	// one compressed chunk inflate to (results/wakelog.MaxChunkBytes; a test
	// in engine holds them equal), so that rtload reads back every chunk
	// it wrote.
	MaxLogChunk = Size(64 << 20)
	// SoakLogLimit caps a soak run's per-wakeup log (bytes on disk, per
	// reader) unless the scenario sets log_limit: about five days of 100 Hz
	// wakeups, gzipped.
	SoakLogLimit = Size(1 << 30)
	defaultSlice = Duration(60 * time.Second)

	// A catch-up reader's backlog limit (rt.DefaultMaxBacklog).
	defaultMaxBacklog = 100

	// Drift controls per tick of a reader with endpoints (each of the null
	// syscall and the user loop; probe.ControlTick's cost is measured
	// there: about 31 µs a tick, 0.3% of 10 ms).
	defaultControls = 64
	// An allow-all seccomp filter's length, in BPF instructions.
	defaultSeccompInstructions = 64

	// Traffic: "not as specified" beyond 0.5 % off the target rate (the
	// send-lag bound is the interval itself, see fillTraffic); a
	// real-time sender runs this far below the lowest real-time reader.
	defaultRateTolerance = Percent(0.5)
	senderBelowReaders   = 10

	// Noise kind parameters: the only ones (noise has no defaults of its own;
	// engine TestNoiseDefaults holds noise to accepting these).
	defaultNoiseMemory  = Size(64 << 20)
	defaultNoiseMessage = Size(100)
	defaultNoiseBlock   = Size(256)
	defaultNoisePayload = Size(64)
	defaultNoiseRate    = 10000.0
	defaultNoiseBlocks  = 2000
	defaultNoiseGroups  = 1
	defaultNoiseFDs     = 4
	defaultNoiseLoops   = 100

	// Probe kind parameters: seed 004 (tap_send), seed 002's fstime
	// (file_write), seed 001's hackbench (messaging).
	defaultProbePackets  = 10000
	defaultProbeFrame    = Size(64)
	defaultProbeBlock    = Size(256)
	defaultProbeBlocks   = 2000
	defaultProbeDuration = Duration(10 * time.Second)
	defaultProbeGroups   = 10
	defaultProbeFDs      = 20
	defaultProbeLoops    = 100
	defaultProbeMessage  = Size(100)

	// DefaultProfileFrequency is the profiled trials' sampling rate:
	// samples per second of a reader's time on the CPU.
	DefaultProfileFrequency = 10000
)

// WorkerThreads is the number of threads doing n's work: Threads, or for
// messaging 2 × groups × fds (a sender and a receiver per fd in each group;
// the one thread that runs their rounds comes on top). It is the count the
// report shows and the engine budgets for.
func (n Noise) WorkerThreads() int {
	if n.Kind == NoiseMessaging {
		return 2 * cmp.Or(n.Groups, defaultNoiseGroups) * cmp.Or(n.FDs, defaultNoiseFDs)
	}
	return n.Threads
}

// Threads is how many threads a trial of s runs: one per reader and
// per traffic entry (its sender), each noise entry's WorkerThreads, one
// per probe plus a messaging probe's 2 × groups × fds hackbench workers.
// Validate bounds it by MaxThreads.
func (s *Spec) Threads() int { return s.threadCount().total }

// threadCounts is Threads by kind, with over the field whose threads
// first take the total past MaxThreads ("" when it stays within).
type threadCounts struct {
	readers, senders, noise, probes, total int
	over                                   string
}

func (s *Spec) threadCount() threadCounts {
	t := threadCounts{readers: len(s.Readers), senders: len(s.Traffic)}
	t.total = t.readers + t.senders
	add := func(n *int, k int, path string) {
		k = min(max(k, 0), 1<<30) // no overflow from values Validate refuses anyway
		*n += k
		t.total += k
		if t.total > MaxThreads && t.over == "" {
			t.over = path
		}
	}
	for i, n := range s.Noise {
		path, k := fmt.Sprintf("noise[%d].threads", i), n.Threads
		if n.Kind == NoiseMessaging {
			path = fmt.Sprintf("noise[%d].groups", i)
			k = 2 * clampThreads(cmp.Or(n.Groups, defaultNoiseGroups)) * clampThreads(cmp.Or(n.FDs, defaultNoiseFDs))
		}
		add(&t.noise, k, path)
	}
	for i, p := range s.Probes {
		path, k := fmt.Sprintf("probes[%d]", i), 1
		if p.Kind == ProbeMessaging {
			path, k = path+".groups", 1+2*clampThreads(p.Groups)*clampThreads(p.FDs)
		}
		add(&t.probes, k, path)
	}
	if t.over == "" && t.total > MaxThreads {
		t.over = "readers" // readers and senders alone
	}
	return t
}

// clampThreads is n within 0–2^15: a product of two stays far from
// overflowing.
func clampThreads(n int) int { return min(max(n, 0), 1<<15) }

// realTime reports whether p is fifo or rr.
func realTime(p Policy) bool { return p == PolicyFIFO || p == PolicyRR }

// fill reports whether the field at path is Load's to fill: not given (by
// the source, Apply or a variant), or given as its zero value when zero
// counts as left out (empty names and enums, the kinds' 0 = default). A
// true result records path as defaulted, so rederive can recompute it.
func (s *Spec) fill(path string, zeroIsLeftOut bool) bool {
	if s.has(path) && !zeroIsLeftOut {
		return false
	}
	if s.defaulted == nil {
		s.defaulted = map[string]bool{}
	}
	s.defaulted[path] = true
	return true
}

// dflt sets *v to def when path is left out (not given).
func dflt[T any](s *Spec, path string, v *T, def T) {
	if s.fill(path, false) {
		*v = def
	}
}

// dfltZero sets *v to def when path is left out or given as zero (an
// empty name or enum, a kind parameter's 0).
func dfltZero[T comparable](s *Spec, path string, v *T, def T) {
	var zero T
	if s.fill(path, *v == zero) {
		*v = def
	}
}

// rederive resets every defaulted field to zero and fills the defaults
// again from the fields now given: Apply and variants call it after their
// overrides.
func (s *Spec) rederive() {
	for path := range s.defaulted {
		if v, _, err := s.field(path); err == nil {
			v.SetZero()
		}
	}
	clear(s.defaulted)
	s.fillDefaults()
}

// fillDefaults sets every default for the fields the scenario left out.
func (s *Spec) fillDefaults() {
	if s.fill("name", s.Name == "") && s.File != "" {
		base := filepath.Base(s.File)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	dflt(s, "duration", &s.Duration, defaultDuration)
	dfltZero(s, "clock", &s.Clock, ClockAuto)
	if s.Duration == 0 {
		dflt(s, "interval", &s.Interval, defaultSoakInterval)
		dflt(s, "log_chunk", &s.LogChunk, defaultSoakLogChunk)
		dflt(s, "log_limit", &s.LogLimit, SoakLogLimit)
	}
	if s.fill("rounds", false) {
		s.Rounds = 1
		if s.has("repeat") {
			s.Rounds = Rounds(s.Repeat)
		}
	}
	dflt(s, "processes", &s.Processes, 1)
	if s.Duration == 0 && len(s.Variants) > 1 {
		dflt(s, "slice", &s.Slice, defaultSlice)
	}
	s.fillEndpoints()
	s.fillReaders()
	for i := range s.Noise {
		s.fillNoise(i)
	}
	s.fillTraffic() // after readers and noise: a sender's policy follows them
	for i := range s.Probes {
		s.fillProbe(i)
	}
	dflt(s, "report.bucket_width", &s.Report.BucketWidth, defaultBucketWidth)
	dflt(s, "report.bucket_origin", &s.Report.BucketOrigin, defaultOrigin)
	dflt(s, "report.overflow", &s.Report.Overflow, defaultOverflow)
	// A profile section (or one of its fields) turns profiling on unless
	// it says enabled: false.
	if s.fill("profile.enabled", false) {
		s.Profile.Enabled = s.has("profile") || s.has("profile.event") || s.has("profile.frequency")
	}
	if s.Profile.Enabled {
		dfltZero(s, "profile.event", &s.Profile.Event, ProfileEventAuto)
		dflt(s, "profile.frequency", &s.Profile.Frequency, DefaultProfileFrequency)
	}
}

// fillEndpoints fills the endpoints and the namespace they decide.
func (s *Spec) fillEndpoints() {
	taps := false
	for i := range s.Endpoints {
		e, p := &s.Endpoints[i], fmt.Sprintf("endpoints[%d].", i)
		dfltZero(s, p+"name", &e.Name, fmt.Sprintf("ep%d", i))
		dfltZero(s, p+"kind", &e.Kind, EndpointUDP)
		if e.Kind == EndpointUDP {
			dfltZero(s, p+"address", &e.Address, defaultAddress)
		}
		if e.Kind != EndpointTap {
			continue
		}
		taps = true
		dflt(s, p+"devices", &e.Devices, 1)
		dflt(s, p+"mtu", &e.MTU, defaultMTU)
		dflt(s, p+"queues", &e.Queues, 1)
	}
	if s.fill("network.namespace", s.Network.Namespace == 0) {
		s.Network.Namespace = NamespaceHost
		if taps {
			s.Network.Namespace = NamespacePrivate
		}
	}
}

// fillReaders fills the readers; a priority follows its policy.
func (s *Spec) fillReaders() {
	for i := range s.Readers {
		r, p := &s.Readers[i], fmt.Sprintf("readers[%d].", i)
		dfltZero(s, p+"name", &r.Name, fmt.Sprintf("reader%d", i))
		dfltZero(s, p+"policy", &r.Policy, PolicyFIFO)
		if s.fill(p+"priority", false) && realTime(r.Policy) {
			r.Priority = defaultPriority
		}
		dflt(s, p+"period", &r.Period, defaultPeriod)
		dfltZero(s, p+"method", &r.Method, MethodRecvFrom)
		dflt(s, p+"batch", &r.Batch, defaultBatch)
		dfltZero(s, p+"overrun", &r.Overrun, OverrunSkip)
		if r.Overrun == OverrunCatchUp {
			dflt(s, p+"max_backlog", &r.MaxBacklog, defaultMaxBacklog)
		}
		if len(r.Endpoints) > 0 {
			dflt(s, p+"controls", &r.Controls, defaultControls)
		}
		dfltZero(s, p+"seccomp.profile", &r.Seccomp.Profile, SeccompNone)
		if r.Seccomp.Profile == SeccompAllowAll {
			dflt(s, p+"seccomp.instructions", &r.Seccomp.Instructions, defaultSeccompInstructions)
		}
	}
}

// fillTraffic fills the senders. A sender's cpus follow its cpu, its
// policy and priority follow the readers and the noise (senderSched), and
// its send-lag bound follows its interval or rate.
func (s *Spec) fillTraffic() {
	for i := range s.Traffic {
		t, p := &s.Traffic[i], fmt.Sprintf("traffic[%d].", i)
		dflt(s, p+"size", &t.Size, defaultSize)
		dfltZero(s, p+"spread", &t.Spread, SpreadEven)
		if t.CPU != nil {
			dflt(s, p+"cpus", &t.CPUs, []int{*t.CPU})
		}
		policy, priority := s.senderSched(t.CPUs)
		dfltZero(s, p+"policy", &t.Policy, policy)
		if s.fill(p+"priority", false) && realTime(t.Policy) {
			t.Priority = priority
		}
		dflt(s, p+"rate_tolerance", &t.RateTolerance, defaultRateTolerance)
		dflt(s, p+"max_send_lag", &t.MaxSendLag, t.period())
	}
}

// period is the time between two messages to one socket: Interval, or
// 1/Rate; 0 when neither is set or the rate gives no period in ns
// (validate reports the rate).
func (t Traffic) period() Duration {
	switch {
	case t.Interval > 0:
		return t.Interval
	case t.Rate > 0:
		if ns := float64(time.Second) / t.Rate; ns < math.MaxInt64 {
			return Duration(ns)
		}
	}
	return 0
}

// senderSched is a sender's default scheduling: SCHED_FIFO when CPU-bound
// noise (any kind but the paced udp flood) may share a CPU with it (an
// empty list is every CPU), else SCHED_OTHER; and the real-time priority
// it takes, senderBelowReaders below the lowest real-time reader (at
// least 1, and 1 without real-time readers), so that it never delays a
// reader.
func (s *Spec) senderSched(cpus []int) (Policy, int) {
	lowest := 0
	for _, r := range s.Readers {
		if realTime(r.Policy) && r.Priority > 0 && (lowest == 0 || r.Priority < lowest) {
			lowest = r.Priority
		}
	}
	priority := min(maxPriority, max(1, lowest-senderBelowReaders))
	for _, n := range s.Noise {
		if n.Kind != NoiseUDP && shareCPU(cpus, n.CPUs) {
			return PolicyFIFO, priority
		}
	}
	return PolicyOther, priority
}

// shareCPU reports whether threads pinned to a and to b may meet on a
// CPU; an empty list is every CPU.
func shareCPU(a, b []int) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	return slices.ContainsFunc(a, func(c int) bool { return slices.Contains(b, c) })
}

// fillNoise fills noise entry i; its parameters follow its kind, and 0
// stands for the kind's default.
func (s *Spec) fillNoise(i int) {
	n, p := &s.Noise[i], fmt.Sprintf("noise[%d].", i)
	dfltZero(s, p+"kind", &n.Kind, NoiseSpin)
	dfltZero(s, p+"policy", &n.Policy, PolicyOther)
	size := map[NoiseKind]Size{NoiseMemory: defaultNoiseMemory, NoiseMessaging: defaultNoiseMessage,
		NoiseFileWrite: defaultNoiseBlock, NoiseUDP: defaultNoisePayload}[n.Kind]
	if size != 0 {
		dfltZero(s, p+"size", &n.Size, size)
	}
	switch n.Kind {
	case NoiseUDP:
		dfltZero(s, p+"rate", &n.Rate, defaultNoiseRate)
	case NoiseSyscall:
		dfltZero(s, p+"syscall", &n.Syscall, SyscallGetppid)
	case NoiseFileWrite:
		dfltZero(s, p+"blocks", &n.Blocks, defaultNoiseBlocks)
	case NoiseMessaging:
		dfltZero(s, p+"groups", &n.Groups, defaultNoiseGroups)
		dfltZero(s, p+"fds", &n.FDs, defaultNoiseFDs)
		dfltZero(s, p+"loops", &n.Loops, defaultNoiseLoops)
	}
}

// fillProbe fills probe i; its parameters follow its kind.
func (s *Spec) fillProbe(i int) {
	pr, p := &s.Probes[i], fmt.Sprintf("probes[%d].", i)
	dfltZero(s, p+"name", &pr.Name, fmt.Sprintf("probe%d", i))
	dfltZero(s, p+"kind", &pr.Kind, ProbeTapSend)
	dfltZero(s, p+"policy", &pr.Policy, PolicyOther)
	switch pr.Kind {
	case ProbeTapSend:
		dflt(s, p+"packets", &pr.Packets, defaultProbePackets)
		dflt(s, p+"size", &pr.Size, []Size{defaultProbeFrame})
	case ProbeFileWrite:
		dflt(s, p+"block", &pr.Block, defaultProbeBlock)
		dflt(s, p+"blocks", &pr.Blocks, defaultProbeBlocks)
		dflt(s, p+"duration", &pr.Duration, defaultProbeDuration)
	case ProbeMessaging:
		dflt(s, p+"groups", &pr.Groups, defaultProbeGroups)
		dflt(s, p+"fds", &pr.FDs, defaultProbeFDs)
		dflt(s, p+"loops", &pr.Loops, defaultProbeLoops)
		dflt(s, p+"size", &pr.Size, []Size{defaultProbeMessage})
		dfltZero(s, p+"transport", &pr.Transport, TransportSocket)
	}
}
