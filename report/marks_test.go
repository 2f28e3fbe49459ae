package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
)

// markedBaseline is issue 34 row 13's run: 40 trials, interleaved pairs
// (a pair's marks are copied to both), 38 of them with reader rt starved
// by a foreign SCHED_FIFO 80 thread pinned to CPU 1 (off its CPU for a
// different time in each), one invalid; withCulprits keeps the culprit in
// Trial.Culprits, else only in the thread warnings (results written
// before culprits were kept).
func markedBaseline(withCulprits bool) *results.Summary {
	s := testutil.SeedSummary()
	seed := s.Trials
	s.Trials = nil
	hog := results.ForeignThread{PID: 4321, Comm: "hog", Thread: results.Thread{TID: 4321, Name: "hog", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	for i := range 40 {
		t := seed[i%2]
		t.Index, t.Round = i, i/2
		t.Marks = nil
		if i < 38 {
			ms := 60 + 7*(i/2) // one value per interleaved pair
			t.Marks = append(t.Marks, results.Mark{Kind: results.MarkStarved, Reader: "rt",
				Text: fmt.Sprintf("reader rt runnable but off CPU 1 for %dms (%.1f%% of the 2s window; schedstat run-queue wait): RT throttling or a thread at or above SCHED_FIFO 80 there", ms, float64(ms)/20)})
			if withCulprits {
				t.Culprits = []results.Culprit{{Reader: "rt", CPU: 1, ForeignThread: hog, Seen: 3, Scans: 3}}
			} else {
				t.ThreadWarnings = []string{"thread rtl-nz/spin.0 (tid 5001, SCHED_OTHER) may run on reader CPU 1 (mask 0-1)",
					"process 4321 (hog) thread 4321 (SCHED_FIFO 80) may run on reader CPU 1 (mask 1)"}
			}
		}
		if i == 39 {
			t.Marks = append(t.Marks, results.Mark{Kind: results.MarkInvalid, Text: "clocksource changed (tsc → kvm-clock at 1.2 s)"})
		}
		s.Trials = append(s.Trials, t)
	}
	return s
}

// TestMarksOneLinePerCause: a marked baseline's default output has one
// *** line per cause with how many trials it marked and which, the
// culprit named (comm, pid, policy, priority, CPU) from the trials'
// culprits, or from their thread warnings in older results; not one line
// per trial, twice for each interleaved pair (issue 34 row 13: 77 lines
// of 137).
func TestMarksOneLinePerCause(t *testing.T) {
	for _, withCulprits := range []bool{true, false} {
		t.Run(fmt.Sprintf("culprits kept %v", withCulprits), func(t *testing.T) {
			s := markedBaseline(withCulprits)
			var b bytes.Buffer
			if err := Brief(&b, s); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			var marks []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "*** ") {
					marks = append(marks, l)
				}
			}
			culprit := "culprit: process 4321 (hog) thread 4321 (hog) SCHED_FIFO 80 on CPUs 1, in 38 of them"
			if !withCulprits {
				culprit = "a likely culprit: process 4321 (hog) thread 4321 (SCHED_FIFO 80) may run on reader CPU 1 (mask 1), in 38 of them"
			}
			want := []string{
				"*** INVALID: trial 40 (recvmsg, round 20): clocksource changed (tsc → kvm-clock at 1.2 s); its verdicts are undecided",
				"*** READER STARVED in 38 of 40 trials (1–38): reader rt runnable but off CPU 1 for 60ms (3.0% of the 2s window; schedstat run-queue wait): " +
					"RT throttling or a thread at or above SCHED_FIFO 80 there (trial 1 (recvfrom, round 1); each trial's in summary.json); " + culprit,
			}
			if len(marks) != len(want) {
				t.Fatalf("%d *** lines, want %d:\n%s", len(marks), len(want), strings.Join(marks, "\n"))
			}
			for i := range want {
				if marks[i] != want[i] {
					t.Errorf("*** line %d:\n %q\nwant\n %q", i, marks[i], want[i])
				}
			}
			if n := strings.Count(out, "\n"); n > 60 {
				t.Errorf("brief of a marked baseline: %d lines", n)
			}
		})
	}
}
