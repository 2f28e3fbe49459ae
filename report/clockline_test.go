package report

import (
	"bytes"
	"strings"

	"github.com/rtload/rtload/internal/testutil"
	"testing"

	"github.com/rtload/rtload/results"
)

// TestClockLineCycles: the cycles clock's header reads as issue 15 asks,
// "core cycles (PERF_COUNT_HW_CPU_CYCLES via rdpmc, kernel+user)", with the
// core clock measured while calibrating.
func TestClockLineCycles(t *testing.T) {
	got := clockLine(results.ClockInfo{Kind: "cycles", Hz: 3.1e9})
	want := "clock: core cycles (PERF_COUNT_HW_CPU_CYCLES via rdpmc, kernel+user), core clock 3.100 GHz while calibrating"
	if got != want {
		t.Errorf("clockLine = %q, want %q", got, want)
	}
}

// TestBriefClockFenced is the default output's clock lines on a VM that
// hides RDTSCP (issue 34 row 12): which clock timed the calls and how it
// was read, the true reason the better one (cycles) was not used, and how
// the TSC's rate held against CLOCK_MONOTONIC over the trials, a trial
// beyond the tolerance counted.
func TestBriefClockFenced(t *testing.T) {
	s := testutil.SeedSummary()
	s.Clock = results.ClockInfo{Kind: "tsc", Hz: 2.596e9, Invariant: true, Read: results.ReadRDTSCFenced,
		Fallbacks: []string{"cycles: not supported by this CPU/VM: perf_event_open returned ENOENT (no hardware PMU is exposed here)"}}
	for i := range s.Trials {
		s.Trials[i].ClockRate = &results.ClockRate{Hz: 2.596e9, Seconds: 4, Deviation: 2e-6 * float64(i), Uncertainty: 1e-7}
	}
	var b bytes.Buffer
	if err := Brief(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"clock: tsc, 1 tick = 1/2.596 GHz (TSC ticks are not core cycles), invariant TSC, read LFENCE;RDTSC;LFENCE\n",
		"  not used: cycles: not supported by this CPU/VM: perf_event_open returned ENOENT",
		"  TSC rate against CLOCK_MONOTONIC: at most +0.0006% from its calibration over 4 trials (tolerance ±0.1%)\n",
		"per-call cost in TSC ticks",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brief lacks %q:\n%s", want, out)
		}
	}
	s.Trials[2].ClockRate.Deviation = -0.0021
	b.Reset()
	if err := Brief(&b, s); err != nil {
		t.Fatal(err)
	}
	if want := "at most -0.2100% from its calibration over 4 trials (tolerance ±0.1%); *** 1 of 4 beyond it, marked invalid"; !strings.Contains(b.String(), want) {
		t.Errorf("brief lacks %q:\n%s", want, b.String())
	}
}
