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
	// fenced: a tsc Clock reads LFENCE;RDTSC;LFENCE (CPUID offers no
	// RDTSCP), else RDTSCP;LFENCE.
	fenced bool
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
// user page's seqlock (cycles, LFENCE;RDPMC;LFENCE), RDTSCP;LFENCE (tsc;
// LFENCE;RDTSC;LFENCE where CPUID offers no RDTSCP), or the vDSO's
// CLOCK_MONOTONIC. A cycles Clock not bound to the calling
// thread reads 0 (counted in Status().Unbound). No allocation, no syscall,
// no preemption point.
//
//go:nosplit
func (c *Clock) Now() Ticks {
	if c.tsc {
		if c.fenced {
			return Ticks(rdtscFenced())
		}
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
	// SourceTSC is the TSC read with RDTSCP;LFENCE: read with TSC.
	SourceTSC
	// SourceCycles is the thread's core-cycle counter: read with (*Clock).Cycles.
	SourceCycles
	// SourceTSCFenced is the TSC read with LFENCE;RDTSC;LFENCE, where
	// CPUID offers no RDTSCP: read with TSCFenced.
	SourceTSCFenced
)

// Source says which read Now makes for c (see Source).
func (c *Clock) Source() Source {
	switch {
	case c.tsc && c.fenced:
		return SourceTSCFenced
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

// TSCFenced reads the time-stamp counter as a tsc Clock whose Source is
// SourceTSCFenced does (LFENCE;RDTSC;LFENCE, for a CPU or VM whose CPUID
// offers no RDTSCP), without Now's switch. It returns 0 off amd64. No
// allocation, no system call, no preemption point.
//
//go:nosplit
func TSCFenced() Ticks { return Ticks(rdtscFenced()) }

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
//   - ClockTSC: the TSC, calibrated against CLOCK_MONOTONIC, read with
//     RDTSCP;LFENCE, or LFENCE;RDTSC;LFENCE where CPUID offers no RDTSCP
//     (a VM that hides it); ErrNotSupported without an invariant TSC
//     (CPUID 0x80000007 EDX bit 8, or /proc/cpuinfo's constant_tsc and
//     nonstop_tsc). Its rate is checked again per trial (RatePoint).
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

// newTSC checks for an invariant TSC (tscFacts.support) and calibrates it.
func newTSC(fallbacks []string) (*Clock, error) {
	f := readTSCFacts()
	fenced, err := f.support()
	if err != nil {
		return nil, err
	}
	hz, note := tscRate()
	info := ClockInfo{Kind: "tsc", Hz: hz, Invariant: true, Read: results.ReadRDTSCP, Fallbacks: fallbacks,
		Note: note + "; TSC ticks are not core cycles"}
	switch {
	case fenced && f.forced:
		info.Read = results.ReadRDTSCFenced
		info.Note += "; read with LFENCE;RDTSC;LFENCE: RTLOAD_TSC_READ=lfence"
	case fenced:
		info.Read = results.ReadRDTSCFenced
		info.Note += "; read with LFENCE;RDTSC;LFENCE: CPUID offers no RDTSCP (a hypervisor hides it)"
	}
	if f.clocksource != "" && f.clocksource != "tsc" {
		info.Note += fmt.Sprintf("; the kernel keeps time with %s, not the TSC: each trial checks the TSC's rate against CLOCK_MONOTONIC (within ±%g%%)",
			f.clocksource, results.ClockRateTolerance*100)
	}
	return &Clock{tsc: true, fenced: fenced, info: info}, nil
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
	fenced, terr := readTSCFacts().support()
	tscOK := terr == nil
	var hzs, ratios []float64
	for range 5 {
		c0, t0, n0 := ctr.r.read(), uint64(0), nanotime()
		if tscOK {
			t0 = readTSC(fenced)
		}
		for deadline := n0 + int64(20*time.Millisecond); nanotime() < deadline; {
		}
		c1, n1 := ctr.r.read(), nanotime()
		hzs = append(hzs, float64(c1-c0)*1e9/float64(n1-n0))
		if tscOK {
			ratios = append(ratios, float64(c1-c0)/float64(readTSC(fenced)-t0))
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

// tscFacts is what decides whether, and with which instruction, rtload
// reads the TSC (tscFacts.support): CPUID's word and the kernel's.
type tscFacts struct {
	// arch: rtload reads a TSC on this architecture (amd64).
	arch bool
	// rdtscp: CPUID 0x80000001 EDX bit 27, RDTSCP offered. A hypervisor
	// may hide it while the TSC itself is fine (executing it then
	// faults): rtload then reads LFENCE;RDTSC;LFENCE.
	rdtscp bool
	// invariant: CPUID 0x80000007 EDX bit 8, an invariant TSC (constant
	// rate in every P-, C- and T-state).
	invariant bool
	// flags are /proc/cpuinfo's CPU flags (constant_tsc, nonstop_tsc: the
	// kernel's own reading of the same); flagsErr why they were not read.
	flags    map[string]bool
	flagsErr error
	// clocksource is the kernel's current_clocksource ("" unread): a
	// kernel that does not keep time with the TSC (kvm-clock, tsc=unstable)
	// says nothing against reading it; the per-trial rate check decides.
	clocksource string
	// forced: RTLOAD_TSC_READ=lfence asked for the fenced read whatever
	// CPUID offers (for experiments: a VM that hides RDTSCP, reproduced).
	forced bool
}

// readTSCFacts reads CPUID, /proc/cpuinfo's flags and the kernel's
// current clocksource. RTLOAD_TSC_READ=lfence reads as if CPUID offered
// no RDTSCP.
func readTSCFacts() tscFacts {
	f := tscFacts{arch: haveTSC}
	if haveTSC {
		top, _, _, _ := cpuid(0x80000000, 0)
		if top >= 0x80000001 {
			_, _, _, d := cpuid(0x80000001, 0)
			f.rdtscp = d&(1<<27) != 0
		}
		if top >= 0x80000007 {
			_, _, _, d := cpuid(0x80000007, 0)
			f.invariant = d&(1<<8) != 0
		}
	}
	if os.Getenv("RTLOAD_TSC_READ") == "lfence" {
		f.rdtscp, f.forced = false, true
	}
	f.flags, f.flagsErr = cpuFlags()
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		f.clocksource = strings.TrimSpace(string(b))
	}
	return f
}

// support says whether the TSC can be the per-call clock and how to read
// it: an invariant TSC, by CPUID (0x80000007 EDX bit 8) or by the
// kernel's flags (constant_tsc and nonstop_tsc), is required; RDTSCP is
// not (fenced: read LFENCE;RDTSC;LFENCE where CPUID does not offer it).
// The refusal wraps ErrNotSupported and names what is missing.
func (f tscFacts) support() (fenced bool, err error) {
	if !f.arch {
		return false, fmt.Errorf("tsc: %w on this architecture", ErrNotSupported)
	}
	if f.invariant || (f.flags["constant_tsc"] && f.flags["nonstop_tsc"]) {
		return !f.rdtscp, nil
	}
	if f.flagsErr != nil {
		return false, fmt.Errorf("tsc: %w: CPUID 0x80000007 does not report an invariant TSC, and the CPU flags are unreadable: %v", ErrNotSupported, f.flagsErr)
	}
	var missing []string
	for _, fl := range []string{"constant_tsc", "nonstop_tsc"} {
		if !f.flags[fl] {
			missing = append(missing, fl)
		}
	}
	return false, fmt.Errorf("tsc: %w: the TSC is not invariant (CPUID 0x80000007 EDX bit 8 clear; /proc/cpuinfo lacks %s): its rate may change with the CPU's power states",
		ErrNotSupported, strings.Join(missing, ", "))
}

// readTSC reads the TSC as a tsc Clock of that kind does: LFENCE;RDTSC;
// LFENCE when fenced, else RDTSCP;LFENCE.
//
//go:nosplit
func readTSC(fenced bool) uint64 {
	if fenced {
		return rdtscFenced()
	}
	return rdtscp()
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
	fenced, _ := readTSCFacts().support()
	var rates []float64
	for i := 0; i < 5; i++ {
		t0, n0 := readTSC(fenced), nanotime()
		deadline := n0 + int64(20*time.Millisecond)
		for nanotime() < deadline {
		}
		t1, n1 := readTSC(fenced), nanotime()
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

// RatePoint is one reading of a tsc Clock paired with CLOCK_MONOTONIC:
// the TSC, CLOCK_MONOTONIC (Ns), the TSC again; Ticks is their midpoint
// and Bracket the ticks between the two TSC reads (the pair's own
// uncertainty).
type RatePoint struct {
	Ticks   Ticks
	Ns      int64
	Bracket Ticks
}

// ratePointTries is how many pairs RatePoint reads, keeping the narrowest.
const ratePointTries = 5

// RatePoint reads a RatePoint, the narrowest of five pairs (an interrupt
// or a preemption between two reads widens one). ok is false for a Clock
// that is not tsc. No allocation.
func (c *Clock) RatePoint() (p RatePoint, ok bool) {
	if !c.tsc {
		return RatePoint{}, false
	}
	for i := 0; i < ratePointTries; i++ {
		t0 := readTSC(c.fenced)
		ns := nanotime()
		t1 := readTSC(c.fenced)
		if b := Ticks(t1 - t0); i == 0 || b < p.Bracket {
			p = RatePoint{Ticks: Ticks(t0) + b/2, Ns: ns, Bracket: b}
		}
	}
	return p, true
}

// RateBetween is c's rate from a to b (two RatePoints, b later) against
// CLOCK_MONOTONIC and its deviation from c's calibration, with the
// uncertainty the two pairs' brackets leave (results.ClockRate). ok is
// false for a Clock that is not tsc, or when b is not later than a.
func (c *Clock) RateBetween(a, b RatePoint) (r results.ClockRate, ok bool) {
	if !c.tsc || b.Ns <= a.Ns || b.Ticks <= a.Ticks || c.info.Hz <= 0 {
		return results.ClockRate{}, false
	}
	ticks := float64(b.Ticks - a.Ticks)
	r.Seconds = float64(b.Ns-a.Ns) / 1e9
	r.Hz = ticks / r.Seconds
	r.Deviation = r.Hz/c.info.Hz - 1
	r.Uncertainty = float64(a.Bracket+b.Bracket) / 2 / ticks
	return r, true
}

// FencedTSCClock returns a tsc Clock that reads LFENCE;RDTSC;LFENCE
// whatever CPUID offers, calibrated as NewClock(ClockTSC) is: for tests
// and benchmarks of the fenced read on a machine that has RDTSCP. It
// refuses, as NewClock does, without an invariant TSC.
func FencedTSCClock() (*Clock, error) {
	c, err := newTSC(nil)
	if err != nil {
		return nil, err
	}
	if !c.fenced {
		c.fenced = true
		c.info.Read = results.ReadRDTSCFenced
		c.info.Note += "; read with LFENCE;RDTSC;LFENCE (forced: FencedTSCClock)"
	}
	return c, nil
}
