package rt

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
)

// Ticks is a raw reading of the per-call clock. What one tick is depends on
// the clock (ClockInfo): core cycles of the reading thread (cycles), TSC
// ticks at the TSC's nominal frequency (tsc: not core cycles), or
// nanoseconds (monotonic).
type Ticks uint64

// ClockInfo says what one tick of a Clock is: results.ClockInfo, the
// record summary.json keeps (its TickUnit names the tick).
type ClockInfo = results.ClockInfo

// Clock is the per-call timer. It is a concrete type so that Now stays a
// short instruction sequence on the measured path.
//
// A cycles Clock counts the core cycles of one thread: NewClock returns a
// run-wide one that only describes the clock; each timing thread takes
// ForThread and calls Bind on itself (locked and pinned) before its
// measured window, and Status and Close after it. tsc and monotonic Clocks
// can be read on any thread; ForThread returns them unchanged and Bind,
// Status and Close do nothing.
type Clock struct {
	tsc bool
	// pmc reads the cycles counter: &idle until Bind, the bound counter's
	// reader after. nil for tsc and monotonic.
	pmc *pmcReader
	// idle reads an all-zero page (index 0): 0 on every read, counted.
	idle pmcReader
	ctr  *perfCounter // the bound counter, nil before Bind and after Close
	// perThread is false for the run-wide cycles Clock (Bind refuses it).
	perThread bool
	info      ClockInfo
}

// Now reads the clock: rdpmc of the thread's core-cycle counter under the
// user page's seqlock (cycles, LFENCE;RDPMC;LFENCE), RDTSCP;LFENCE (tsc),
// or the vDSO's CLOCK_MONOTONIC. A cycles Clock not bound to the calling
// thread reads 0 (counted in Status().Unbound). No allocation, no syscall,
// no preemption point.
//
//go:nosplit
func (c *Clock) Now() Ticks {
	if c.tsc {
		return Ticks(rdtscp())
	}
	if c.pmc != nil {
		return Ticks(c.pmc.read())
	}
	return Ticks(nanotime())
}

// Source says which counter a Clock reads: what a timing loop that calls
// the read directly instead of Now (probe.Drain, one loop per Source)
// must call.
type Source uint8

const (
	// SourceMonotonic is CLOCK_MONOTONIC through the vDSO: read with Monotonic.
	SourceMonotonic Source = iota
	// SourceTSC is the TSC: read with TSC.
	SourceTSC
	// SourceCycles is the thread's core-cycle counter: read with (*Clock).Cycles.
	SourceCycles
)

// Source says which read Now makes for c (see Source).
func (c *Clock) Source() Source {
	switch {
	case c.tsc:
		return SourceTSC
	case c.pmc != nil:
		return SourceCycles
	}
	return SourceMonotonic
}

// TSC reads the time-stamp counter as a tsc Clock's Now does (RDTSCP;LFENCE)
// but without Now's switch on the clock kind: the call site calls the
// assembly directly. Use it only for a Clock whose Source is SourceTSC (it
// returns 0 off amd64). No allocation, no system call, no preemption point.
//
//go:nosplit
func TSC() Ticks { return Ticks(rdtscp()) }

// Cycles reads a cycles Clock as Now does (rdpmc under the user page's
// seqlock; 0 until Bind) but without Now's switch on the clock kind. Use
// it only for a Clock whose Source is SourceCycles. No allocation, no
// system call, no preemption point.
//
//go:nosplit
func (c *Clock) Cycles() Ticks { return Ticks(c.pmc.read()) }

// FakeCyclesClock returns a cycles Clock that needs no PMU, for tests of
// code that times with one (probe.Drain) on machines without one: Now and
// Cycles read a synthetic user page (index 1, cap_user_rdpmc, 64-bit
// width) through the real seqlock protocol, with the RDPMC instruction
// replaced by rdpmc. Its Info says Kind "cycles", Hz 1e9. Bind refuses it
// (it is not a ForThread copy); rtload never builds one.
func FakeCyclesClock(rdpmc func() uint64) *Clock {
	c := &Clock{info: ClockInfo{Kind: "cycles", Hz: 1e9, Note: "fake cycles clock (tests)"}}
	c.idle.pg = &unix.PerfEventMmapPage{Index: 1, Capabilities: capUserRdpmc, Pmc_width: 64}
	c.idle.fake = func(uint32) uint64 { return rdpmc() }
	c.pmc = &c.idle
	return c
}

// Info says what one tick is.
func (c *Clock) Info() ClockInfo { return c.info }

// ForThread returns the Clock one thread times with: for cycles a new,
// unbound Clock (Bind it on that thread), otherwise c itself.
func (c *Clock) ForThread() *Clock {
	if c.pmc == nil {
		return c
	}
	t := &Clock{info: c.info, perThread: true}
	t.idle.pg = new(unix.PerfEventMmapPage)
	t.pmc = &t.idle
	return t
}

// Bind opens the core-cycle counter of the calling thread
// (perf_event_open(2) PERF_COUNT_HW_CPU_CYCLES, pid 0, any CPU, kernel and
// user counted, exclude_hv, pinned), maps its user page and checks that
// rdpmc can read it. Call it on the locked thread that will call Now,
// after pinning it and before the measured window: only that thread can
// read the counter. It does nothing for tsc and monotonic, and when
// already bound. Errors wrap ErrNotSupported or ErrNoPrivilege (a
// *PerfError) with what to change; a run-wide Clock from NewClock is
// refused (take ForThread first).
func (c *Clock) Bind() error {
	if c.pmc == nil || c.ctr != nil {
		return nil
	}
	if !c.perThread {
		return errors.New("clock cycles: Bind on the run-wide Clock: bind a ForThread copy on each timing thread")
	}
	ctr, err := openCycles()
	if err != nil {
		return fmt.Errorf("clock cycles: %w", err)
	}
	c.ctr = ctr
	c.pmc = &ctr.r
	return nil
}

// Status says whether the cycles counter counted every read since Bind:
// the kernel's time enabled and running (read(2)), reads that found it off
// the PMU, torn or unbound reads, and the Reason to mark the trial with
// ("" when none). ok is false for tsc and monotonic. Call it at the end of
// the measured window, before Close.
func (c *Clock) Status() (s PerfStatus, ok bool) {
	if c.pmc == nil {
		return PerfStatus{}, false
	}
	if c.ctr != nil {
		return c.ctr.status(), true
	}
	s = PerfStatus{Event: "cycles", Unbound: c.idle.notLive}
	s.Reason = statusReason(s, nil)
	return s, true
}

// Close closes the counter Bind opened; afterwards Now reads 0 again.
// Idempotent; nothing to do for tsc and monotonic.
func (c *Clock) Close() error {
	if c.ctr == nil {
		return nil
	}
	c.pmc = &c.idle
	err := c.ctr.close()
	c.ctr = nil
	return err
}

// ClockKind chooses the per-call timer NewClock makes. The zero value is
// no kind.
type ClockKind uint8

// The kinds of clock (see NewClock).
const (
	ClockAuto ClockKind = iota + 1
	ClockCycles
	ClockTSC
	ClockMonotonic
)

// String is the kind's name, as ClockInfo.Kind and the scenario's clock
// field spell it: "auto", "cycles", "tsc", "monotonic".
func (k ClockKind) String() string {
	switch k {
	case ClockAuto:
		return "auto"
	case ClockCycles:
		return "cycles"
	case ClockTSC:
		return "tsc"
	case ClockMonotonic:
		return "monotonic"
	}
	return fmt.Sprintf("clock kind(%d)", uint8(k))
}

// NewClock returns the clock of the given kind:
//   - ClockCycles: the PMU's core-cycle counter of each timing thread
//     (PERF_COUNT_HW_CPU_CYCLES, kernel and user, read with rdpmc; see
//     ForThread and Bind). NewClock opens it on the calling thread to
//     check it and to measure Hz and CoreTSCRatio, then closes it. The
//     refusal wraps ErrNotSupported or ErrNoPrivilege and says what to
//     change: no PMU (ENOENT), kernel.perf_event_paranoid or CAP_PERFMON
//     (EACCES), user-space rdpmc off (cap_user_rdpmc 0: RdpmcSysfs), the
//     counter not on the PMU (index 0). It never falls back to counting
//     user cycles only.
//   - ClockTSC: RDTSCP, calibrated against CLOCK_MONOTONIC; ErrNotSupported
//     without an invariant TSC.
//   - ClockMonotonic: CLOCK_MONOTONIC through the vDSO, in ns.
//   - ClockAuto: cycles where usable, else tsc, else monotonic, each
//     refusal in Info().Fallbacks ("cycles: not supported by this CPU/VM: …").
func NewClock(kind ClockKind) (*Clock, error) {
	switch kind {
	case ClockMonotonic:
		return newMonotonic(nil), nil
	case ClockCycles:
		c, err := newCycles()
		if err != nil {
			return nil, fmt.Errorf("clock %q: %w; clock: auto would fall back to tsc and record why", kind, err)
		}
		return c, nil
	case ClockTSC:
		return newTSC(nil)
	case ClockAuto:
		c, err := newCycles()
		if err == nil {
			return c, nil
		}
		fallbacks := []string{"cycles: " + err.Error()}
		c, err = newTSC(fallbacks)
		if err == nil {
			return c, nil
		}
		return newMonotonic(append(fallbacks, err.Error())), nil
	default:
		return nil, fmt.Errorf("%s: %w (allowed: auto, cycles, tsc, monotonic)", kind, ErrNotSupported)
	}
}

func newMonotonic(fallbacks []string) *Clock {
	return &Clock{info: ClockInfo{Kind: "monotonic", Hz: 1e9, Invariant: true,
		Note: "CLOCK_MONOTONIC via vDSO; 1 tick = 1 ns", Fallbacks: fallbacks}}
}

// newTSC checks for an invariant TSC with rdtscp and calibrates it.
func newTSC(fallbacks []string) (*Clock, error) {
	flags, ferr := cpuFlags()
	if err := tscUsable(flags, ferr); err != nil {
		return nil, err
	}
	hz, note := tscRate()
	return &Clock{tsc: true, info: ClockInfo{Kind: "tsc", Hz: hz, Invariant: true,
		Note: note + "; TSC ticks are not core cycles", Fallbacks: fallbacks}}, nil
}

// openCycles opens the calling thread's core-cycle counter, pinned.
func openCycles() (*perfCounter, error) {
	if !haveRdpmc {
		return nil, fmt.Errorf("%w on %s: rtload reads core cycles with the x86 rdpmc instruction", ErrNotSupported, runtime.GOARCH)
	}
	return openPerfCounter(PerfCycles, -1, true)
}

// newCycles opens the core-cycle counter on this (locked) thread to learn
// whether the CPU, the VM and the kernel's settings allow it, measures the
// core clock against CLOCK_MONOTONIC and the TSC over five 20 ms busy
// windows (medians), and closes it: the run-wide Clock it returns only
// describes the clock.
func newCycles() (*Clock, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // the counter is closed: the thread is as it was
	ctr, err := openCycles()
	if err != nil {
		return nil, err
	}
	defer ctr.close()
	flags, ferr := cpuFlags()
	tscOK := tscUsable(flags, ferr) == nil
	var hzs, ratios []float64
	for range 5 {
		c0, t0, n0 := ctr.r.read(), uint64(0), nanotime()
		if tscOK {
			t0 = rdtscp()
		}
		for deadline := n0 + int64(20*time.Millisecond); nanotime() < deadline; {
		}
		c1, n1 := ctr.r.read(), nanotime()
		hzs = append(hzs, float64(c1-c0)*1e9/float64(n1-n0))
		if tscOK {
			ratios = append(ratios, float64(c1-c0)/float64(rdtscp()-t0))
		}
	}
	if st := ctr.status(); st.NotLive > 0 || st.Torn > 0 {
		return nil, fmt.Errorf("%w: the cycles counter opened but was not live while calibrating: %s", ErrNotSupported, st.Reason)
	}
	info := ClockInfo{Kind: "cycles", Hz: median(hzs)}
	info.Note = fmt.Sprintf("%s, counted only while the timing thread runs; core clock %.3f GHz while calibrating (median of 5 × 20 ms busy windows against CLOCK_MONOTONIC",
		results.CyclesDescription, info.Hz/1e9)
	if tscOK {
		info.CoreTSCRatio = median(ratios)
		info.Note += fmt.Sprintf("; %.3f cycles per TSC tick", info.CoreTSCRatio)
	}
	info.Note += "): ns from cycles are estimates, the core clock varies with frequency scaling"
	c := &Clock{info: info}
	c.idle.pg = new(unix.PerfEventMmapPage)
	c.pmc = &c.idle
	return c, nil
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
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

// tscRate is the process's one TSC calibration (calibrateTSC, run on
// first use): the tsc Clock and every Ticker's wake stamp share it.
var tscRate = sync.OnceValues(calibrateTSC)

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
	hz := median(rates)
	note := fmt.Sprintf("TSC calibrated against CLOCK_MONOTONIC: %.3f MHz (median of 5 × 20 ms)", hz/1e6)
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/tsc_freq_khz"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			note += fmt.Sprintf("; kernel tsc_freq_khz %.0f", khz)
		}
	}
	return hz, note
}
