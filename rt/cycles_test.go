package rt_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
)

// TestCyclesClockHere asks for the cycles clock: where the PMU cannot give
// it (this project's VM: ENOENT), the refusal names the errno and what to
// change, and auto falls back to tsc or monotonic with that same reason
// first among its fallbacks.
func TestCyclesClockHere(t *testing.T) {
	c, err := rt.NewClock(rt.ClockCycles)
	if err == nil {
		t.Skipf("cycles usable here (%s): see TestCyclesHardware", c.Info().Note)
	}
	if !errors.Is(err, rt.ErrNotSupported) && !errors.Is(err, rt.ErrNoPrivilege) {
		t.Errorf("refusal %v matches neither ErrNotSupported nor ErrNoPrivilege", err)
	}
	msg := err.Error()
	reason, ok := strings.CutPrefix(msg, `clock "cycles": `)
	reason, ok2 := strings.CutSuffix(reason, "; clock: auto would fall back to tsc and record why")
	if !ok || !ok2 || strings.Contains(msg, "not implemented") {
		t.Fatalf("refusal %q: want `clock \"cycles\": <reason>; clock: auto would fall back…` and no \"not implemented\"", msg)
	}
	if errors.Is(err, unix.ENOENT) {
		for _, want := range []string{"not supported by this CPU/VM: perf_event_open returned ENOENT", "virtual PMU"} {
			if !strings.Contains(reason, want) {
				t.Errorf("ENOENT refusal %q lacks %q", reason, want)
			}
		}
	}
	auto, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	info := auto.Info()
	if info.Kind == "cycles" || len(info.Fallbacks) == 0 || info.Fallbacks[0] != "cycles: "+reason {
		t.Errorf("auto = %s with fallbacks %q; want the cycles refusal first: %q", info.Kind, info.Fallbacks, "cycles: "+reason)
	}
	if info.Kind == "tsc" && len(info.Fallbacks) != 1 {
		t.Errorf("auto chose tsc with fallbacks %q: want only the cycles one", info.Fallbacks)
	}
}

// TestSharedClocksNeedNoBind: tsc and monotonic Clocks are read on any
// thread; ForThread, Bind, Status and Close leave them alone.
func TestSharedClocksNeedNoBind(t *testing.T) {
	mono, err := rt.NewClock(rt.ClockMonotonic)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := autoClock()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*rt.Clock{mono, auto} {
		if c.Info().Kind == "cycles" {
			continue
		}
		if c.ForThread() != c || c.Bind() != nil || c.Close() != nil {
			t.Errorf("%s: ForThread/Bind/Close not no-ops", c.Info().Kind)
		}
		if _, ok := c.Status(); ok {
			t.Errorf("%s: Status ok for a clock without a counter", c.Info().Kind)
		}
	}
}

const perfChildEnv = "RTLOAD_RT_TEST_PERF_UNPRIVILEGED"

// TestCyclesRefusedUnprivileged: without CAP_PERFMON and with
// kernel.perf_event_paranoid ≥ 2, counting a thread's kernel cycles is not
// permitted (EACCES, checked by the kernel before it looks for a PMU), and
// the cycles clock and the per-call counters say which sysctl and which
// capability to change; rtload never falls back to user-only counting.
// As root the test re-executes itself as nobody.
func TestCyclesRefusedUnprivileged(t *testing.T) {
	if os.Getenv(perfChildEnv) != "" {
		checkPerfUnprivileged(t)
		return
	}
	testutil.Requires(t, testutil.Root)
	if p := rt.PerfParanoid(); p < 2 {
		t.Skipf("kernel.perf_event_paranoid is %d: nobody may count kernel time here", p)
	}
	testutil.RunTestAsNobody(t, "TestCyclesRefusedUnprivileged", perfChildEnv)
}

func checkPerfUnprivileged(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Fatal("child still root")
	}
	paranoid := rt.PerfParanoid()
	wants := []string{"not permitted: perf_event_open returned EACCES",
		fmt.Sprintf("kernel.perf_event_paranoid is %d", paranoid),
		"kernel.perf_event_paranoid ≤ 1", "sysctl -w kernel.perf_event_paranoid=1 (/proc/sys/kernel/perf_event_paranoid)", "CAP_PERFMON"}
	_, err := rt.NewClock(rt.ClockCycles)
	if !errors.Is(err, rt.ErrNoPrivilege) || !errors.Is(err, unix.EACCES) {
		t.Fatalf("NewClock(cycles) as nobody = %v; want EACCES matching ErrNoPrivilege", err)
	}
	auto, aerr := rt.NewClock(rt.ClockAuto)
	if aerr != nil || len(auto.Info().Fallbacks) == 0 {
		t.Fatalf("auto as nobody = %v, %v; want a fallback with the cycles refusal", auto, aerr)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, cerr := rt.NewCounters(rt.CountersConfig{Events: []string{"instructions"}})
	if cerr != nil {
		t.Fatal(cerr)
	}
	cerr = c.Open()
	for _, e := range []error{err, errors.New(auto.Info().Fallbacks[0]), cerr} {
		for _, w := range wants {
			if e == nil || !strings.Contains(e.Error(), w) {
				t.Errorf("refusal %v lacks %q", e, w)
			}
		}
	}
	t.Logf("refusal as nobody: %v", err)
}

// TestCyclesHardware runs where a PMU gives the cycles counter: each
// call's cycles agree with its TSC ticks times the core/TSC ratio measured
// just before, and the counter counted throughout. It skips elsewhere,
// naming why.
func TestCyclesHardware(t *testing.T) {
	run, err := rt.NewClock(rt.ClockCycles)
	if err != nil {
		t.Skipf("no cycles counter here: %v", err)
	}
	tsc, err := rt.NewClock(rt.ClockTSC)
	if err != nil {
		t.Skipf("no TSC to compare with: %v", err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := run.ForThread()
	if err := c.Bind(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The ratio now, over a 20 ms busy window on this thread.
	c0, t0, n0 := c.Now(), tsc.Now(), rt.Monotonic()
	for i := 0; i < 1e9 && rt.Monotonic()-n0 < int64(20*time.Millisecond); i++ {
	}
	ratio := float64(c.Now()-c0) / float64(tsc.Now()-t0)
	var perCall []float64
	for range 2000 {
		a, b := c.Now(), tsc.Now()
		unix.Getppid()
		d, e := tsc.Now(), c.Now()
		if e <= a || d <= b {
			t.Fatalf("call: %d cycles, %d TSC ticks: want both > 0", e-a, d-b)
		}
		perCall = append(perCall, float64(e-a)/float64(d-b)/ratio)
	}
	slices.Sort(perCall)
	med := perCall[len(perCall)/2]
	t.Logf("core/TSC ratio %.3f now, %.3f at NewClock; per-call cycles/(TSC ticks × ratio): p10 %.3f p50 %.3f p90 %.3f",
		ratio, run.Info().CoreTSCRatio, perCall[len(perCall)/10], med, perCall[len(perCall)*9/10])
	if med < 0.8 || med > 1.25 {
		t.Errorf("per-call cycles are %.3f × TSC ticks × ratio (median): want 0.8–1.25", med)
	}
	if r := run.Info().CoreTSCRatio; r <= 0 {
		t.Errorf("CoreTSCRatio %.3f: want it measured", r)
	}
	if s, ok := c.Status(); !ok || s.Reason != "" {
		t.Errorf("Status = %+v, %v: want counted throughout", s, ok)
	}
}

// TestCountersHardware runs where a PMU gives per-call counters: a
// getppid(2) call retires instructions, more than two back-to-back reads
// do, and every counter counted throughout.
func TestCountersHardware(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := rt.NewCounters(rt.CountersConfig{Events: []string{"instructions", "cache-misses", "branch-misses"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Open(); err != nil {
		t.Skipf("no per-call counters here: %v", err)
	}
	defer c.Close()
	a, b := make([]uint64, c.Len()), make([]uint64, c.Len())
	var empty, call []uint64
	for range 1000 {
		c.ReadInto(a)
		c.ReadInto(b)
		empty = append(empty, b[0]-a[0])
		c.ReadInto(a)
		unix.Getppid()
		c.ReadInto(b)
		call = append(call, b[0]-a[0])
	}
	slices.Sort(empty)
	slices.Sort(call)
	e, k := empty[len(empty)/2], call[len(call)/2]
	t.Logf("instructions: %d per empty read pair, %d per getppid (medians)", e, k)
	if k <= e || k > 1e6 {
		t.Errorf("instructions per getppid %d, per empty pair %d: want more for the call, and < 1e6", k, e)
	}
	for _, s := range c.Status() {
		if s.Reason != "" {
			t.Errorf("%s: %s", s.Event, s.Reason)
		}
	}
}

// TestCounterNamesAgreeWithScenario: the scenario accepts exactly the
// counters rt can open (scenario cannot import rt, so the list is kept
// twice; this test keeps the two equal).
func TestCounterNamesAgreeWithScenario(t *testing.T) {
	var names []string
	for _, ev := range rt.CounterEvents {
		names = append(names, ev.Name)
	}
	doc := "readers: [{counters: [" + strings.Join(names, ", ") + ", bogus]}]\n"
	s, err := scenario.Load("x.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(scenario.Host{})
	want := `readers[0].counters[5]: unknown counter "bogus" (allowed: ` + strings.Join(names, ", ") + ")"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "counters[") != 1 {
		t.Errorf("Validate = %v\nwant only %q", err, want)
	}
	if _, err := rt.NewCounters(rt.CountersConfig{Events: names}); err != nil {
		t.Errorf("rt refuses its own names: %v", err)
	}
}

// BenchmarkClockNow is the cost of one clock read, per kind (cycles only
// where a PMU gives it; tsc-fenced is the TSC read LFENCE;RDTSC;LFENCE, as
// where CPUID hides RDTSCP).
func BenchmarkClockNow(b *testing.B) {
	for _, kind := range []rt.ClockKind{rt.ClockMonotonic, rt.ClockTSC, 0, rt.ClockCycles} {
		name := kind.String()
		if kind == 0 {
			name = "tsc-fenced"
		}
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var run *rt.Clock
			var err error
			if kind == 0 {
				run, err = rt.FencedTSCClock()
			} else {
				run, err = rt.NewClock(kind)
			}
			if err != nil {
				b.Skip(err)
			}
			c := run.ForThread()
			if err := c.Bind(); err != nil {
				b.Skip(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				c.Now()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/read")
		})
	}
}
