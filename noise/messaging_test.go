package noise

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/rtload/rtload/internal/testutil"
)

// heapAndGoroutines reads the bytes allocated on the heap
// (MemStats.TotalAlloc) and the goroutines created since the program
// started (runtime/metrics); both cumulative, so GC does not hide them.
// ReadMemStats flushes every P's mcache first, so small allocations are
// all counted; runtime/metrics' /gc/heap/allocs:bytes counts them only
// once their span leaves the mcache, up to a span per size class late.
func heapAndGoroutines() (bytes, goroutines uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return ms.TotalAlloc, s[0].Value.Uint64()
}

// taskCount is the number of threads of this process (/proc/self/task).
func taskCount(t *testing.T) int {
	t.Helper()
	d, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(d)
}

// soakRoundBudget is what one messaging round may allocate on the heap
// (bytes, on average over the rounds) in a soak's messaging noise, whose
// GC is off. A round on the pool allocates nothing itself
// (workload.TestMessagingPoolAllocs); the budget is for the duty timer's
// goroutine (one a phase) and the spare OS threads the Go runtime may
// still add while it finds its plateau (≈ 7 KB of heap each, its m and g
// structs; it keeps idle ones, and their number is bounded by the
// scheduler, not by rounds). Rounds that each started and ended their 8
// OS threads allocated about 52 KB a round here.
const soakRoundBudget = 256

// spareThreads is how many threads the process may gain over the rounds:
// the runtime's spare threads above, not the workers'.
const spareThreads = 4

// TestMessagingSoakMemory runs the messaging kind shaped as soak-450's
// (1 group, 4 fds, 100 loops of 100 B), with a duty cycle so that rounds
// are both completed and cut short at a phase's end, for at least 300
// rounds with GC off, as in a soak. The heap may grow by at most
// soakRoundBudget per round, no goroutine may be created for a round (the
// duty timer's own, one per phase, is allowed), and the process may gain
// at most spareThreads threads.
func TestMessagingSoakMemory(t *testing.T) {
	testutil.Long(t, "a soak of messaging noise")
	const (
		fds      = 4
		loops    = 100
		perRound = 1 * fds * fds * loops // messages received in a complete round
		warmup   = 50
		rounds   = 300
		on, off  = 40 * time.Millisecond, 10 * time.Millisecond
	)
	n, err := New(Config{Kind: KindMessaging, Threads: 1, Groups: 1, FDs: fds, Loops: loops, Size: 100, On: on, Off: off})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	deadline := time.Now().Add(15 * time.Second)
	// waitFor waits until the received count (the slot itself: Report
	// allocates) reaches want, within the deadline, checking it on a
	// ticker made here, before the heap is measured.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	waitFor := func(want uint64) uint64 {
		for i := 0; ; i++ {
			got := n.slots[0].recv.Load()
			if got >= want {
				return got
			}
			if time.Now().After(deadline) || i > 10000 {
				t.Fatalf("%d messages received by the deadline, want %d (%d rounds)", got, want, want/perRound)
			}
			<-tick.C
		}
	}
	r0 := waitFor(warmup * perRound)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	heapAndGoroutines() // the first metrics.Read allocates its tables
	tasks0 := taskCount(t)
	b0, g0 := heapAndGoroutines()
	t0 := time.Now()
	r1 := waitFor(r0 + rounds*perRound)
	b1, g1 := heapAndGoroutines()
	took := time.Since(t0)
	tasks1 := taskCount(t)
	done := (r1 - r0) / perRound
	phases := uint64(took/(on+off)) + 2
	t.Logf("%d rounds (%d messages) in %v: heap +%d B (%d B per round; budget %d), %d goroutines created (%d phases), threads %d → %d",
		done, r1-r0, took.Round(time.Millisecond), b1-b0, (b1-b0)/done, soakRoundBudget, g1-g0, phases, tasks0, tasks1)
	if b1-b0 > soakRoundBudget*done {
		t.Errorf("heap grew %d B over %d rounds (%d B per round), budget %d B per round", b1-b0, done, (b1-b0)/done, soakRoundBudget)
	}
	if g1-g0 > phases {
		t.Errorf("%d goroutines created over %d rounds in about %d duty phases: rounds start threads", g1-g0, done, phases)
	}
	if tasks1 > tasks0+spareThreads {
		t.Errorf("threads %d → %d over %d rounds, want at most %d more", tasks0, tasks1, done, spareThreads)
	}
	if _, err := n.Stop(); err != nil {
		t.Error(err)
	}
}

// TestMessagingStartError: a pool worker that cannot be pinned (CPU 1000
// does not exist) fails Start, naming the worker; everything is closed
// (TestMain checks fds) and the Noise is stopped.
func TestMessagingStartError(t *testing.T) {
	n, err := New(params(Config{Kind: KindMessaging, Threads: 1, FDs: 1, CPUs: []int{0, 1000}}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	err = n.Start()
	if err == nil || !strings.Contains(err.Error(), "noise messaging thread 0: messaging worker 1 (group 0): sched_setaffinity(cpus [1000])") {
		t.Fatalf("Start error %v, want worker 1's sched_setaffinity error", err)
	}
	if s := n.State(); s != "stopped" {
		t.Errorf("State after failed Start = %q", s)
	}
	if w, err := n.Stop(); err != nil || w.Count != 0 {
		t.Errorf("Stop after failed Start: %+v, %v", w, err)
	}
}
