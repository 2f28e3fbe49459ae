package noise

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/rt"
)

// Kind is the load a Noise runs. The zero value is no kind.
type Kind uint8

// The kinds of noise New accepts.
const (
	// KindSpin: a busy loop, counted in loops.
	KindSpin Kind = iota + 1
	// KindMemory: streaming copies between the halves of a buffer of
	// Size bytes per thread, counted in bytes.
	KindMemory
	// KindSyscall: a tight loop of the raw syscall Syscall, counted in
	// syscalls.
	KindSyscall
	// KindMessaging: workload.Messaging rounds of Groups × FDs senders
	// and receivers, Loops messages of Size bytes (the hackbench model),
	// counted in messages received.
	KindMessaging
	// KindFileWrite: workload.FileWrite passes of Blocks write(2) calls
	// of Size bytes (the fstime loop), counted in bytes written.
	KindFileWrite
	// KindUDP: a loopback flood of Size-byte payloads at Rate messages
	// per second per thread into a sink the same thread drains, counted
	// in messages sent.
	KindUDP
)

// Kinds are every kind, in the order error messages list them.
var Kinds = []Kind{KindSpin, KindMemory, KindSyscall, KindMessaging, KindFileWrite, KindUDP}

// kindNames are the kinds' names (kindNames[k]), as scenarios and results
// spell them.
var kindNames = [...]string{"", "spin", "memory", "syscall", "messaging", "file_write", "udp"}

// String is the kind's name: "spin", "memory", "syscall", "messaging",
// "file_write", "udp".
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Unit is what Work.Count counts for k: loops, bytes, syscalls, messages.
func (k Kind) Unit() string {
	switch k {
	case KindSpin:
		return "loops"
	case KindMemory, KindFileWrite:
		return "bytes"
	case KindSyscall:
		return "syscalls"
	case KindMessaging, KindUDP:
		return "messages"
	}
	return ""
}

// Syscall is the call a KindSyscall noise loops on. The zero value is no
// call.
type Syscall uint8

// The syscalls: getppid(2), clock_gettime(2) (the raw syscall, not the
// vDSO), sched_yield(2).
const (
	SyscallGetppid Syscall = iota + 1
	SyscallClockGettime
	SyscallSchedYield
)

// Syscalls are every syscall, in order.
var Syscalls = []Syscall{SyscallGetppid, SyscallClockGettime, SyscallSchedYield}

// String is the syscall's name: "getppid", "clock_gettime", "sched_yield".
func (c Syscall) String() string {
	switch c {
	case SyscallGetppid:
		return "getppid"
	case SyscallClockGettime:
		return "clock_gettime"
	case SyscallSchedYield:
		return "sched_yield"
	}
	return fmt.Sprintf("syscall(%d)", uint8(c))
}

// Limits Validate checks. noise has no defaults: every parameter of a
// kind is given (the scenario's defaults, scenario/defaults.go, fill
// them).
const (
	MaxThreads           = 1024
	minMemorySize        = 2 * 4096
	maxRate              = 10e6
	maxCPU               = 1023 // CPU_SETSIZE - 1
	rtRuntimePath        = "/proc/sys/kernel/sched_rt_runtime_us"
	memoryChunk          = 64 << 10 // bytes copied between two stop checks
	throttlingOffWarning = "RT throttling is off (sched_rt_runtime_us = -1): real-time noise may hang CPUs"
)

// Config is one noise entry of a scenario. Every parameter of its kind
// must be given (Validate refuses a zero one: noise has no defaults of its
// own); New never changes cfg.
type Config struct {
	// Kind is the load (KindSpin, …).
	Kind Kind
	// Threads is the number of OS threads, 1–1024. messaging ignores it
	// (beyond requiring ≥ 1): its Groups × FDs senders and receivers are
	// the threads, started by workload.Messaging.
	Threads int
	// CPUs pins thread i to CPUs[i%len(CPUs)]; empty = unpinned.
	// messaging passes them to workload.MessagingConfig.CPUs.
	CPUs []int
	// Policy is rt.Other (the zero value), rt.FIFO or rt.RR. FIFO/RR need
	// AllowRT; messaging supports only rt.Other.
	Policy rt.Policy
	// Priority is 1–99 for FIFO/RR and must be 0 for Other.
	Priority int
	// Nice is -20..19 for Other (ignored for FIFO/RR); 0 = default.
	Nice int
	// On, Off is the duty cycle: work On, sleep Off, repeat, every thread
	// on the same schedule from Start. Off 0 = always on (On ignored).
	On, Off time.Duration
	// AllowRT is the scenario's allow_rt_noise: true; without it FIFO/RR
	// noise is refused with an error wrapping ErrRTNoise.
	AllowRT bool
	// AllowDegraded carries on unpinned / at SCHED_OTHER / at nice 0 when
	// the privilege is missing (rt.Sched.AllowDegraded); Report says what.
	AllowDegraded bool
	// Name names the threads: thread i is rt.NoiseName(Name, i)
	// ("rtl-nz/spin.3"; messaging's round runner "rtl-nz/<Name>" and its
	// workers rtl-nz/<Name>.<i>); "" = the kind's name.
	Name string
	// Exempt exempts every thread (messaging's workers included) from that
	// housekeeping confinement (rt.Sched.Exempt): noise keeps its own
	// CPUs, since noise on a reader's CPU can be the workload. nil: none.
	Exempt *rt.Housekeeping

	// Size in bytes: memory buffer per thread (≥ 8 KiB, streamed with
	// copy between its two halves); messaging message (≥ 1); file_write
	// block (≥ 1); udp payload (16–65507). Unused by spin and syscall.
	Size int
	// Rate is udp messages per second per thread (> 0).
	Rate float64
	// Syscall is the syscall kind's call.
	Syscall Syscall
	// Dir is file_write's directory ("" = a temporary one).
	Dir string
	// Blocks is file_write's writes per pass (≥ 1).
	Blocks int
	// Groups, FDs, Loops shape each messaging round (each ≥ 1).
	Groups, FDs, Loops int
}

// name is the threads' base name: Name, or the kind's.
func (c Config) name() string {
	if c.Name == "" {
		return c.Kind.String()
	}
	return c.Name
}

// isRT reports whether cfg asks for a real-time policy.
func (c Config) isRT() bool { return c.Policy == rt.FIFO || c.Policy == rt.RR }

// ErrRTNoise is matched (errors.Is) by the error New returns for FIFO/RR
// noise without AllowRT.
var ErrRTNoise = errors.New("real-time noise refused")

// ConfigError lists every problem of one Config under the kind's name.
type ConfigError struct {
	// Kind is the Config's kind as given.
	Kind Kind
	// Problems, one phrase each, in field order.
	Problems []string
	// rtRefused is set when one problem is real-time noise without AllowRT.
	rtRefused bool
}

// Error reads "noise <kind>: problem; problem".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("noise %s: %s", e.Kind, strings.Join(e.Problems, "; "))
}

// Is matches ErrRTNoise when the refusal is among the problems.
func (e *ConfigError) Is(target error) bool { return target == ErrRTNoise && e.rtRefused }

// Validate returns a *ConfigError listing every problem of cfg, or nil.
// It reads nothing from the system and changes nothing.
func (c Config) Validate() error {
	e := &ConfigError{Kind: c.Kind}
	add := func(format string, a ...any) { e.Problems = append(e.Problems, fmt.Sprintf(format, a...)) }
	if !slices.Contains(Kinds, c.Kind) {
		add("unknown kind (allowed: %s)", joinNames(Kinds))
		return e
	}
	if c.Threads < 1 || c.Threads > MaxThreads {
		add("threads %d out of range (allowed: 1–%d)", c.Threads, MaxThreads)
	}
	for i, cpu := range c.CPUs {
		if cpu < 0 || cpu > maxCPU {
			add("cpus[%d] %d out of range (allowed: 0–%d)", i, cpu, maxCPU)
		}
	}
	switch c.Policy {
	case rt.FIFO, rt.RR:
		if c.Priority < 1 || c.Priority > 99 {
			add("priority %d out of range for %s (allowed: 1–99)", c.Priority, c.Policy)
		}
		if !c.AllowRT {
			e.rtRefused = true
			add("%s %d noise can starve the machine (every CPU it runs on is lost to everything below priority %d): set allow_rt_noise: true in the scenario to allow it",
				c.Policy, c.Priority, c.Priority)
		}
		if c.Kind == KindMessaging {
			add("policy %s not supported (messaging workers run at SCHED_OTHER; use nice)", c.Policy)
		}
	case rt.Other:
		if c.Priority != 0 {
			add("priority %d out of range for SCHED_OTHER (allowed: 0)", c.Priority)
		}
		if c.Nice < -20 || c.Nice > 19 {
			add("nice %d out of range (allowed: -20–19)", c.Nice)
		}
	default:
		add("policy %s unknown (allowed: SCHED_OTHER, SCHED_FIFO, SCHED_RR)", c.Policy)
	}
	if c.On < 0 || c.Off < 0 {
		add("duty cycle on %s off %s: negative duration", c.On, c.Off)
	} else if c.Off > 0 && c.On == 0 {
		add("duty cycle on 0 off %s: the noise would never run (set on > 0, or off 0 for always on)", c.Off)
	}
	if c.Size < 0 {
		add("size %d < 0", c.Size)
	}
	switch c.Kind {
	case KindMemory:
		if c.Size < minMemorySize {
			add("size %d out of range (allowed: ≥ %d bytes)", c.Size, minMemorySize)
		}
	case KindUDP:
		if c.Size < udp.HeaderSize || c.Size > 65507 {
			add("size %d out of range (allowed: %d–65507 bytes)", c.Size, udp.HeaderSize)
		}
		if math.IsNaN(c.Rate) || c.Rate <= 0 || c.Rate > maxRate {
			add("rate %g out of range (allowed: > 0 – %g messages/s per thread)", c.Rate, maxRate)
		}
	case KindSyscall:
		if !slices.Contains(Syscalls, c.Syscall) {
			add("%s unknown (allowed: %s)", c.Syscall, joinNames(Syscalls))
		}
	case KindFileWrite:
		if c.Size < 1 || c.Blocks < 1 {
			add("size %d, blocks %d: each ≥ 1", c.Size, c.Blocks)
		}
	case KindMessaging:
		if c.Size < 1 || c.Groups < 1 || c.FDs < 1 || c.Loops < 1 {
			add("size %d, groups %d, fds %d, loops %d: each ≥ 1", c.Size, c.Groups, c.FDs, c.Loops)
		}
	}
	if len(e.Problems) > 0 {
		return e
	}
	return nil
}

// RTThrottlingOff reports whether RT throttling is disabled
// (/proc/sys/kernel/sched_rt_runtime_us reads -1): a runaway SCHED_FIFO
// thread then keeps its CPU forever.
func RTThrottlingOff() (bool, error) {
	b, err := os.ReadFile(rtRuntimePath)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == "-1", nil
}

// Warnings returns what a scenario author should know before cfg runs:
// for FIFO/RR noise, that RT throttling is off (or could not be read).
// It reads /proc; cfg need not be valid.
func Warnings(cfg Config) []string {
	if !cfg.isRT() {
		return nil
	}
	off, err := RTThrottlingOff()
	return warnings(cfg, off, err)
}

func warnings(cfg Config, throttlingOff bool, err error) []string {
	if !cfg.isRT() {
		return nil
	}
	switch {
	case err != nil:
		return []string{fmt.Sprintf("RT throttling state unknown (%v): real-time noise may hang CPUs if it is off", err)}
	case throttlingOff:
		return []string{throttlingOffWarning}
	}
	return nil
}

// joinNames lists the names of vs, comma-separated.
func joinNames[T fmt.Stringer](vs []T) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	return strings.Join(names, ", ")
}
