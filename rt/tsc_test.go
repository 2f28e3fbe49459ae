package rt_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
)

// TestTSCSupport decides the TSC clock from CPUID and the kernel's flags,
// one row per machine shape. The first rows are issue 34 row 12's VM:
// CPUID hides RDTSCP while the TSC is constant and nonstop; the TSC is
// read LFENCE;RDTSC;LFENCE there instead of being refused as "CPU lacks
// rdtscp (not an invariant TSC)".
func TestTSCSupport(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          rt.TSCFacts
		wantFenced bool
		wantErr    string // "" when usable
	}{
		{"VM hiding RDTSCP, constant_tsc nonstop_tsc tsc_reliable (issue 34 row 12)",
			rt.TSCFacts{Arch: true, Flags: []string{"tsc", "constant_tsc", "nonstop_tsc", "tsc_reliable"}}, true, ""},
		{"VM hiding RDTSCP, CPUID invariant TSC, no tsc_reliable",
			rt.TSCFacts{Arch: true, Invariant: true, Flags: []string{"tsc", "constant_tsc", "nonstop_tsc"}}, true, ""},
		{"bare metal: RDTSCP and an invariant TSC",
			rt.TSCFacts{Arch: true, RDTSCP: true, Invariant: true, Flags: []string{"rdtscp", "constant_tsc", "nonstop_tsc"}}, false, ""},
		{"CPUID invariant TSC, flags unreadable",
			rt.TSCFacts{Arch: true, RDTSCP: true, Invariant: true, FlagsErr: os.ErrNotExist}, false, ""},
		{"constant but not nonstop: stops in deep C-states",
			rt.TSCFacts{Arch: true, RDTSCP: true, Flags: []string{"rdtscp", "constant_tsc"}}, false, "lacks nonstop_tsc"},
		{"neither", rt.TSCFacts{Arch: true, RDTSCP: true, Flags: []string{"rdtscp"}}, false, "lacks constant_tsc, nonstop_tsc"},
		{"flags unreadable and CPUID not invariant", rt.TSCFacts{Arch: true, RDTSCP: true, FlagsErr: os.ErrPermission},
			false, "CPU flags are unreadable"},
		{"no TSC on this architecture", rt.TSCFacts{}, false, "not supported on this architecture"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fenced, err := rt.TSCSupport(tc.f)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if fenced != tc.wantFenced {
					t.Errorf("fenced = %v, want %v", fenced, tc.wantFenced)
				}
				return
			}
			if !errors.Is(err, rt.ErrNotSupported) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ErrNotSupported naming %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "rdtscp") {
				t.Errorf("refusal %q blames RDTSCP: the TSC clock does not need it", err)
			}
		})
	}
}

// TestFencedTSCClock reads the TSC as a VM that hides RDTSCP makes rtload
// read it (LFENCE;RDTSC;LFENCE): non-decreasing on one thread, recorded
// as such, and its rate over 50 ms agrees with CLOCK_MONOTONIC within
// results.ClockRateTolerance (beyond the pairs' own uncertainty).
func TestFencedTSCClock(t *testing.T) {
	c, err := rt.FencedTSCClock()
	if errors.Is(err, rt.ErrNotSupported) {
		t.Skipf("no invariant TSC here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c.Source() != rt.SourceTSCFenced || c.Info().Read != results.ReadRDTSCFenced {
		t.Fatalf("Source %v, Read %q: want the fenced read", c.Source(), c.Info().Read)
	}
	prev := c.Now()
	for i := 0; i < 1000; i++ {
		if now := c.Now(); now < prev {
			t.Fatalf("read %d went back: %d after %d", i, now, prev)
		} else {
			prev = now
		}
		if d := rt.TSCFenced(); d < prev {
			t.Fatalf("TSCFenced %d before Now's %d", d, prev)
		}
	}
	a, ok := c.RatePoint()
	if !ok {
		t.Fatal("RatePoint not ok for a tsc clock")
	}
	for end := rt.Monotonic() + 50e6; rt.Monotonic() < end; {
	}
	b, _ := c.RatePoint()
	r, ok := c.RateBetween(a, b)
	if !ok {
		t.Fatalf("RateBetween(%+v, %+v) not ok", a, b)
	}
	t.Logf("fenced TSC over %.3f s: %.6f MHz, %+.5f%% from the calibration (%.6f MHz), ±%.5f%%", r.Seconds, r.Hz/1e6, r.Deviation*100, c.Info().Hz/1e6, r.Uncertainty*100)
	if r.Disagrees() {
		t.Errorf("the TSC's rate over 50 ms is %+.4f%% off its calibration (uncertainty %.4f%%), beyond ±%g%%", r.Deviation*100, r.Uncertainty*100, results.ClockRateTolerance*100)
	}
}

// TestClockRateDisagrees: the per-trial rate check marks a rate off its
// calibration by more than ClockRateTolerance beyond its uncertainty.
func TestClockRateDisagrees(t *testing.T) {
	for _, tc := range []struct {
		r    results.ClockRate
		want bool
	}{
		{results.ClockRate{Deviation: 0.0004}, false},
		{results.ClockRate{Deviation: -0.0009}, false},
		{results.ClockRate{Deviation: 0.0011}, true},
		{results.ClockRate{Deviation: -0.002}, true},
		{results.ClockRate{Deviation: 0.0015, Uncertainty: 0.001}, false},
	} {
		if got := tc.r.Disagrees(); got != tc.want {
			t.Errorf("%+v.Disagrees() = %v, want %v", tc.r, got, tc.want)
		}
	}
	mono, _ := rt.NewClock(rt.ClockMonotonic)
	if _, ok := mono.RatePoint(); ok {
		t.Error("RatePoint ok for a monotonic clock")
	}
}
