package main

import (
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
)

// TestRunClockTSCFenced runs the default scenario with clock: tsc read as
// on a VM whose CPUID hides RDTSCP (issue 34 row 12; RTLOAD_TSC_READ=lfence
// reproduces it on a CPU that has RDTSCP): the run is not refused, the
// seed's table is in TSC ticks, the default output names the read, and
// every trial's TSC rate against CLOCK_MONOTONIC is recorded and held
// within results.ClockRateTolerance.
func TestRunClockTSCFenced(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	t.Setenv("RTLOAD_TSC_READ", "lfence")
	out := t.TempDir()
	r := rtload(t, nil, "run", "--set", "clock=tsc", "--duration", "1s", "--set", "rounds=1", "--set", "warmup=200ms", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"clock: tsc, 1 tick = 1/", "read LFENCE;RDTSC;LFENCE", "per-call cost in TSC ticks",
		"TSC rate against CLOCK_MONOTONIC: at most ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	s, err := store.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Clock.Kind != "tsc" || s.Clock.Read != results.ReadRDTSCFenced {
		t.Fatalf("clock %+v, want tsc read %s", s.Clock, results.ReadRDTSCFenced)
	}
	for _, tr := range s.Trials {
		cr := tr.ClockRate
		if cr == nil {
			t.Errorf("%s: no clock_rate", tr.Name())
			continue
		}
		t.Logf("%s: TSC %.6f MHz over %.3f s, %+.5f%% ±%.5f%% from the calibration %.6f MHz", tr.Name(), cr.Hz/1e6, cr.Seconds, cr.Deviation*100, cr.Uncertainty*100, s.Clock.Hz/1e6)
		if cr.Disagrees() {
			t.Errorf("%s: the TSC's rate strayed %+.4f%% from its calibration, beyond ±%g%%", tr.Name(), cr.Deviation*100, results.ClockRateTolerance*100)
		}
	}
}
