package rt_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/rt"
)

// allowedList returns this process's allowed CPUs as seen by the kernel
// for the calling thread, ascending.
func allowedList(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// cpusAllowedList reads Cpus_allowed_list from /proc/self/task/<tid>/status
// ("" when the thread has exited).
func cpusAllowedList(tid int) string {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// taskMasks maps every thread of this process to its Cpus_allowed_list.
func taskMasks(t *testing.T) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l := cpusAllowedList(tid); l != "" {
			m[tid] = l
		}
	}
	return m
}

// eventually reports whether cond holds within 3 s (the watcher in these
// tests runs every 20 ms).
func eventually(cond func() bool) bool { return testutil.Eventually(3*time.Second, cond) }

// twoCPUs picks a housekeeping CPU and a reader CPU among the allowed ones.
func twoCPUs(t *testing.T) (hk, reader int, cpus []int) {
	t.Helper()
	testutil.Requires(t, testutil.CPUs(2))
	cpus = allowedList(t)
	return cpus[0], cpus[len(cpus)-1], cpus
}

func listString(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func TestHousekeepingConfines(t *testing.T) {
	hkCPU, rdCPU, cpus := twoCPUs(t)
	all := listString(cpus)
	hkList, rdList := strconv.Itoa(hkCPU), strconv.Itoa(rdCPU)
	// A reader running before confinement (exempt by TID), and a
	// non-exempt locked thread that must be confined.
	reader := parked(t, rt.Sched{Name: rt.ReaderName("hk"), CPUs: []int{rdCPU}})
	other := parked(t, rt.Sched{Name: "rtl-hk-other"})
	if got := cpusAllowedList(other.TID); got != all {
		t.Fatalf("before confinement thread %d has cpus %s, want %s", other.TID, got, all)
	}

	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: []int{hkCPU}, Exempt: []int{reader.TID}, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hk.Stop() }) // a no-op after the test's own Stop
	// Started after confinement, exempting themselves: a pinned sender and
	// an unpinned noise thread, which gets the whole mask back although it
	// may run on (or be created by) a confined thread.
	sender := parked(t, rt.Sched{Name: rt.SenderName("hk"), CPUs: []int{rdCPU}, Exempt: hk})
	noise := parked(t, rt.Sched{Name: rt.NoiseName("spin", 0), Exempt: hk})

	want := func(tid int) string {
		switch tid {
		case reader.TID, sender.TID:
			return rdList
		case noise.TID:
			return all
		}
		return hkList
	}
	var bad []string
	ok := eventually(func() bool {
		bad = bad[:0]
		for tid, got := range taskMasks(t) {
			if w := want(tid); got != w {
				bad = append(bad, fmt.Sprintf("tid %d (%s): cpus %s, want %s", tid, comm(t, tid), got, w))
			}
		}
		return len(bad) == 0
	})
	if !ok {
		t.Errorf("after confinement to cpu %d:\n\t%s", hkCPU, strings.Join(bad, "\n\t"))
	}
	// Read back with sched_getaffinity too, not only /proc.
	for _, tc := range []struct {
		tid  int
		want []int
	}{{reader.TID, []int{rdCPU}}, {sender.TID, []int{rdCPU}}, {other.TID, []int{hkCPU}}} {
		a, err := rt.ThreadSched(tc.tid)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.CPUs, tc.want) {
			t.Errorf("sched_getaffinity(%d) = %v, want %v", tc.tid, a.CPUs, tc.want)
		}
	}

	rep := hk.Stop()
	if rep.Threads < 1 || rep.Exempt != 3 || len(rep.Errors) != 0 || rep.Passes < 1 || !slices.Equal(rep.CPUs, []int{hkCPU}) {
		t.Errorf("report %+v: want ≥ 1 thread confined, 3 exempt, no errors, cpus [%d]", rep, hkCPU)
	}
	if rep.Restored < 1 {
		t.Errorf("Stop restored %d threads, want ≥ 1 (thread %d at least)", rep.Restored, other.TID)
	}
	// Stop gave the confined thread its mask back; exempt ones kept theirs.
	if got := cpusAllowedList(other.TID); got != all {
		t.Errorf("after Stop thread %d has cpus %s, want %s back", other.TID, got, all)
	}
	if got := cpusAllowedList(sender.TID); got != rdList {
		t.Errorf("after Stop exempt thread %d has cpus %s, want %s", sender.TID, got, rdList)
	}
	if again := hk.Stop(); again.Restored != rep.Restored {
		t.Errorf("second Stop report %+v differs from the first %+v", again, rep)
	}
	t.Log(rep)
}

func TestHousekeepingWatcherReconfines(t *testing.T) {
	hkCPU, _, allCPUs := twoCPUs(t)
	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: []int{hkCPU}, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer hk.Stop()
	// A thread that widens its own mask after confinement (as a library
	// or a thread created mid-pass could) is confined again by the
	// watcher within a few periods.
	a := parked(t, rt.Sched{Name: "rtl-hk-widen", CPUs: allCPUs})
	if !eventually(func() bool { return cpusAllowedList(a.TID) == strconv.Itoa(hkCPU) }) {
		t.Fatalf("thread %d still has cpus %s 3 s after widening; want %d", a.TID, cpusAllowedList(a.TID), hkCPU)
	}
	if rep := hk.Report(); rep.Reconfined+rep.Threads < 1 {
		t.Errorf("report %+v counts no confinement of the widened thread", rep)
	}
}

func TestHousekeepingNewThread(t *testing.T) {
	hkCPU, _, _ := twoCPUs(t)
	before := taskMasks(t)
	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: []int{hkCPU}, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer hk.Stop()
	fresh := parkUntilNew(t, before, "rtl-hk-new")
	if !eventually(func() bool { return cpusAllowedList(fresh.TID) == strconv.Itoa(hkCPU) }) {
		t.Errorf("new thread %d has cpus %s 3 s after it started; want %d", fresh.TID, cpusAllowedList(fresh.TID), hkCPU)
	}
	t.Logf("new thread %d confined; %v", fresh.TID, hk.Report())
}

func TestConfineHousekeepingErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []int
		want string
	}{
		{"no CPUs", nil, "housekeeping: no CPUs given"},
		{"out of range", []int{-1}, "housekeeping cpus -1: cpu -1 out of range"},
		{"not allowed here", []int{1023}, "housekeeping cpus 1023: cpu 1023 is not one this process may use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: tc.cpus})
			if err == nil {
				hk.Stop()
				t.Fatalf("ConfineHousekeeping(%v) succeeded", tc.cpus)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestHousekeepingCPUs(t *testing.T) {
	for _, tc := range []struct {
		name             string
		allowed, readers []int
		want             []int
		warning          string
	}{
		{"the CPUs no reader uses", []int{0, 1, 2, 3}, []int{1, 3}, []int{0, 2}, ""},
		{"readers outside the allowed set do not matter", []int{0, 1}, []int{5}, []int{0, 1}, ""},
		{"readers on every CPU: none, with a warning", []int{0, 1}, []int{1, 0}, nil,
			"housekeeping not confined: readers use every allowed CPU (0-1), so rtload's own threads may run on reader CPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warning := rt.HousekeepingCPUs(tc.allowed, tc.readers)
			if diff := cmp.Diff(tc.want, got); diff != "" || warning != tc.warning {
				t.Errorf("HousekeepingCPUs(%v, %v) = %v, %q (-want +got cpus:\n%s)\nwant warning %q", tc.allowed, tc.readers, got, warning, diff, tc.warning)
			}
		})
	}
}

// BenchmarkHousekeepingPass is the cost of one watcher pass over this
// process's threads (one /proc/self/task read, one sched_getaffinity per
// thread; nothing to change): what the watcher spends every Interval.
func BenchmarkHousekeepingPass(b *testing.B) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		b.Fatal(err)
	}
	first := 0
	for !set.IsSet(first) {
		first++
	}
	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: []int{first}, Interval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer hk.Stop()
	threads, _ := rt.Threads()
	b.ReportAllocs()
	for b.Loop() {
		hk.Pass()
	}
	b.ReportMetric(float64(len(threads)), "threads")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(len(threads), 1)), "ns/thread")
}

// TestHousekeepingStopRestoresLateThreads: a thread the runtime creates
// after the watcher's last pass, from a confined thread, is born with the
// housekeeping mask, and no pass ever saw it. Stop gives it the mask from
// before confinement too. (Missed, such threads stayed confined after
// Stop: under load, 2 of 60 runs of this package found one, as a thread
// of a later test born with cpus 0, or the test goroutine's own.) The
// watcher here never passes again after ConfineHousekeeping's own pass.
func TestHousekeepingStopRestoresLateThreads(t *testing.T) {
	hkCPU, _, cpus := twoCPUs(t)
	all, hkList := listString(cpus), strconv.Itoa(hkCPU)
	before := taskMasks(t)
	hk, err := rt.ConfineHousekeeping(rt.HousekeepingConfig{CPUs: []int{hkCPU}, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hk.Stop() }) // a no-op after the test's own Stop
	// The runtime clones the new thread from a confined one, so it is born
	// confined.
	fresh := parkUntilNew(t, before, "rtl-hk-late")
	if got := cpusAllowedList(fresh.TID); got != hkList {
		t.Skipf("new thread %d born with cpus %s, not the housekeeping mask %s: nothing to restore", fresh.TID, got, hkList)
	}
	rep := hk.Stop()
	if got := cpusAllowedList(fresh.TID); got != all {
		t.Errorf("after Stop (report %+v) new thread %d has cpus %s, want %s back", rep, fresh.TID, got, all)
	}
	// No thread keeps the housekeeping mask unless it had it before.
	var bad []string
	for tid, got := range taskMasks(t) {
		if got == hkList && before[tid] != hkList {
			bad = append(bad, fmt.Sprintf("tid %d (%s): cpus %s (before confinement: %q)", tid, comm(t, tid), got, before[tid]))
		}
	}
	if len(bad) != 0 {
		t.Errorf("after Stop (report %+v), still confined:\n\t%s", rep, strings.Join(bad, "\n\t"))
	}
}

// parkUntilNew parks locked threads (named prefix0, prefix1, …) until the
// runtime has to create a new one, a TID not in before (the threads at
// confinement), and returns it: at most 64, else the test fails.
func parkUntilNew(t *testing.T, before map[int]string, prefix string) rt.Applied {
	t.Helper()
	for i := 0; i < 64; i++ {
		a := parked(t, rt.Sched{Name: fmt.Sprintf("%s%d", prefix, i)})
		if _, old := before[a.TID]; !old {
			return a
		}
	}
	t.Fatal("64 locked threads started, none new")
	return rt.Applied{}
}
