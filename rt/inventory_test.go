package rt_test

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/rt"
)

func TestThreads(t *testing.T) {
	cpus := allowedList(t)
	pin := cpus[len(cpus)-1]
	a := parked(t, rt.Sched{Name: rt.NoiseName("inv", 1), CPUs: []int{pin}, Policy: rt.Other, Nice: 3})
	threads, err := rt.Threads()
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) < 2 || !slices.IsSortedFunc(threads, func(x, y rt.ThreadInfo) int { return x.TID - y.TID }) {
		t.Fatalf("Threads() = %+v; want ≥ 2 threads sorted by TID", threads)
	}
	var got *rt.ThreadInfo
	for i := range threads {
		if threads[i].TID == a.TID {
			got = &threads[i]
		}
	}
	if got == nil {
		t.Fatalf("thread %d not listed in %+v", a.TID, threads)
	}
	want := rt.ThreadInfo{TID: a.TID, Name: "rtl-nz/inv.1", Policy: "SCHED_OTHER", Nice: 3, CPUs: []int{pin}}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("thread %d (-want +got):\n%s", a.TID, diff)
	}
	// Every entry agrees with what /proc says of the same thread (the main
	// thread is the process: TID = PID).
	main := false
	for _, ti := range threads {
		if ti.TID == os.Getpid() {
			main = true
		}
		if ti.Name == "" || ti.Policy == "" || len(ti.CPUs) == 0 {
			t.Errorf("incomplete entry %+v", ti)
		}
		// "": the thread exited since (a locked thread of an earlier test).
		if cpus := cpusAllowedList(ti.TID); cpus != "" && cpus != listString(ti.CPUs) {
			t.Errorf("thread %d: cpus %v, status says %s", ti.TID, ti.CPUs, cpus)
		}
	}
	if !main {
		t.Errorf("main thread %d not listed", os.Getpid())
	}
}

func TestThreadsFIFO(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	a := parked(t, rt.Sched{Name: rt.ReaderName("inv"), Policy: rt.FIFO, Priority: 7})
	threads, err := rt.Threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range threads {
		if ti.TID == a.TID {
			if ti.Policy != "SCHED_FIFO" || ti.Priority != 7 || ti.Name != "rtl-rd/inv" {
				t.Errorf("reader listed as %+v, want rtl-rd/inv SCHED_FIFO 7", ti)
			}
			return
		}
	}
	t.Errorf("reader %d not listed", a.TID)
}

func TestReaderCPUWarnings(t *testing.T) {
	readers := []rt.Applied{{Thread: results.Thread{TID: 10, CPUs: []int{1}}}, {Thread: results.Thread{TID: 11, CPUs: []int{3}}}}
	threads := []rt.ThreadInfo{
		{TID: 10, Name: "rtl-rd/a", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{1}},
		{TID: 11, Name: "rtl-rd/b", Policy: "SCHED_FIFO", Priority: 80, CPUs: []int{3}},
		{TID: 1, Name: "rtload", Policy: "SCHED_OTHER", CPUs: []int{0, 1, 2, 3}},
		{TID: 2, Name: "rtload", Policy: "SCHED_OTHER", CPUs: []int{0, 2}},
		{TID: 3, Name: "rtl-nz/spin.0", Policy: "SCHED_OTHER", CPUs: []int{1}},
	}
	want := []string{
		"thread rtload (tid 1, SCHED_OTHER) may run on reader CPUs 1,3 (mask 0-3)",
		"thread rtl-nz/spin.0 (tid 3, SCHED_OTHER) may run on reader CPU 1 (mask 1)",
	}
	if diff := cmp.Diff(want, rt.ReaderCPUWarnings(threads, readers)); diff != "" {
		t.Errorf("ReaderCPUWarnings (-want +got):\n%s", diff)
	}
	if w := rt.ReaderCPUWarnings(threads[1:2], readers); w != nil {
		t.Errorf("readers only: %q, want none", w)
	}
}
