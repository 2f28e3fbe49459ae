package engine

import (
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
)

// TestCulpritCPU: which foreign threads can take a reader's CPU. One row
// per shape of thread, each with why.
func TestCulpritCPU(t *testing.T) {
	fifo80 := rt.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	other := rt.Applied{Thread: results.Thread{Policy: "SCHED_OTHER", CPUs: []int{1}}}
	th := func(policy string, prio int, cpus []int, name string, rtload bool) rt.ForeignThread {
		return rt.ForeignThread{PID: 100, Comm: "x", Rtload: rtload, Thread: results.Thread{TID: 101, Name: name, Policy: policy, Priority: prio, CPUs: cpus}}
	}
	for _, tc := range []struct {
		name   string
		f      rt.ForeignThread
		reader rt.Applied
		want   bool
	}{
		{"another rtload's reader at the same priority, pinned there (issue 34 row 9)", th("SCHED_FIFO", 80, []int{1}, "rtl-rd/rt", true), fifo80, true},
		{"another rtload's reader below the reader's priority: still shares its ticks", th("SCHED_FIFO", 50, []int{1}, "rtl-rd/rt", true), fifo80, true},
		{"another rtload's reader on another CPU", th("SCHED_FIFO", 80, []int{0}, "rtl-rd/rt", true), fifo80, false},
		{"another rtload's sender below the reader's priority", th("SCHED_FIFO", 50, []int{0, 1}, "rtl-tx/socks", true), fifo80, false},
		{"a foreign FIFO 80 thread pinned to the CPU (issue 34 row 13's culprit)", th("SCHED_FIFO", 80, []int{1}, "hog", false), fifo80, true},
		{"a foreign FIFO 90 free to run on every CPU", th("SCHED_FIFO", 90, []int{0, 1}, "hog", false), fifo80, true},
		{"a foreign RR 79: below the reader", th("SCHED_RR", 79, []int{1}, "hog", false), fifo80, false},
		{"SCHED_DEADLINE: above every FIFO thread", th("SCHED_DEADLINE", 0, []int{0, 1}, "dl", false), fifo80, true},
		{"any real-time thread outranks a SCHED_OTHER (degraded) reader", th("SCHED_FIFO", 1, []int{1}, "low", false), other, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu, ok := culpritCPU(tc.f, tc.reader)
			if ok != tc.want || ok && cpu != 1 {
				t.Errorf("culpritCPU = %d, %v; want %v on CPU 1", cpu, ok, tc.want)
			}
		})
	}
}

// TestSharedWatchMarks: every scan's culprits are kept once each, with
// when they were seen, and each reader that had any gets one MarkShared
// naming them: comm, pid, thread, policy, priority, CPU.
func TestSharedWatchMarks(t *testing.T) {
	w := newSharedWatch([]sharedReader{
		{"rt", rt.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}},
		{"rt0", rt.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{0}}}},
	}, 1e9)
	other := rt.ForeignThread{PID: 4321, Comm: "rtload", Rtload: true, Thread: results.Thread{TID: 4330, Name: "rtl-rd/rt", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	hog := rt.ForeignThread{PID: 77, Comm: "hog", Thread: results.Thread{TID: 77, Name: "hog", Policy: "SCHED_FIFO", Priority: 90, CPUs: []int{1}}}
	w.observe([]rt.ForeignThread{other}, 1e9-1e8)
	w.observe([]rt.ForeignThread{other, hog}, 2e9)
	w.observe(nil, 3e9)
	culprits, marks := w.result()
	if len(culprits) != 2 || culprits[0].PID != 4321 || culprits[0].Seen != 2 || culprits[0].Scans != 3 || culprits[0].FirstNs != -1e8 || culprits[1].PID != 77 || culprits[1].Seen != 1 {
		t.Fatalf("culprits %+v", culprits)
	}
	if len(marks) != 1 || marks[0].Kind != results.MarkShared || marks[0].Reader != "rt" {
		t.Fatalf("marks %+v, want one MarkShared for reader rt", marks)
	}
	want := "reader rt's CPU 1 shared with another rtload, process 4321 (rtload) thread 4330 (rtl-rd/rt) SCHED_FIFO 80 on CPUs 1, seen in 2 of 3 scans (-0.1–1.0 s); " +
		"process 77 (hog) thread 77 (hog) SCHED_FIFO 90 on CPUs 1, seen in 1 of 3 scans (1.0–1.0 s)"
	if marks[0].Text != want {
		t.Errorf("mark\n %q\nwant\n %q", marks[0].Text, want)
	}
}

// TestDisturbanceLine: preflight's warning names the thread and the fix.
func TestDisturbanceLine(t *testing.T) {
	r := rt.Applied{Thread: results.Thread{Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	hog := rt.ForeignThread{PID: 77, Comm: "hog", Thread: results.Thread{TID: 78, Name: "hog", Policy: "SCHED_FIFO", Priority: 90, CPUs: []int{0, 1}}}
	got := disturbanceLine("rt", r, hog)
	for _, want := range []string{"reader rt (SCHED_FIFO 80 on CPU 1) will share its CPU with process 77 (hog) thread 78 (hog) SCHED_FIFO 90 on CPUs 0-1",
		"chrt -p -f 79 78", "keep it off CPU 1 (taskset -p -c 0 78)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	other := rt.ForeignThread{PID: 4321, Comm: "rtload", Rtload: true, Thread: results.Thread{TID: 4330, Name: "rtl-rd/rt", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}}}
	if got := disturbanceLine("rt", r, other); !strings.Contains(got, "another rtload, process 4321 (rtload)") || !strings.Contains(got, "wait for that run to end") {
		t.Errorf("another rtload: %q", got)
	}
}
