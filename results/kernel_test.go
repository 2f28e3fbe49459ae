package results_test

import (
	"testing"
	"time"

	"github.com/rtload/rtload/results"
)

// TestTickUnit: one name per clock kind, whatever the file's Unit says;
// a clock of no known kind keeps the file's unit, else "ticks".
func TestTickUnit(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    results.ClockInfo
		want string
	}{
		{"cycles", results.ClockInfo{Kind: "cycles", Hz: 3.4e9}, "cycles"},
		{"tsc", results.ClockInfo{Kind: "tsc", Hz: 2.1e9}, "TSC ticks"},
		{"tsc, a file's own unit", results.ClockInfo{Kind: "tsc", Unit: "ticks"}, "TSC ticks"},
		{"monotonic", results.ClockInfo{Kind: "monotonic", Hz: 1e9}, "ns"},
		{"another tool's unit", results.ClockInfo{Kind: "hpet", Unit: "hpet ticks"}, "hpet ticks"},
		{"nothing known", results.ClockInfo{}, "ticks"},
	} {
		if got := tc.c.TickUnit(); got != tc.want {
			t.Errorf("%s: TickUnit() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestKernelWatchInvalid: the kernel's events and a changed RT
// throttling setting, worded for the trial's invalid mark.
func TestKernelWatchInvalid(t *testing.T) {
	rt := results.RTThrottling{RuntimeUs: 950000, PeriodUs: 1000000}
	for _, tc := range []struct {
		name string
		k    results.KernelWatch
		want string
	}{
		{"none", results.KernelWatch{RTThrottlingStart: rt, RTThrottlingEnd: rt}, ""},
		{"the issue's example", results.KernelWatch{Events: []results.KernelEvent{
			{Kind: results.ClocksourceSwitch, From: "tsc", To: "hpet", At: 12345 * time.Millisecond}}},
			"clocksource changed (tsc → hpet at 12.3 s)"},
		{"unknown start clocksource", results.KernelWatch{Events: []results.KernelEvent{
			{Kind: results.ClocksourceSwitch, To: "hpet", At: time.Second}}},
			"clocksource changed (? → hpet at 1.0 s)"},
		{"watchdog, then switch: the switch first", results.KernelWatch{Events: []results.KernelEvent{
			{Kind: results.ClocksourceUnstable, Clocksource: "tsc", At: 3 * time.Second},
			{Kind: results.ClocksourceSwitch, From: "tsc", To: "hpet", At: 3 * time.Second}}},
			"clocksource changed (tsc → hpet at 3.0 s); clocksource tsc marked unstable at 3.0 s"},
		{"RT throttling turned off", results.KernelWatch{RTThrottlingStart: rt, RTThrottlingEnd: results.RTThrottling{RuntimeUs: -1, PeriodUs: 1000000}},
			"RT throttling changed (950000 µs of every 1000000 µs → off (sched_rt_runtime_us -1))"},
		{"end not read", results.KernelWatch{RTThrottlingStart: rt}, ""},
	} {
		if got := tc.k.Invalid(); got != tc.want {
			t.Errorf("%s: Invalid() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
