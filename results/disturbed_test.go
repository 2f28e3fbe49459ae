package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCause: whose each judged mark is, from the trial's own facts.
func TestCause(t *testing.T) {
	reader := func(run, wait uint64, wakeups, overruns uint64) Reader {
		return Reader{Name: "rt", Applied: Applied{Thread: Thread{CPUs: []int{1}}}, Wakeups: wakeups, Overruns: overruns,
			Counters: []Counter{{Name: "task-clock", Value: run}, {Name: "runqueue-wait", Value: wait}}}
	}
	fifo := func(r Reader, prio, cpu int) Reader {
		r.Applied.Policy, r.Applied.Priority, r.Applied.CPUs = "SCHED_FIFO", prio, []int{cpu}
		return r
	}
	starvedMark := Mark{Kind: MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 66ms (7.3% of the 900ms window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"}
	const window = 900_000_000
	for _, tc := range []struct {
		name  string
		t     Trial
		m     Mark
		cause Cause
		brief string
	}{
		// The reader ran 10% of its window and overran once: a hog's.
		{"starved by a thread on its CPU", Trial{DurationNs: window, Readers: []Reader{reader(90e6, 66e6, 90, 1)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		{"starved after running 60% of its window itself", Trial{DurationNs: window, Readers: []Reader{reader(540e6, 66e6, 90, 1)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		{"starved after overrunning 10 of 90 ticks", Trial{DurationNs: window, Readers: []Reader{reader(90e6, 66e6, 90, 10)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		// Starved by the run's own reader hog, FIFO 90 on the same CPU,
		// busy all its window: the workload's (a fresh process repeats it);
		// the same hog on another CPU, or below rt's priority, is not.
		{"starved by its own run's reader", Trial{DurationNs: window, Readers: []Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(Reader{Name: "hog", Wakeups: 3600, Overruns: 3000, Counters: []Counter{{Name: "task-clock", Value: 880e6}}}, 90, 1)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		{"its own run's busy reader on another CPU", Trial{DurationNs: window, Readers: []Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(Reader{Name: "hog", Wakeups: 3600, Overruns: 3000}, 90, 0)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		{"its own run's busy reader below it", Trial{DurationNs: window, Readers: []Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(Reader{Name: "hog", Wakeups: 3600, Overruns: 3000}, 70, 1)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		// Without counters the text is cut before its open parenthesis.
		{"starved, no counters", Trial{DurationNs: window, Readers: []Reader{{Name: "rt", Wakeups: 90}}}, starvedMark,
			CauseMachine, "reader rt runnable but off CPU 1 for 66ms (starved)"},
		{"empty, starved by the machine", Trial{DurationNs: window, Readers: []Reader{reader(1e6, 800e6, 0, 0)}, Marks: []Mark{starvedMark}},
			Mark{Kind: MarkEmpty, Reader: "rt", Text: "reader rt measured nothing: 0 wakeups"}, CauseMachine, "reader rt measured nothing: 0 wakeups (empty)"},
		{"empty of itself", Trial{DurationNs: window, Readers: []Reader{reader(1e6, 0, 0, 0)}},
			Mark{Kind: MarkEmpty, Reader: "rt", Text: "reader rt measured nothing: its 90 wakeups made no recv call"}, CauseWorkload,
			"reader rt measured nothing: its 90 wakeups made no recv call (empty)"},
		{"a clocksource switch", Trial{DurationNs: window, Kernel: &KernelWatch{Events: []KernelEvent{{Kind: ClocksourceSwitch, From: "tsc", To: "hpet"}}}},
			Mark{Kind: MarkInvalid, Text: "clocksource changed (tsc → hpet at 1.2 s)"}, CauseMachine, "clocksource changed (tsc → hpet at 1.2 s) (invalid)"},
		{"RT throttling brought on by a busy reader", Trial{DurationNs: window, Readers: []Reader{reader(880e6, 50e6, 90, 2)},
			Kernel: &KernelWatch{Events: []KernelEvent{{Kind: RTThrottled}}}}, Mark{Kind: MarkInvalid, Text: "RT throttling activated at 0.3 s"},
			CauseWorkload, "RT throttling activated at 0.3 s (invalid)"},
		{"RT throttling of another's doing", Trial{DurationNs: window, Readers: []Reader{reader(90e6, 50e6, 90, 1)},
			Kernel: &KernelWatch{Events: []KernelEvent{{Kind: RTThrottled}}}}, Mark{Kind: MarkInvalid, Text: "RT throttling activated at 0.3 s"},
			CauseMachine, "RT throttling activated at 0.3 s (invalid)"},
		{"a seccomp filter not as asked", Trial{DurationNs: window},
			Mark{Kind: MarkInvalid, Reader: "rt", Text: "reader rt: seccomp filter not as asked: 3 filters"}, CauseWorkload,
			"reader rt: seccomp filter not as asked: 3 filters (invalid)"},
		{"another rtload's reader on its CPU", Trial{DurationNs: window, Readers: []Reader{reader(90e6, 0, 90, 0)}},
			Mark{Kind: MarkShared, Reader: "rt", Text: "reader rt's CPU 1 shared with rtload pid 812's reader rtl-rd/rt (SCHED_FIFO 80)"}, CauseMachine,
			"reader rt's CPU 1 shared with rtload pid 812's reader rtl-rd/rt (SCHED_FIFO 80) (shared)"},
		{"traffic, the sender starved", Trial{DurationNs: window, Traffic: []Traffic{{Endpoint: "lo", Starved: "runnable but off CPU 0 for 40ms"}}},
			Mark{Kind: MarkTraffic, Endpoint: "lo", Text: "lo: send lag p99 58ms > max_send_lag 20ms, the sender runnable but off CPU 0 for 40ms"},
			CauseMachine, "lo: send lag p99 58ms > max_send_lag 20ms, the sender runnable but off CPU 0 for… (traffic)"}, // at most maxBrief runes
		{"traffic, the hypervisor's steal", Trial{DurationNs: window, StealNs: []int64{30e6}, Traffic: []Traffic{{Endpoint: "lo", Applied: &Applied{Thread: Thread{CPUs: []int{0}}}}}},
			Mark{Kind: MarkTraffic, Endpoint: "lo", Text: "lo: rate 40000 msg/s against 45000"}, CauseMachine, "lo: rate 40000 msg/s against 45000 (traffic)"},
		{"traffic, the sender too slow by itself", Trial{DurationNs: window, Traffic: []Traffic{{Endpoint: "lo"}}},
			Mark{Kind: MarkTraffic, Endpoint: "lo", Text: "lo: rate 40000 msg/s against 45000"}, CauseWorkload, "lo: rate 40000 msg/s against 45000 (traffic)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, why := tc.t.Cause(tc.m)
			if c != tc.cause || why == "" {
				t.Errorf("cause %q (%s), want %q", c, why, tc.cause)
			}
			if got := tc.t.Brief(tc.m); got != tc.brief {
				t.Errorf("brief %q, want %q", got, tc.brief)
			}
		})
	}
}

// TestDisturbances: one per disturbed process, the workload's winning
// over the machine's; WithoutProcesses leaves the rest as they were.
func TestDisturbances(t *testing.T) {
	hog := Mark{Kind: MarkInvalid, Text: "clocksource changed (tsc → hpet at 1.2 s)"}
	own := Mark{Kind: MarkInvalid, Reader: "rt", Text: "reader rt: seccomp filter not as asked"}
	s := &Summary{Trials: []Trial{
		{Index: 0, Process: 0}, {Index: 1, Process: 0, Marks: []Mark{{Kind: MarkRtload, Text: "rss past its bound"}}},
		{Index: 2, Process: 1, Marks: []Mark{hog}}, {Index: 3, Process: 1},
		{Index: 4, Process: 2, Marks: []Mark{hog}}, {Index: 5, Process: 2, Marks: []Mark{own}},
	}, Processes: []ProcessInfo{{Process: 0}, {Process: 1}, {Process: 2}}}
	want := []Disturbance{
		{Process: 1, Cause: CauseMachine, Why: "clocksource changed (tsc → hpet at 1.2 s) (invalid)"},
		{Process: 2, Cause: CauseWorkload, Why: "reader rt: seccomp filter not as asked (invalid)"},
	}
	if diff := cmp.Diff(want, s.Disturbances()); diff != "" {
		t.Errorf("disturbances (-want +got):\n%s", diff)
	}
	w := s.WithoutProcesses([]int{1})
	if len(w.Trials) != 4 || len(w.Processes) != 2 || w.Trials[2].Index != 4 || len(s.Trials) != 6 {
		t.Errorf("without process 1: %d trials, %d processes; the original %d trials", len(w.Trials), len(w.Processes), len(s.Trials))
	}
}
