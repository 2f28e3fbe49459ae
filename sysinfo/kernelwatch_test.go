package sysinfo

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
)

func TestReadClocksource(t *testing.T) {
	cs, err := ReadClocksource()
	if os.IsNotExist(err) {
		t.Skipf("no clocksource in sysfs: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if cs.Current == "" || !slices.Contains(cs.Available, cs.Current) {
		t.Errorf("ReadClocksource() = %+v: current must be one of the available", cs)
	}
	// The same value Gather reports.
	if f := Gather(); f.Clocksource != cs.Current {
		t.Errorf("Gather says %q, ReadClocksource %q", f.Clocksource, cs.Current)
	}
}

func TestReadRTThrottling(t *testing.T) {
	r, err := ReadRTThrottling()
	if err != nil {
		t.Skipf("no RT throttling sysctls: %v", err)
	}
	if r.PeriodUs <= 0 || r.RuntimeUs < -1 || r.RuntimeUs > r.PeriodUs {
		t.Errorf("ReadRTThrottling() = %+v", r)
	}
	if f := Gather(); f.SchedRTRuntimeUs != r.RuntimeUs || f.SchedRTPeriodUs != r.PeriodUs {
		t.Errorf("Gather says %d/%d, ReadRTThrottling %+v", f.SchedRTRuntimeUs, f.SchedRTPeriodUs, r)
	}
}

// eventually reports whether cond holds within timeout, checked every
// millisecond (testutil.Eventually, which this package's test cannot
// import: both define an -update flag).
func eventually(timeout time.Duration, cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(timeout); !cond(); <-tick.C {
		if time.Now().After(end) {
			return cond()
		}
	}
	return true
}

// pollCount is how many polls w did.
func (w *KernelWatch) pollCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.polls
}

func TestWatchKernelQuiet(t *testing.T) {
	// Nothing happens: no events, the start values recorded, Stop
	// idempotent and the fd closed (no leak: see below).
	w := WatchKernel(KernelWatchConfig{Interval: 10 * time.Millisecond})
	if !eventually(3*time.Second, func() bool { return w.pollCount() >= 3 }) {
		t.Errorf("%d polls in 3 s at a 10 ms interval", w.pollCount())
	}
	r := w.Stop()
	if again := w.Stop(); again.ClocksourceStart != r.ClocksourceStart || len(again.Events) != len(r.Events) {
		t.Errorf("second Stop %+v differs from the first %+v", again, r)
	}
	cs, _ := ReadClocksource()
	if r.ClocksourceStart != cs.Current || r.ClocksourceEnd != cs.Current {
		t.Errorf("start %q end %q, current %q", r.ClocksourceStart, r.ClocksourceEnd, cs.Current)
	}
	if os.Geteuid() == 0 && !r.KmsgWatched {
		t.Errorf("root but /dev/kmsg not watched: %v", r.Notes)
	}
	if !r.KmsgWatched && len(r.Notes) == 0 {
		t.Error("kmsg not watched and no note says why")
	}
	for _, e := range r.Events {
		// Another process may really switch the clocksource meanwhile,
		// but nothing else is expected on a quiet machine.
		t.Logf("event during a quiet watch: %+v", e)
	}
	if w.fd != -1 {
		t.Errorf("fd %d still open after Stop", w.fd)
	}
}

// TestWatchKernelClocksourceSwitch really switches the clocksource (as
// root, to another available one and back, always restored) and checks
// that the watch sees both switches in the kernel log, with times inside
// the window in which they were made, and that current_clocksource reads
// the new one in between.
func TestWatchKernelClocksourceSwitch(t *testing.T) {
	testutil.Requires(t, testutil.Root) // writing current_clocksource
	cs, err := ReadClocksource()
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
		t.Skipf("only one clocksource available (%v)", cs.Available)
	}
	orig := cs.Current
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(currentClocksource, []byte(name), 0); err != nil {
			t.Fatalf("write %s to %s: %v", name, currentClocksource, err)
		}
	}
	t.Cleanup(func() {
		if cur, _ := readCurrentClocksource(); cur != orig {
			if err := os.WriteFile(currentClocksource, []byte(orig), 0); err != nil {
				t.Errorf("restoring clocksource %s: %v", orig, err)
			}
		}
	})

	start := monotonicNs()
	w := WatchKernel(KernelWatchConfig{Start: start, Interval: 20 * time.Millisecond})
	defer w.Stop()
	t0 := monotonicNs()
	write(other)
	t1 := monotonicNs()
	if cur, err := readCurrentClocksource(); err != nil || cur != other {
		t.Errorf("current_clocksource %q (%v) after writing %q", cur, err, other)
	}
	seen := func(n int) bool { return eventually(3*time.Second, func() bool { return len(w.Report().Events) >= n }) }
	if !seen(1) {
		t.Fatalf("no event 3 s after switching to %s: %+v", other, w.Report())
	}
	t2 := monotonicNs()
	write(orig)
	t3 := monotonicNs()
	if !seen(2) {
		t.Fatalf("one event 3 s after switching back to %s: %+v", orig, w.Report())
	}
	r := w.Stop()
	if len(r.Events) != 2 {
		t.Fatalf("events %+v, want the two switches", r.Events)
	}
	// The log's timestamps (local_clock) lag CLOCK_MONOTONIC by 0.4 ms
	// here; elsewhere they may lead or lag more, and are then clamped to
	// the poll that read them (20 ms apart): allow 50 ms around each write.
	const slack = 50 * time.Millisecond
	for i, want := range []struct {
		from, to string
		lo, hi   int64
	}{{orig, other, t0, t1}, {other, orig, t2, t3}} {
		e := r.Events[i]
		lo, hi := time.Duration(want.lo-start)-slack, time.Duration(want.hi-start)+slack
		if e.Kind != ClocksourceSwitch || e.Source != "kmsg" || e.From != want.from || e.To != want.to || e.At < lo || e.At > hi {
			t.Errorf("event %d = %+v; want a kmsg switch %s → %s at %v–%v", i, e, want.from, want.to, lo, hi)
		}
	}
	if r.ClocksourceStart != orig || r.ClocksourceEnd != orig || !r.KmsgWatched {
		t.Errorf("report start %q end %q kmsg %v", r.ClocksourceStart, r.ClocksourceEnd, r.KmsgWatched)
	}
	reason := r.Invalid()
	if !strings.HasPrefix(reason, "clocksource changed ("+orig+" → "+other+" at ") ||
		!strings.Contains(reason, ", "+other+" → "+orig+" at ") {
		t.Errorf("Invalid() = %q", reason)
	}
	t.Logf("%s; logged at %v and %v, written at %.3f–%.3f ms and %.3f–%.3f ms", reason, r.Events[0].At, r.Events[1].At,
		float64(t0-start)/1e6, float64(t1-start)/1e6, float64(t2-start)/1e6, float64(t3-start)/1e6)
}
