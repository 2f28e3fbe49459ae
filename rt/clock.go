package rt

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
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
// machine without it fails with ErrNotSupported. "cycles" (perf_event
// PERF_COUNT_HW_CPU_CYCLES) is not implemented yet and is refused with
// ErrNotSupported.
func NewClock(kind string) (*Clock, error) {
	mono := &Clock{info: ClockInfo{Kind: "monotonic", Hz: 1e9, Invariant: true,
		Note: "CLOCK_MONOTONIC via vDSO; 1 tick = 1 ns"}}
	switch kind {
	case "monotonic":
		return mono, nil
	case "tsc", "auto", "":
		flags, ferr := cpuFlags()
		err := tscUsable(flags, ferr)
		if err != nil {
			if kind == "tsc" {
				return nil, err
			}
			mono.info.Fallbacks = append(mono.info.Fallbacks, err.Error())
			return mono, nil
		}
		hz, note := calibrateTSC()
		return &Clock{tsc: true, info: ClockInfo{Kind: "tsc", Hz: hz, Invariant: true,
			Note: note + "; TSC ticks are not core cycles", Fallbacks: []string{
				"cycles: perf_event PERF_COUNT_HW_CPU_CYCLES not implemented in this version"}}}, nil
	default:
		return nil, fmt.Errorf("clock %q: %w (allowed: auto, tsc, monotonic)", kind, ErrNotSupported)
	}
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
