package verdict

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

// TestReplacer: run --processes 6 runs a fresh process in the place of
// each the machine disturbed, at most 2 (a third), saying so once each.
func TestReplacer(t *testing.T) {
	var log bytes.Buffer
	r := Replacer(6, &log)
	var got []int
	for n := 1; n <= 8; n++ {
		got = append(got, r(disturbed(1000, 1, 3, 6)(n)))
	}
	if diff := cmp.Diff([]int{0, 1, 1, 2, 2, 2, 2, 2}, got); diff != "" {
		t.Errorf("replacements after each process (-want +got):\n%s", diff)
	}
	want := "process 2 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): a fresh process runs in its place (1 of at most 2)\n" +
		"process 4 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): a fresh process runs in its place (2 of at most 2)\n" +
		"process 7 disturbed by the machine (reader rt runnable but off CPU 1 for 66ms (starved)): not replaced: at most 2 of 6 may be (a third)\n"
	if diff := cmp.Diff(want, log.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	d := RunDropped(disturbed(1000, 1, 3)(8))
	if d == nil || len(d.Disturbed) != 2 || d.Processes != 8 || d.TooMany {
		t.Fatalf("dropped %+v", d)
	}
	// How many ran, which a check leaves out (numbered from 1) and why,
	// and over what the report's figures are: never mixed in silently.
	if l := d.RunLine(); l != "8 processes ran, 2 left out by a check (disturbed by the machine: processes 2, 4: reader rt runnable but off CPU 1 for 66ms (starved)): the figures of this report are over all 8; a check judges the other 6 (a fresh process ran in the place of each, at most a third)" {
		t.Errorf("line %q", l)
	}
	// Past a third a check leaves none out: it cannot judge the run.
	d = RunDropped(disturbed(1000, 0, 1, 3)(6))
	if d == nil || !d.TooMany {
		t.Fatalf("dropped %+v", d)
	}
	if l := d.RunLine(); l != "6 processes ran, 3 disturbed by the machine (processes 1, 2, 4: reader rt runnable but off CPU 1 for 66ms (starved)): more than a check may leave out (at most 2, a third): a check cannot judge this run; the figures of this report are over all 6" {
		t.Errorf("line %q", l)
	}
}

// TestCause: whose each judged mark is, from the trial's own facts.
func TestCause(t *testing.T) {
	reader := func(run, wait uint64, wakeups, overruns uint64) results.Reader {
		return results.Reader{Name: "rt", Applied: results.Applied{Thread: results.Thread{CPUs: []int{1}}}, Wakeups: wakeups, Overruns: overruns,
			Counters: []results.Counter{{Name: "task-clock", Value: run}, {Name: "runqueue-wait", Value: wait}}}
	}
	fifo := func(r results.Reader, prio, cpu int) results.Reader {
		r.Applied.Policy, r.Applied.Priority, r.Applied.CPUs = "SCHED_FIFO", prio, []int{cpu}
		return r
	}
	starvedMark := results.Mark{Kind: results.MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 66ms (7.3% of the 900ms window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there"}
	const window = 900_000_000
	for _, tc := range []struct {
		name  string
		t     results.Trial
		m     results.Mark
		cause Cause
		brief string
	}{
		// The reader ran 10% of its window and overran once: a hog's.
		{"starved by a thread on its CPU", results.Trial{DurationNs: window, Readers: []results.Reader{reader(90e6, 66e6, 90, 1)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		{"starved after running 60% of its window itself", results.Trial{DurationNs: window, Readers: []results.Reader{reader(540e6, 66e6, 90, 1)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		{"starved after overrunning 10 of 90 ticks", results.Trial{DurationNs: window, Readers: []results.Reader{reader(90e6, 66e6, 90, 10)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		// Starved by the run's own reader hog, FIFO 90 on the same CPU,
		// busy all its window: the workload's (a fresh process repeats it);
		// the same hog on another CPU, or below rt's priority, is not.
		{"starved by its own run's reader", results.Trial{DurationNs: window, Readers: []results.Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(results.Reader{Name: "hog", Wakeups: 3600, Overruns: 3000, Counters: []results.Counter{{Name: "task-clock", Value: 880e6}}}, 90, 1)}}, starvedMark,
			CauseWorkload, "reader rt off CPU 1 for 66ms (starved)"},
		{"its own run's busy reader on another CPU", results.Trial{DurationNs: window, Readers: []results.Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(results.Reader{Name: "hog", Wakeups: 3600, Overruns: 3000}, 90, 0)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		{"its own run's busy reader below it", results.Trial{DurationNs: window, Readers: []results.Reader{fifo(reader(90e6, 66e6, 90, 1), 80, 1),
			fifo(results.Reader{Name: "hog", Wakeups: 3600, Overruns: 3000}, 70, 1)}}, starvedMark,
			CauseMachine, "reader rt off CPU 1 for 66ms (starved)"},
		// Without counters the text is cut before its open parenthesis.
		{"starved, no counters", results.Trial{DurationNs: window, Readers: []results.Reader{{Name: "rt", Wakeups: 90}}}, starvedMark,
			CauseMachine, "reader rt runnable but off CPU 1 for 66ms (starved)"},
		{"empty, starved by the machine", results.Trial{DurationNs: window, Readers: []results.Reader{reader(1e6, 800e6, 0, 0)}, Marks: []results.Mark{starvedMark}},
			results.Mark{Kind: results.MarkEmpty, Reader: "rt", Text: "reader rt measured nothing: 0 wakeups"}, CauseMachine, "reader rt measured nothing: 0 wakeups (empty)"},
		{"empty of itself", results.Trial{DurationNs: window, Readers: []results.Reader{reader(1e6, 0, 0, 0)}},
			results.Mark{Kind: results.MarkEmpty, Reader: "rt", Text: "reader rt measured nothing: its 90 wakeups made no recv call"}, CauseWorkload,
			"reader rt measured nothing: its 90 wakeups made no recv call (empty)"},
		{"a clocksource switch", results.Trial{DurationNs: window, Kernel: &results.KernelWatch{Events: []results.KernelEvent{{Kind: results.ClocksourceSwitch, From: "tsc", To: "hpet"}}}},
			results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → hpet at 1.2 s)"}, CauseMachine, "clocksource changed (tsc → hpet at 1.2 s) (invalid)"},
		{"RT throttling brought on by a busy reader", results.Trial{DurationNs: window, Readers: []results.Reader{reader(880e6, 50e6, 90, 2)},
			Kernel: &results.KernelWatch{Events: []results.KernelEvent{{Kind: results.RTThrottled}}}}, results.Mark{Kind: results.MarkInvalid, Text: "RT throttling activated at 0.3 s"},
			CauseWorkload, "RT throttling activated at 0.3 s (invalid)"},
		{"RT throttling of another's doing", results.Trial{DurationNs: window, Readers: []results.Reader{reader(90e6, 50e6, 90, 1)},
			Kernel: &results.KernelWatch{Events: []results.KernelEvent{{Kind: results.RTThrottled}}}}, results.Mark{Kind: results.MarkInvalid, Text: "RT throttling activated at 0.3 s"},
			CauseMachine, "RT throttling activated at 0.3 s (invalid)"},
		{"a seccomp filter not as asked", results.Trial{DurationNs: window},
			results.Mark{Kind: results.MarkInvalid, Reader: "rt", Text: "reader rt: seccomp filter not as asked: 3 filters"}, CauseWorkload,
			"reader rt: seccomp filter not as asked: 3 filters (invalid)"},
		{"another rtload's reader on its CPU", results.Trial{DurationNs: window, Readers: []results.Reader{reader(90e6, 0, 90, 0)}},
			results.Mark{Kind: results.MarkShared, Reader: "rt", Text: "reader rt's CPU 1 shared with rtload pid 812's reader rtl-rd/rt (SCHED_FIFO 80)"}, CauseMachine,
			"reader rt's CPU 1 shared with rtload pid 812's reader rtl-rd/rt (SCHED_FIFO 80) (shared)"},
		{"traffic, the sender starved", results.Trial{DurationNs: window, Traffic: []results.Traffic{{Endpoint: "lo", Starved: "runnable but off CPU 0 for 40ms"}}},
			results.Mark{Kind: results.MarkTraffic, Endpoint: "lo", Text: "lo: send lag p99 58ms > max_send_lag 20ms, the sender runnable but off CPU 0 for 40ms"},
			CauseMachine, "lo: send lag p99 58ms > max_send_lag 20ms, the sender runnable but off CPU 0 for… (traffic)"}, // at most maxBrief runes
		{"traffic, the hypervisor's steal", results.Trial{DurationNs: window, StealNs: []int64{30e6}, Traffic: []results.Traffic{{Endpoint: "lo", Applied: &results.Applied{Thread: results.Thread{CPUs: []int{0}}}}}},
			results.Mark{Kind: results.MarkTraffic, Endpoint: "lo", Text: "lo: rate 40000 msg/s against 45000"}, CauseMachine, "lo: rate 40000 msg/s against 45000 (traffic)"},
		{"traffic, the sender too slow by itself", results.Trial{DurationNs: window, Traffic: []results.Traffic{{Endpoint: "lo"}}},
			results.Mark{Kind: results.MarkTraffic, Endpoint: "lo", Text: "lo: rate 40000 msg/s against 45000"}, CauseWorkload, "lo: rate 40000 msg/s against 45000 (traffic)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, why := markCause(&tc.t, tc.m, nil)
			if c != tc.cause || why == "" {
				t.Errorf("cause %q (%s), want %q", c, why, tc.cause)
			}
			if got := brief(&tc.t, tc.m); got != tc.brief {
				t.Errorf("brief %q, want %q", got, tc.brief)
			}
		})
	}
}

// TestDisturbances: one per disturbed process, the workload's winning
// over the machine's; withoutProcesses leaves the rest as they were.
func TestDisturbances(t *testing.T) {
	hog := results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → hpet at 1.2 s)"}
	own := results.Mark{Kind: results.MarkInvalid, Reader: "rt", Text: "reader rt: seccomp filter not as asked"}
	s := &results.Summary{Trials: []results.Trial{
		{Index: 0, Process: 0}, {Index: 1, Process: 0, Marks: []results.Mark{{Kind: results.MarkRtload, Text: "rss past its bound"}}},
		{Index: 2, Process: 1, Marks: []results.Mark{hog}}, {Index: 3, Process: 1},
		{Index: 4, Process: 2, Marks: []results.Mark{hog}}, {Index: 5, Process: 2, Marks: []results.Mark{own}},
	}, Processes: []results.ProcessInfo{{Process: 0}, {Process: 1}, {Process: 2}}}
	want := []Disturbance{
		{Process: 1, Cause: CauseMachine, Why: "clocksource changed (tsc → hpet at 1.2 s) (invalid)"},
		{Process: 2, Cause: CauseWorkload, Why: "reader rt: seccomp filter not as asked (invalid)"},
	}
	if diff := cmp.Diff(want, disturbances(s)); diff != "" {
		t.Errorf("disturbances (-want +got):\n%s", diff)
	}
	w := withoutProcesses(s, []int{1})
	if len(w.Trials) != 4 || len(w.Processes) != 2 || w.Trials[2].Index != 4 || len(s.Trials) != 6 {
		t.Errorf("without process 1: %d trials, %d processes; the original %d trials", len(w.Trials), len(w.Processes), len(s.Trials))
	}
}

// TestCauseOwnNoise: a reader starved by the scenario's own real-time
// noise (a spinner at or above its priority that may run on its CPU) is
// the workload's: a fresh process repeats it. Issue 31's tail check (a
// FIFO 90 spinner on CPU 1, 3 ms of every 30, as the scenario's noise)
// had every process "disturbed by the machine" and replaced. Below the
// reader's priority, or pinned elsewhere, it is not.
func TestCauseOwnNoise(t *testing.T) {
	tr := results.Trial{DurationNs: 900_000_000, Readers: []results.Reader{{Name: "rt",
		Applied: results.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}},
		Wakeups: 90, Overruns: 1,
		Counters: []results.Counter{{Name: "task-clock", Value: 90e6}, {Name: "runqueue-wait", Value: 66e6}}}}}
	m := results.Mark{Kind: results.MarkStarved, Reader: "rt", Text: "reader rt runnable but off CPU 1 for 66ms"}
	for _, tc := range []struct {
		name  string
		noise []rtNoise
		cause Cause
		why   string
	}{
		{"pinned to its CPU, above it", []rtNoise{{Index: 1, Policy: "fifo", Priority: 90, CPUs: []int{1}}}, CauseWorkload,
			"reader rt kept off its CPU by its own run's noise[1] (SCHED_FIFO 90 on CPU 1)"},
		{"unpinned, at its priority", []rtNoise{{Index: 0, Policy: "rr", Priority: 80}}, CauseWorkload,
			"reader rt kept off its CPU by its own run's noise[0] (SCHED_RR 80 on any CPU)"},
		{"below it, or elsewhere", []rtNoise{{Policy: "fifo", Priority: 70, CPUs: []int{1}}, {Policy: "fifo", Priority: 90, CPUs: []int{0}}}, CauseMachine, ""},
		{"no real-time noise", nil, CauseMachine, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, why := markCause(&tr, m, tc.noise)
			if c != tc.cause || (tc.why != "" && why != tc.why) {
				t.Errorf("cause %q (%s), want %q (%s)", c, why, tc.cause, tc.why)
			}
		})
	}
	s := &results.Summary{Spec: results.Spec(`{"noise":[{"kind":"spin","policy":"other"},{"kind":"spin","policy":"fifo","priority":90,"cpus":[1]}]}`)}
	if got := rtNoiseOf(s); len(got) != 1 || got[0].Index != 1 || got[0].Priority != 90 || len(got[0].CPUs) != 1 {
		t.Errorf("rtNoiseOf %+v", got)
	}
}
