package rt

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ticks is a raw reading of the per-call clock. What one tick is depends on
// the clock (ClockInfo.Hz): TSC ticks at the TSC's nominal frequency (not
// core cycles), monotonic ticks are nanoseconds.
type Ticks uint64

// ClockInfo says what one tick of a Clock is.
type ClockInfo struct {
	// Kind is "tsc" or "monotonic".
	Kind string
	// Hz is ticks per second: the calibrated TSC frequency, or 1e9.
	Hz float64
	// Invariant is true when the TSC runs at a constant rate in all
	// P-/C-states (constant_tsc and nonstop_tsc flags).
	Invariant bool
	// Note explains how Hz was found.
	Note string
	// Fallbacks lists clocks tried before this one and why each was refused.
	Fallbacks []string
}

// Unit names one tick for reports.
func (c ClockInfo) Unit() string {
	if c.Kind == "tsc" {
		return "TSC ticks"
	}
	return "ns"
}

// Clock is the per-call timer. It is a concrete type so that Now inlines to
// one instruction sequence on the measured path.
type Clock struct {
	tsc  bool
	info ClockInfo
}

// Now reads the clock: rdtscp;lfence for tsc, vDSO CLOCK_MONOTONIC otherwise.
// No allocation, no syscall, no preemption point.
//
//go:nosplit
func (c *Clock) Now() Ticks {
	if c.tsc {
		return Ticks(rdtscp())
	}
	return Ticks(nanotime())
}

// Info says what one tick is.
func (c *Clock) Info() ClockInfo { return c.info }

// NewClock returns the clock of the given kind: "tsc", "monotonic" or "auto"
// (tsc when the CPU has an invariant TSC with rdtscp, else monotonic; the
// reason for a fallback is in Info().Fallbacks). Asking for "tsc" on a
// machine without it fails with ErrNotSupported. "cycles" (the PMU's core
// cycle counter read with rdpmc) is refused with ErrNotSupported and the
// reason: perf_event_open's errno for PERF_COUNT_HW_CPU_CYCLES (ENOENT on a
// CPU or VM without hardware counters; a *PerfError naming
// kernel.perf_event_paranoid and CAP_PERFMON when not permitted), or, where
// the counter opens, that reading it with rdpmc is not implemented yet.
// "auto" tries cycles first and lists that reason in Fallbacks.
func NewClock(kind string) (*Clock, error) {
	mono := &Clock{info: ClockInfo{Kind: "monotonic", Hz: 1e9, Invariant: true,
		Note: "CLOCK_MONOTONIC via vDSO; 1 tick = 1 ns"}}
	switch kind {
	case "monotonic":
		return mono, nil
	case "cycles":
		return nil, fmt.Errorf("clock %q: %w", kind, cyclesUsable())
	case "tsc", "auto", "":
		var fallbacks []string
		if kind != "tsc" {
			fallbacks = append(fallbacks, "cycles: "+cyclesUsable().Error())
		}
		flags, ferr := cpuFlags()
		err := tscUsable(flags, ferr)
		if err != nil {
			if kind == "tsc" {
				return nil, err
			}
			mono.info.Fallbacks = append(fallbacks, err.Error())
			return mono, nil
		}
		hz, note := calibrateTSC()
		return &Clock{tsc: true, info: ClockInfo{Kind: "tsc", Hz: hz, Invariant: true,
			Note: note + "; TSC ticks are not core cycles", Fallbacks: fallbacks}}, nil
	default:
		return nil, fmt.Errorf("clock %q: %w (allowed: auto, tsc, monotonic)", kind, ErrNotSupported)
	}
}

// cyclesUsable says why the cycles clock cannot be used: it opens the
// PMU's cycle counter on the calling thread to learn whether the CPU (or
// VM) and the kernel's settings allow it, closes it, and returns the
// refusal (always non-nil: rdpmc reading is not implemented yet).
func cyclesUsable() error {
	fd, err := OpenPerfEvent(PerfCycles, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return fmt.Errorf("%w: the PMU cycle counter opens here, but reading it with rdpmc is not implemented yet", ErrNotSupported)
}

// PerfEvent names one perf_event_open(2) counter.
type PerfEvent struct {
	Name   string
	Type   uint32
	Config uint64
}

// Counters perf_event_open can count on a thread. Software events work on
// any kernel with perf events; hardware ones need a PMU the CPU (or the
// VM) exposes.
var (
	PerfCycles   = PerfEvent{"cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES}
	PerfSoftware = []PerfEvent{
		{"context-switches", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"cpu-migrations", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS},
		{"page-faults", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS},
		{"task-clock", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK},
	}
	PerfHardware = []PerfEvent{PerfCycles, {"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS}}
)

// PerfError is a perf_event_open(2) failure with its reason. It matches
// ErrNotSupported when the CPU, VM or kernel lacks the event, and
// ErrNoPrivilege when kernel.perf_event_paranoid (or a missing
// CAP_PERFMON) forbids it.
type PerfError struct {
	Event string
	Errno unix.Errno
	// Paranoid is kernel.perf_event_paranoid when it was read, else -1.
	Paranoid int
}

// Error is the reason alone; callers name the event ("cycles: …").
func (e *PerfError) Error() string { return PerfReason(e.Errno, e.Paranoid) }

// Is matches ErrNotSupported or ErrNoPrivilege by errno.
func (e *PerfError) Is(target error) bool {
	switch e.Errno {
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV, unix.ENOSYS:
		return target == ErrNotSupported
	case unix.EACCES, unix.EPERM:
		return target == ErrNoPrivilege
	}
	return false
}

// Unwrap returns the errno.
func (e *PerfError) Unwrap() error { return e.Errno }

// PerfReason explains a perf_event_open errno; paranoid is
// kernel.perf_event_paranoid (-1 if unknown).
func PerfReason(errno unix.Errno, paranoid int) string {
	name := unix.ErrnoName(errno)
	if name == "" {
		name = errno.Error()
	}
	switch errno {
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV:
		return "not supported by this CPU/VM: perf_event_open returned " + name
	case unix.ENOSYS:
		return "not supported by this kernel (no perf events): perf_event_open returned " + name
	case unix.EACCES, unix.EPERM:
		s := "not permitted: perf_event_open returned " + name
		if paranoid >= 0 {
			s += fmt.Sprintf("; kernel.perf_event_paranoid is %d", paranoid)
		}
		return s + " (counting a thread's kernel time needs kernel.perf_event_paranoid ≤ 1, or CAP_PERFMON)"
	case unix.ESRCH:
		return "the thread is gone: perf_event_open returned " + name
	}
	return "perf_event_open returned " + name
}

// PerfParanoid reads kernel.perf_event_paranoid, or returns -1.
func PerfParanoid() int {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return -1
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return v
}

// OpenPerfEvent wraps perf_event_open(2): counter ev on thread tid (0 =
// the calling thread) on any CPU, user and kernel time, enabled at once,
// close-on-exec. Its fd reads (read(2), ReadPerfEvent) the count with the
// times enabled and running. Errors are *PerfError.
func OpenPerfEvent(ev PerfEvent, tid int) (int, error) {
	attr := unix.PerfEventAttr{Type: ev.Type, Config: ev.Config,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING}
	attr.Size = uint32(unsafe.Sizeof(attr))
	attr.Bits = unix.PerfBitExcludeHv
	fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EINVAL
		}
		return -1, &PerfError{Event: ev.Name, Errno: errno, Paranoid: PerfParanoid()}
	}
	return fd, nil
}

// ReadPerfEvent reads an OpenPerfEvent fd: the count scaled to the time
// enabled when the counter was multiplexed (running < enabled).
func ReadPerfEvent(fd int) (uint64, error) {
	var buf [3]uint64 // value, time enabled, time running
	n, _, errno := unix.Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), unsafe.Sizeof(buf))
	if errno != 0 {
		return 0, os.NewSyscallError("read perf event", errno)
	}
	if n != unsafe.Sizeof(buf) {
		return 0, fmt.Errorf("read perf event: %d bytes, want %d", n, unsafe.Sizeof(buf))
	}
	v, enabled, running := buf[0], buf[1], buf[2]
	if running > 0 && running < enabled {
		v = uint64(float64(v) * float64(enabled) / float64(running))
	}
	return v, nil
}

func tscUsable(flags map[string]bool, ferr error) error {
	if !haveTSC {
		return fmt.Errorf("tsc: %w on this architecture", ErrNotSupported)
	}
	if ferr != nil {
		return fmt.Errorf("tsc: cannot read CPU flags: %w", ferr)
	}
	var missing []string
	for _, f := range []string{"rdtscp", "constant_tsc", "nonstop_tsc"} {
		if !flags[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tsc: %w: CPU lacks %s (not an invariant TSC)", ErrNotSupported, strings.Join(missing, ", "))
	}
	return nil
}

func cpuFlags() (map[string]bool, error) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			if i := strings.IndexByte(line, ':'); i >= 0 {
				for _, f := range strings.Fields(line[i+1:]) {
					m[f] = true
				}
			}
			break
		}
	}
	return m, nil
}

// calibrateTSC measures TSC ticks per second against CLOCK_MONOTONIC over
// five 20 ms windows and takes the median. It reports the kernel's
// tsc_freq_khz too when sysfs has it.
func calibrateTSC() (float64, string) {
	var rates []float64
	for i := 0; i < 5; i++ {
		t0, n0 := rdtscp(), nanotime()
		deadline := n0 + int64(20*time.Millisecond)
		for nanotime() < deadline {
		}
		t1, n1 := rdtscp(), nanotime()
		rates = append(rates, float64(t1-t0)*1e9/float64(n1-n0))
	}
	sort.Float64s(rates)
	hz := rates[len(rates)/2]
	note := fmt.Sprintf("TSC calibrated against CLOCK_MONOTONIC: %.3f MHz (median of 5 × 20 ms)", hz/1e6)
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/tsc_freq_khz"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			note += fmt.Sprintf("; kernel tsc_freq_khz %.0f", khz)
		}
	}
	return hz, note
}
