package noise

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/rtload/rtload/net/udp"
	"github.com/rtload/rtload/rt"
)

// Kinds of noise New accepts, in the order error messages list them.
var Kinds = []string{"spin", "memory", "syscall", "messaging", "file_write", "udp"}

// Syscalls the syscall kind can loop on.
var Syscalls = []string{"getppid", "clock_gettime", "sched_yield"}

// Defaults of the kind parameters (a zero Config field means these).
const (
	DefaultMemorySize    = 64 << 20 // memory: buffer bytes per thread
	DefaultMessageSize   = 100      // messaging: message bytes (hackbench's)
	DefaultBlock         = 256      // file_write: bytes per write(2) (fstime's)
	DefaultBlocks        = 2000     // file_write: writes per pass
	DefaultPayload       = 64       // udp: payload bytes
	DefaultRate          = 10000.0  // udp: messages per second per thread
	DefaultGroups        = 1        // messaging
	DefaultFDs           = 4        // messaging
	DefaultLoops         = 100      // messaging
	DefaultSyscall       = "getppid"
	MaxThreads           = 1024
	minMemorySize        = 2 * 4096
	maxRate              = 10e6
	maxCPU               = 1023 // CPU_SETSIZE - 1
	rtRuntimePath        = "/proc/sys/kernel/sched_rt_runtime_us"
	memoryChunk          = 64 << 10 // bytes copied between two stop checks
	throttlingOffWarning = "RT throttling is off (sched_rt_runtime_us = -1): real-time noise may hang CPUs"
)

// Config is one noise entry of a scenario. The zero value of every field
// is documented; New never changes cfg.
type Config struct {
	// Kind is spin, memory, syscall, messaging, file_write or udp; "" = spin.
	Kind string
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
	// workers rtl-nz/<Name>.<i>); "" = the kind.
	Name string
	// Exempt exempts every thread (messaging's workers included) from that
	// housekeeping confinement (rt.Sched.Exempt): noise keeps its own
	// CPUs, since noise on a reader's CPU can be the workload. nil: none.
	Exempt *rt.Housekeeping

	// Size in bytes: memory buffer per thread (default 64 MiB, ≥ 8 KiB,
	// streamed with copy between its two halves); messaging message
	// (100); file_write block (256); udp payload (64, 16–65507).
	Size int
	// Rate is udp messages per second per thread (default 10000).
	Rate float64
	// Syscall is the syscall kind's call: "getppid" (default),
	// "clock_gettime" (the raw syscall, not the vDSO) or "sched_yield".
	Syscall string
	// Dir is file_write's directory ("" = a temporary one).
	Dir string
	// Blocks is file_write's writes per pass (default 2000).
	Blocks int
	// Groups, FDs, Loops shape each messaging round (defaults 1, 4, 100).
	Groups, FDs, Loops int
}

// kind returns cfg.Kind with "" read as spin.
func (c Config) kind() string {
	if c.Kind == "" {
		return "spin"
	}
	return c.Kind
}

// name is the threads' base name: Name, or the kind.
func (c Config) name() string {
	if c.Name == "" {
		return c.kind()
	}
	return c.Name
}

// isRT reports whether cfg asks for a real-time policy.
func (c Config) isRT() bool { return c.Policy == rt.FIFO || c.Policy == rt.RR }

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// size returns Size or the kind's default.
func (c Config) size() int {
	switch c.kind() {
	case "memory":
		return orDefault(c.Size, DefaultMemorySize)
	case "messaging":
		return orDefault(c.Size, DefaultMessageSize)
	case "file_write":
		return orDefault(c.Size, DefaultBlock)
	case "udp":
		return orDefault(c.Size, DefaultPayload)
	}
	return c.Size
}

// Unit is what Work.Count counts for kind: loops, bytes, syscalls, messages.
func Unit(kind string) string {
	switch kind {
	case "", "spin":
		return "loops"
	case "memory", "file_write":
		return "bytes"
	case "syscall":
		return "syscalls"
	case "messaging", "udp":
		return "messages"
	}
	return ""
}

// ErrRTNoise is matched (errors.Is) by the error New returns for FIFO/RR
// noise without AllowRT.
var ErrRTNoise = errors.New("real-time noise refused")

// ConfigError lists every problem of one Config under the kind's name.
type ConfigError struct {
	// Kind is the Config's kind as given.
	Kind string
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
	e := &ConfigError{Kind: c.kind()}
	add := func(format string, a ...any) { e.Problems = append(e.Problems, fmt.Sprintf(format, a...)) }
	known := false
	for _, k := range Kinds {
		known = known || k == c.kind()
	}
	if !known {
		e.Kind = fmt.Sprintf("%q", c.Kind)
		add("unknown kind (allowed: %s)", strings.Join(Kinds, ", "))
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
		if c.kind() == "messaging" {
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
	switch c.kind() {
	case "memory":
		if s := c.size(); s < minMemorySize {
			add("size %d out of range (allowed: ≥ %d bytes)", s, minMemorySize)
		}
	case "udp":
		if s := c.size(); s < udp.HeaderSize || s > 65507 {
			add("size %d out of range (allowed: %d–65507 bytes)", s, udp.HeaderSize)
		}
		if math.IsNaN(c.Rate) || c.Rate < 0 || c.Rate > maxRate {
			add("rate %g out of range (allowed: > 0 – %g messages/s per thread; 0 = %g)", c.Rate, maxRate, DefaultRate)
		}
	case "syscall":
		ok := c.Syscall == ""
		for _, s := range Syscalls {
			ok = ok || s == c.Syscall
		}
		if !ok {
			add("syscall %q unknown (allowed: %s)", c.Syscall, strings.Join(Syscalls, ", "))
		}
	case "file_write":
		if c.Blocks < 0 {
			add("blocks %d < 0", c.Blocks)
		}
	case "messaging":
		if c.Groups < 0 || c.FDs < 0 || c.Loops < 0 {
			add("groups %d, fds %d, loops %d: negative", c.Groups, c.FDs, c.Loops)
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
