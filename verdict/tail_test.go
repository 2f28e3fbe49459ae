package verdict

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/report"
	"github.com/rtload/rtload/results"
)

// The tail guard (judge.go), driven like TestCheckLooks by synthetic
// process summaries: each trial a 4 s window of 400 wakeups.

// withTail gives every trial of s a 4 s window and wakeup latencies: 400
// wakeups at 50 µs but for 8 of them at p99 (the top 2%, so that the
// 99th percentile is p99 while spikes(i) ≤ 4) and spikes(i) more, trial
// i's, at spikeNs; with ownNs > 0 the reader
// counts its own spikes over ownNs (readers[].threshold).
func withTail(s *results.Summary, p99 uint64, spikes func(i int) int, spikeNs uint64, ownNs int64) *results.Summary {
	for i := range s.Trials {
		t := &s.Trials[i]
		t.DurationNs = int64(4 * time.Second)
		h := record.NewHDR(int64(time.Second))
		k := spikes(i)
		for range 400 - 8 - k {
			h.Record(50_000)
		}
		for range 8 {
			h.Record(p99)
		}
		for range k {
			h.Record(spikeNs)
		}
		r := &t.Readers[0]
		r.Wakeups, r.WakeupLatency = 400, results.LatencyOf(h, true)
		if ownNs > 0 {
			r.ThresholdNs, r.Spikes = ownNs, uint64(k)
		}
	}
	return s
}

func every(n, k int) func(i int) int {
	return func(i int) int {
		if i%n == 0 {
			return k
		}
		return 0
	}
}

func TestCheckTail(t *testing.T) {
	// The baseline: p99 185 µs, a spike past 1 ms in one trial of four
	// (5 in 80 s).
	base := withTail(procRun(10, 1000, small, 0), 185_000, every(4, 1), 1_500_000, 0)
	quiet := withTail(procRun(10, 1000, small, 0), 185_000, every(4, 0), 1_500_000, 0)
	for _, tc := range []struct {
		name    string
		base    *results.Summary
		newRun  func(n int) *results.Summary
		verdict Verdict
		judged  string // the tail metric's Judged, its prefix
	}{
		// The A/A check that passed: p99 185 µs → 6304 µs, the
		// mean per-call cost the same. 8 wakeups a trial at 6.3 ms: 80 in
		// 40 s against 5 in 80 s at the first look.
		{"30x the wakeup p99", base, func(n int) *results.Summary {
			return withTail(procRun(n, 1000, small, 5), 6_304_000, func(int) int { return 8 }, 6_304_000, 0)
		}, Slower, JudgedSlower},
		// The same tail: clear; the mean decides.
		{"the same tail", base, func(n int) *results.Summary {
			return withTail(procRun(n, 1000, small, 5), 185_000, every(4, 1), 1_500_000, 0)
		}, NotSlower, JudgedTailClear},
		// No spike on either side: clear, never slower, no ratio to fail on.
		{"no spike on either side", quiet, func(n int) *results.Summary {
			return withTail(procRun(n, 1000, small, 5), 185_000, every(4, 0), 1_500_000, 0)
		}, NotSlower, JudgedTailClear + ": no spike on either side"},
		// A/A with one burst of 19 spikes in one trial (the test VM's
		// worst in 50 trials): 21 in 40 s against 5 in 80 s is ×8.4, its
		// Poisson interval's low end +130% (slower), but the counts'
		// overdispersion between processes (quasi-Poisson) widens it: not
		// slower.
		{"a burst in one trial", base, func(n int) *results.Summary {
			return withTail(procRun(n, 1000, small, 5), 185_000, func(i int) int {
				if i == 3 {
					return 19
				}
				return every(4, 1)(i)
			}, 1_500_000, 0)
		}, NotSlower, JudgedTailClear},
		// 2 spikes in every trial (20 in 40 s against 5 in 80 s: ×8, its
		// CI's low end past +100%).
		{"8 times the spikes", base, func(n int) *results.Summary {
			return withTail(procRun(n, 1000, small, 5), 185_000, func(int) int { return 2 }, 1_500_000, 0)
		}, Slower, JudgedSlower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkOf(t, tc.base, DefaultBudget, DefaultLooks)
			drive(c, tc.newRun, 20*time.Second, 20*time.Second, MaxProcesses)
			var tail *Metric
			for i, m := range c.Gate.Metrics {
				if m.Tail && m.Name == "spikes per hour (> 1ms)" {
					tail = &c.Gate.Metrics[i]
				}
			}
			if tail == nil || c.Sequential.Metrics != 3 {
				t.Fatalf("gate metrics %+v (%d judged): want the mean, the wakeup p99 and the spike rate past the default 1 ms", c.Gate.Metrics, c.Sequential.Metrics)
			}
			if c.Verdict != tc.verdict || !strings.HasPrefix(tail.Judged, tc.judged) {
				t.Errorf("verdict %q, tail %q (%s); want %q, tail %q", c.Verdict, tail.Judged, tail.MethodNote, tc.verdict, tc.judged)
			}
			if tc.verdict == Slower && (c.ExitCode != ExitSlower || !strings.Contains(c.Gate.Line("check", c.ExitCode), "SLOWER: proven slower beyond +100% in the tail")) {
				t.Errorf("exit %d, %s", c.ExitCode, c.Gate.Line("check", c.ExitCode))
			}
			var b bytes.Buffer
			if err := c.Report.Write(&b, "text", report.Quiet); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "spikes per hour (> 1ms)") || !strings.Contains(b.String(), "tail guard at +100%: "+tc.judged) {
				t.Errorf("closing block lacks the tail's line:\n%s", b.String())
			}
		})
	}
}

// TestCheckTailOwnThreshold: a reader with its own readers[].threshold
// is judged on its own spike count, not the default's.
func TestCheckTailOwnThreshold(t *testing.T) {
	base := withTail(procRun(10, 1000, small, 0), 185_000, every(4, 1), 300_000, 200_000)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	drive(c, func(n int) *results.Summary {
		return withTail(procRun(n, 1000, small, 5), 185_000, func(int) int { return 8 }, 300_000, 200_000)
	}, 20*time.Second, 20*time.Second, MaxProcesses)
	if c.Verdict != Slower || len(c.Gate.Slower) != 1 || c.Gate.Slower[0] != "spikes per hour (> 200µs) (/h) v/new" {
		t.Errorf("verdict %q, slower %q: want the reader's own spike rate slower", c.Verdict, c.Gate.Slower)
	}
}

// TestJudgeTailHigherNotDoubled: a spike rate proven higher but not
// beyond +100% holds the gate undecided, never a pass.
func TestJudgeTailHigherNotDoubled(t *testing.T) {
	// 400 spikes in 80 s against 300 in 40 s at the end's look: ×1.5,
	// CI [+21.8%, +84.4%] at 99.25%: higher, not doubled.
	base := withTail(procRun(10, 1000, small, 0), 185_000, func(int) int { return 20 }, 1_500_000, 0)
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	drive(c, func(n int) *results.Summary {
		return withTail(procRun(n, 1000, small, 5), 185_000, func(int) int { return 30 }, 1_500_000, 0)
	}, 20*time.Second, 20*time.Second, 5)
	var tail Metric
	for _, m := range c.Gate.Metrics {
		if m.Tail {
			tail = m
		}
	}
	if c.Verdict != Undecided || !strings.HasPrefix(tail.Judged, JudgedUndecided+": the spike rate is higher") {
		t.Errorf("verdict %q, tail %q %+v", c.Verdict, tail.Judged, tail.Interval)
	}
}

// TestCheckTailOwnStarvation (issue 31's tail line, measured: a SCHED_FIFO
// 90 spinner on the reader's CPU, 3 ms of every 30, as the scenario's own
// noise: every trial's reader starved by the run's own thread, the
// workload's own mark): the check said CANNOT JUDGE at its first look
// (exit 125, git bisect: skip), past the very commit that starves the
// reader. What the look proves slower (the spike rate) now stands: exit
// 1, the marks kept beside it; a run marked by its own work with nothing
// proven slower still cannot be judged, and never passes.
func TestCheckTailOwnStarvation(t *testing.T) {
	base := withTail(procRun(10, 1000, small, 0), 185_000, every(4, 1), 1_500_000, 0)
	ownStarved := func(spikes int, p99 uint64) func(n int) *results.Summary {
		return func(n int) *results.Summary {
			s := withTail(procRun(n, 1000, small, 5), p99, func(int) int { return spikes }, 3_000_000, 0)
			for i := range s.Trials {
				selfStarved(s, i)
			}
			return s
		}
	}
	c := checkOf(t, base, DefaultBudget, DefaultLooks)
	drive(c, ownStarved(40, 3_000_000), 20*time.Second, 20*time.Second, MaxProcesses)
	if c.Verdict != Slower || c.ExitCode != ExitSlower || len(c.Gate.Reasons) != 0 || len(c.Gate.Marked) == 0 || c.seq.Stop != StopDecided {
		t.Fatalf("verdict %v exit %d stop %q, reasons %q, marked %d", c.Verdict, c.ExitCode, c.seq.Stop, c.Gate.Reasons, len(c.Gate.Marked))
	}
	var b bytes.Buffer
	if err := c.Gate.Text(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "marked, the workload's own (never a pass; what it proves slower stands): new: trial 1 ") {
		t.Errorf("gate text:\n%s", b.String())
	}
	// Nothing proven slower (the same tail): still cannot judge.
	c = checkOf(t, base, DefaultBudget, DefaultLooks)
	drive(c, ownStarved(0, 185_000), 20*time.Second, 20*time.Second, MaxProcesses)
	if c.Verdict != CannotJudge || c.ExitCode != ExitCannotJudge || len(c.Gate.Marked) != 0 {
		t.Errorf("the same tail: verdict %v exit %d, marked %q", c.Verdict, c.ExitCode, c.Gate.Marked)
	}
	_ = report.Quiet
}

// TestCheckTailP99 (issue 31's tail line as measured: a scenario's own
// SCHED_FIFO 90 spinner on the reader's CPU, 3 ms of every 30, took the
// wakeup p99 from 66 µs to 682 µs with no wakeup past 1 ms): the wakeup
// p99 is judged by the tail guard at +100%. 10× is slower (exit 1)
// whether or not the run is marked as starved by its own noise; +62%,
// proven higher, not doubled, holds the gate undecided; the same p99 is
// clear, and the gate passes on the mean.
func TestCheckTailP99(t *testing.T) {
	base := withTail(procRun(10, 1000, small, 0), 66_000, every(4, 0), 1_500_000, 0)
	run := func(p99 uint64, starved bool) func(n int) *results.Summary {
		return func(n int) *results.Summary {
			s := withTail(procRun(n, 1000, small, 5), p99, every(4, 0), 1_500_000, 0)
			if p99 == 0 { // every other process at 66 µs, the rest at 900 µs (no spike past 1 ms)
				for i := range s.Trials {
					v := uint64(66_000)
					if s.Trials[i].Process%2 == 1 {
						v = 900_000
					}
					h := record.NewHDR(int64(10 * time.Second))
					for range 392 {
						h.Record(50_000)
					}
					for range 8 {
						h.Record(v)
					}
					s.Trials[i].Readers[0].WakeupLatency = results.LatencyOf(h, true)
				}
			}
			for i := range s.Trials {
				if starved {
					selfStarved(s, i)
				}
			}
			return s
		}
	}
	for _, tc := range []struct {
		name    string
		p99     uint64
		starved bool
		verdict Verdict
		judged  string
		procs   int // the run's processes at most (0: MaxProcesses)
	}{
		{"10x, own-starved", 682_000, true, Slower, JudgedSlower, 0},
		{"10x", 682_000, false, Slower, JudgedSlower, 0},
		{"+62%", 107_000, false, Undecided, JudgedUndecided + ": the wakeup latency p99 is higher", 0},
		{"the same", 66_000, false, NotSlower, JudgedTailClear, 0},
		// 13.6× in half the processes, the same in the others: measured
		// beyond +100% with an interval too wide to prove it (and
		// reaching 0): undecided, never a pass.
		// (5 processes: with 15 the interval excludes 0, "higher".)
		{"13.6x in half, wide", 0, false, Undecided, JudgedUndecided + ": the wakeup latency p99 measured +", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkOf(t, base, DefaultBudget, DefaultLooks)
			procs := MaxProcesses
			if tc.procs > 0 {
				procs = tc.procs
			}
			drive(c, run(tc.p99, tc.starved), 20*time.Second, 20*time.Second, procs)
			var p99 *Metric
			for i, m := range c.Gate.Metrics {
				if m.Tail && m.Name == WakeupP99 {
					p99 = &c.Gate.Metrics[i]
				}
			}
			if p99 == nil {
				t.Fatalf("no wakeup p99 among the gate's metrics: %+v", c.Gate.Metrics)
			}
			if c.Verdict != tc.verdict || !strings.HasPrefix(p99.Judged, tc.judged) {
				t.Errorf("verdict %q exit %d, p99 %q (%+v); want %q, %q", c.Verdict, c.ExitCode, p99.Judged, p99.Interval, tc.verdict, tc.judged)
			}
			if tc.verdict == Slower && (c.ExitCode != ExitSlower || !strings.Contains(c.Gate.Line("check", c.ExitCode), "wakeup latency p99")) {
				t.Errorf("exit %d, %s", c.ExitCode, c.Gate.Line("check", c.ExitCode))
			}
			if tc.starved && len(c.Gate.Marked) == 0 {
				t.Errorf("own-starved and slower: the marks are not kept beside the verdict")
			}
		})
	}
}
