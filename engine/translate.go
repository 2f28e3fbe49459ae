package engine

import (
	"strings"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/noise"
	"github.com/rtload/rtload/pace"
	"github.com/rtload/rtload/profile/sampler"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/results/wakelog"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/rt/seccomp"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/workload"
)

// This file is the one translation of the scenario into what the leaf
// packages take: every typed scenario enum into its leaf's own type
// (policy, recv method, clock, noise kind and syscall, messaging
// transport, send spread, profile event, seccomp profile), and every entry into its
// leaf's config (rt.Sched, rt.Ticker, noise.Config,
// workload.MessagingConfig, pace.Pacer, record.Layout,
// wakelog.Config). Pure functions: translate_test.go tables them
// without a kernel. The leaves take no scenario names (fifo, recvmsg, …)
// as strings; an archtest rule keeps them out.

// The enums. Load fills every enum and Validate refuses an unset one, so
// the zero value never reaches these; each maps it to the leaf's zero
// value (which the leaf refuses) or its kernel default.

// schedPolicy is the one conversion of a scenario policy to rt's: the
// zero value maps to rt.Other, the kernel's default.
func schedPolicy(p scenario.Policy) rt.Policy {
	switch p {
	case scenario.PolicyFIFO:
		return rt.FIFO
	case scenario.PolicyRR:
		return rt.RR
	}
	return rt.Other
}

// receiverMethod is reader method m as the recv call udp makes.
func receiverMethod(m scenario.Method) udp.Method {
	switch m {
	case scenario.MethodRecvFrom:
		return udp.MethodRecvFrom
	case scenario.MethodRecvMsg:
		return udp.MethodRecvMsg
	case scenario.MethodRecvMMsg:
		return udp.MethodRecvMMsg
	}
	return 0
}

// clockKind is the scenario's clock as the kind rt.NewClock makes.
func clockKind(c scenario.Clock) rt.ClockKind {
	switch c {
	case scenario.ClockAuto:
		return rt.ClockAuto
	case scenario.ClockCycles:
		return rt.ClockCycles
	case scenario.ClockTSC:
		return rt.ClockTSC
	case scenario.ClockMonotonic:
		return rt.ClockMonotonic
	}
	return 0
}

// noiseKind is a noise entry's kind as noise's.
func noiseKind(k scenario.NoiseKind) noise.Kind {
	switch k {
	case scenario.NoiseSpin:
		return noise.KindSpin
	case scenario.NoiseMemory:
		return noise.KindMemory
	case scenario.NoiseSyscall:
		return noise.KindSyscall
	case scenario.NoiseMessaging:
		return noise.KindMessaging
	case scenario.NoiseFileWrite:
		return noise.KindFileWrite
	case scenario.NoiseUDP:
		return noise.KindUDP
	}
	return 0
}

// noiseSyscall is a syscall noise's call as noise's (0 for the other
// kinds, which leave it unset).
func noiseSyscall(c scenario.Syscall) noise.Syscall {
	switch c {
	case scenario.SyscallGetppid:
		return noise.SyscallGetppid
	case scenario.SyscallClockGettime:
		return noise.SyscallClockGettime
	case scenario.SyscallSchedYield:
		return noise.SyscallSchedYield
	}
	return 0
}

// messagingTransport is a messaging probe's transport as workload's.
func messagingTransport(t scenario.Transport) workload.Transport {
	if t == scenario.TransportPipe {
		return workload.TransportPipe
	}
	return workload.TransportSocket
}

// profileEvent is what profiled trials sample: cycles or cpu-clock as
// asked, or for auto (auto true) cycles where the PMU counts them, else
// cpu-clock (the profile set tries).
func profileEvent(e scenario.ProfileEvent) (ev sampler.Event, auto bool) {
	switch e {
	case scenario.ProfileEventCycles:
		return sampler.EventCycles, false
	case scenario.ProfileEventCPUClock:
		return sampler.EventCPUClock, false
	}
	return sampler.EventCycles, true
}

// The entries.

// seccompConfig is a reader's seccomp filter (readers[i].seccomp): the
// profile, and the length of an allow-all filter.
func seccompConfig(s scenario.Seccomp) seccomp.Config {
	c := seccomp.Config{Profile: seccomp.None}
	switch s.Profile {
	case scenario.SeccompRuntimeDefault:
		c.Profile = seccomp.RuntimeDefault
	case scenario.SeccompAllowAll:
		c.Profile, c.Instructions = seccomp.AllowAll, s.Instructions
	}
	return c
}

// readerSched is a reader thread's scheduling: named rt.ReaderName, exempt
// from housekeeping (hk, nil: none), the scenario's policy and priority,
// pinned to its CPU, memory locked.
func readerSched(rs scenario.Reader, hk *rt.Housekeeping, allowDegraded bool) rt.Sched {
	return rt.Sched{Name: rt.ReaderName(rs.Name), Exempt: hk, CPUs: []int{int(rs.CPU)}, Policy: schedPolicy(rs.Policy), Priority: rs.Priority,
		Mlock: true, AllowDegraded: allowDegraded}
}

// senderSched is the sender thread of traffic entry t: named
// rt.SenderName(endpoint), exempt from housekeeping (hk, nil: none), on
// its cpus (empty: every CPU this process may use), at its policy and
// priority (fifo, rr) or nice (other), with 1 ns timer slack so that its
// sleeps end on time. A real-time sender without CAP_SYS_NICE fails, or
// with allowDegraded runs at SCHED_OTHER, noted in Applied.Notes.
func senderSched(t scenario.Traffic, hk *rt.Housekeeping, allowDegraded bool) rt.Sched {
	s := rt.Sched{Name: rt.SenderName(t.Endpoint), Exempt: hk, CPUs: t.CPUs, Policy: schedPolicy(t.Policy),
		TimerSlackNs: 1, AllowDegraded: allowDegraded}
	if s.Policy == rt.Other {
		s.Nice = t.Nice
	} else {
		s.Priority = t.Priority
	}
	return s
}

// probeSched is a probe thread's scheduling: named rt.ProbeName, exempt
// from housekeeping hk (nil: none), the probe's policy and priority,
// memory locked when real-time, pinned when it names a CPU.
func probeSched(ps scenario.Probe, hk *rt.Housekeeping, allowDegraded bool) rt.Sched {
	pol := schedPolicy(ps.Policy)
	s := rt.Sched{Name: rt.ProbeName(ps.Name), Exempt: hk, Policy: pol, Priority: ps.Priority, Mlock: pol != rt.Other, AllowDegraded: allowDegraded}
	if ps.CPU != nil {
		s.CPUs = []int{*ps.CPU}
	}
	return s
}

// noiseConfig is noise entry nz as noise.Config: at least one thread;
// allowRT (the scenario's allow_rt_noise) lets it run fifo or rr. Every
// kind parameter is the entry's as Load filled it (noise has no defaults
// of its own: TestNoiseDefaults holds the scenario's to what it accepts).
func noiseConfig(nz scenario.Noise, allowRT, allowDegraded bool) noise.Config {
	return noise.Config{Kind: noiseKind(nz.Kind), Threads: max(nz.Threads, 1), CPUs: nz.CPUs, Policy: schedPolicy(nz.Policy), Priority: nz.Priority, Nice: nz.Nice,
		On: time.Duration(nz.Duty.On), Off: time.Duration(nz.Duty.Off), AllowRT: allowRT, AllowDegraded: allowDegraded,
		Size: int(nz.Size), Rate: nz.Rate, Syscall: noiseSyscall(nz.Syscall), Dir: nz.Dir, Blocks: nz.Blocks, Groups: nz.Groups, FDs: nz.FDs, Loops: nz.Loops}
}

// sendInterval is the time between two messages to the same socket:
// Interval, or 1/Rate when only a rate is given (0 when neither is).
func sendInterval(t scenario.Traffic) time.Duration {
	interval := time.Duration(t.Interval)
	if interval <= 0 && t.Rate > 0 {
		interval = time.Duration(float64(time.Second) / t.Rate)
	}
	return interval
}

// senderPacer is the pacer of traffic entry t over sockets sockets: one
// message per socket every sendInterval(t), spread evenly, in a burst at
// the start of each interval, or at Poisson times (seeded with seed).
func senderPacer(t scenario.Traffic, sockets int, seed uint64) pace.Pacer {
	interval := sendInterval(t)
	switch t.Spread {
	case scenario.SpreadBurst:
		return pace.Burst{Count: sockets, Interval: interval}
	case scenario.SpreadPoisson:
		return pace.NewPoisson(sockets, interval, seed)
	}
	return pace.Even{Count: sockets, Interval: interval}
}

// bucketLayout is the scenario's per-call bucket layout.
func bucketLayout(rep scenario.Report) record.Layout {
	return record.Layout{Width: rep.BucketWidth, Origin: rep.BucketOrigin, Overflow: rep.Overflow}
}

// wakeupLogConfig is the per-wakeup log of reader rs in trial tr: named by
// results.WakeupLogBase, rotated in log_chunk chunks (gzipped once closed)
// and capped at log_limit when the scenario sets them.
func wakeupLogConfig(dir *store.Dir, tr scenario.Trial, rs scenario.Reader, prefix string) wakelog.Config {
	sp := &tr.Spec
	base := results.WakeupLogBase(tr.Index, tr.Variant, tr.Round, rs.Name)
	if prefix != "" {
		base = strings.Replace(base, "wakeups-", "wakeups-"+prefix, 1)
	}
	return wakelog.Config{Dir: dir.Dir, Base: base,
		ChunkBytes: int64(sp.LogChunk), LimitBytes: int64(sp.LogLimit), Compress: sp.LogChunk > 0}
}

// newTicker is reader rs's ticker from t0 (CLOCK_MONOTONIC ns): its period,
// and with overrun: catchup its backlog limit (readers[].max_backlog).
func newTicker(rs scenario.Reader, t0 int64) *rt.Ticker {
	catchUp := rs.Overrun == scenario.OverrunCatchUp
	tk := rt.NewTicker(t0, int64(rs.Period), catchUp)
	if catchUp {
		tk.SetMaxBacklog(uint64(max(rs.MaxBacklog, 0)))
	}
	return tk
}

// overrunMode is the reader's overrun setting as results name it: "skip"
// or "catchup".
func overrunMode(rs scenario.Reader) string {
	if rs.Overrun == scenario.OverrunCatchUp {
		return "catchup"
	}
	return "skip"
}

// messagingProbeConfig is messaging probe ps (seed 001's hackbench) as
// workload's config: its threads named rt.ProbeName, exempt from
// housekeeping hk, pinned to its CPU when it names one; its message size
// is Size[0].
func messagingProbeConfig(ps scenario.Probe, hk *rt.Housekeeping) workload.MessagingConfig {
	cfg := workload.MessagingConfig{Groups: ps.Groups, FDs: ps.FDs, Loops: ps.Loops, Size: int(ps.Size[0]), Transport: messagingTransport(ps.Transport),
		Sched: rt.Sched{Name: rt.ProbeName(ps.Name), Exempt: hk}}
	if ps.CPU != nil {
		cfg.CPUs = []int{*ps.CPU}
	}
	return cfg
}
