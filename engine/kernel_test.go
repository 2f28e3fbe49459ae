package engine

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/sysinfo"
)

const currentClocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// TestClocksourceSwitchInvalid is issue 14's clocksource check: a switch
// of the kernel clocksource during a trial (written to current_clocksource
// as root at the trial's second interval record, and back at its third;
// restored again after the run and in t.Cleanup whatever happens) marks
// the trial invalid, naming both switches, and is in the kernel watch's
// events and in the interval records from then on. The run's next trial,
// starting on the clocksource restored, is valid.
func TestClocksourceSwitchInvalid(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.CPUs(2))
	cs, err := sysinfo.ReadClocksource()
	if err != nil {
		t.Skipf("clocksource not readable: %v", err)
	}
	var other string
	for _, a := range cs.Available {
		if a != cs.Current {
			other = a
			break
		}
	}
	if other == "" {
		t.Skipf("only one clocksource available (%v): nothing to switch to", cs.Available)
	}
	restore := func() {
		if err := os.WriteFile(currentClocksourcePath, []byte(cs.Current), 0); err != nil {
			t.Errorf("restoring clocksource %s: %v", cs.Current, err)
		}
	}
	t.Cleanup(func() {
		if now, err := sysinfo.ReadClocksource(); err != nil || now.Current != cs.Current {
			restore()
		}
	})
	spec, trials := load(t, `
name: clocksource-switch
duration: 2s
interval: 500ms
readers: [{name: timer, endpoints: [], cpu: 1, period: 10ms}]
variants: [{name: a}, {name: b}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ivs []results.Interval
	var switchErr error
	opt := Options{OutDir: t.TempDir(), OnInterval: func(iv results.Interval) {
		ivs = append(ivs, iv)
		switch {
		case iv.Trial == 0 && iv.Seq == 1: // ~1 s into trial 1
			switchErr = os.WriteFile(currentClocksourcePath, []byte(other), 0)
		case iv.Trial == 0 && iv.Seq == 2:
			restore()
		}
	}}
	sum, err := Run(ctx, spec, trials, opt)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if switchErr != nil {
		t.Fatalf("switching to %s: %v", other, switchErr)
	}
	tr := sum.Trials[0]
	t.Logf("trial 1: %q; kernel %+v", tr.Invalid, tr.Kernel)
	want := "invalid: clocksource changed (" + cs.Current + " → " + other + " at "
	if !strings.HasPrefix(tr.Invalid, want) || !strings.Contains(tr.Invalid, other+" → "+cs.Current+" at ") {
		t.Errorf("trial 1 invalid = %q, want the changes %s → %s and back", tr.Invalid, cs.Current, other)
	}
	if k := tr.Kernel; k == nil || k.ClocksourceStart != cs.Current ||
		!slices.ContainsFunc(k.Events, func(e results.KernelEvent) bool { return e.Kind == "clocksource_switch" && e.To == other }) {
		t.Errorf("trial 1 kernel watch %+v: want it to start on %s and the switch to %s", tr.Kernel, cs.Current, other)
	}
	// Every interval record of trial 1 after the switch says it is invalid.
	marked := 0
	for _, iv := range ivs {
		if iv.Trial == 0 && iv.Seq >= 2 {
			if !strings.HasPrefix(iv.Invalid, "invalid: clocksource changed") {
				t.Errorf("trial 1 interval %d: invalid %q", iv.Seq, iv.Invalid)
			}
			marked++
		}
	}
	if marked == 0 {
		t.Error("no interval record of trial 1 after the switch")
	}
	if len(sum.Trials) != 2 || sum.Trials[1].Invalid != "" {
		t.Errorf("trial 2 (clocksource restored before it): invalid %q", sum.Trials[1].Invalid)
	}
}
