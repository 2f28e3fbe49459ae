package engine

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/results"
)

// TestStarved: a reader's run-queue wait beyond 1% of the window (and
// 10 ms) is reported with its numbers; a normal wait, a short window's
// few ms, or no run-queue counter at all is not.
func TestStarved(t *testing.T) {
	a := results.Applied{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}
	ctr := func(wait time.Duration) []results.Counter {
		return []results.Counter{{Name: "task-clock", Value: 5e6}, {Name: "runqueue-wait", Value: uint64(wait)}}
	}
	two := int64(2 * time.Second)
	for _, tc := range []struct {
		name     string
		counters []results.Counter
		dur      int64
		want     string
	}{
		{"throttled 1.8 s of 2 s", ctr(1800 * time.Millisecond), two,
			"runnable but off CPU 1 for 1.8s (90.0% of the 2s window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"},
		{"the whole window and more", ctr(2300 * time.Millisecond), two,
			"runnable but off CPU 1 for 2.3s (longer than the 2s window: warm-up and tail too; schedstat run-queue wait)"},
		{"normal: 7 µs a tick", ctr(200 * 7 * time.Microsecond), two, ""},
		{"1% is not over it", ctr(20 * time.Millisecond), two, ""},
		{"just over 1%", ctr(21 * time.Millisecond), two, "runnable but off CPU 1 for 21ms (1.1% of the 2s window"},
		{"short window: 10 ms floor", ctr(9 * time.Millisecond), int64(300 * time.Millisecond), ""},
		{"no run-queue counter (perf counters)", []results.Counter{{Name: "task-clock", Value: 1}}, two, ""},
	} {
		got := starved(tc.counters, tc.dur, a)
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTracingOff reads tracing_on from a fake tracefs: 0 is said, with the
// command to turn it on; 1 and a missing directory are not.
func TestTracingOff(t *testing.T) {
	off, on := t.TempDir(), t.TempDir()
	if err := os.WriteFile(off+"/tracing_on", []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(on+"/tracing_on", []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tracingOff([]string{"/nonexistent", off}); !strings.Contains(got, off+"/tracing_on = 0") || !strings.Contains(got, "echo 1 > "+off+"/tracing_on") {
		t.Errorf("off: %q", got)
	}
	if got := tracingOff([]string{on, off}); got != "" {
		t.Errorf("on: %q", got)
	}
	if got := tracingOff([]string{"/nonexistent"}); got != "" {
		t.Errorf("none: %q", got)
	}
}
